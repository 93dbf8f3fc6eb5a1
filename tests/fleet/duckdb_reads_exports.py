"""A second reader of `fusionscope export`: DuckDB reads the Parquet tables of the shared traces
and must find what `trace --json` and `ranks --json` report (kernel counts, GPU time per
category, collectives per rank), and each file in its job's and rank's partition. Run by scripts/test with the DuckDB that scripts/setup installs
into target/py:  target/py/bin/python tests/fleet/duckdb_reads_exports.py FUSIONSCOPE_BIN
"""

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from shared_traces import BERT, RANKS

TRACES = BERT + RANKS


def cli(binary, *args):
    out = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"fusionscope {' '.join(map(str, args))} failed: {out.stderr}")
    return out.stdout


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def main():
    binary = sys.argv[1]
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "facts"
        cli(binary, "export", "-o", out, *TRACES)
        db = duckdb.connect()
        table = lambda name: f"read_parquet('{out}/{name}/**/*.parquet')"
        for path in TRACES:
            want = json.loads(cli(binary, "trace", path, "--json"))
            platform = want["platforms"][0]
            (kernels, gpu_time), = db.execute(
                f"SELECT kernels, gpu_time_us FROM {table('traces')} WHERE trace = ?", [str(path)]
            ).fetchall()
            if kernels != platform["kernels"] or not close(gpu_time, platform["gpu_time_us"]):
                failures.append(f"{path.name}: traces row {kernels}, {gpu_time} vs {platform['kernels']}, {platform['gpu_time_us']}")
            rows = db.execute(
                f"SELECT category, COUNT(*), SUM(duration_us) FROM {table('kernels')} WHERE trace = ? GROUP BY category",
                [str(path)],
            ).fetchall()
            got = {c: (n, us) for c, n, us in rows}
            for c in want["categories"]:
                n, us = got.pop(c["category"], (None, None))
                checked += 1
                if n != c["trace"]["count"] or not close(us, c["trace"]["time_us"]):
                    failures.append(f"{path.name}: {c['category']}: {n}, {us} vs {c['trace']['count']}, {c['trace']['time_us']}")
            if got:
                failures.append(f"{path.name}: categories the trace does not report: {sorted(got)}")
        # Hive's partitions: the folder names give every table its trace's job and rank (a rank
        # the trace does not record is the null partition), as the trace's row says.
        (differ, kernels, partitions), = db.execute(
            f"SELECT COUNT(*) FILTER (WHERE k.job IS DISTINCT FROM t.job OR k.rank IS DISTINCT FROM t.rank), "
            f"COUNT(*), COUNT(DISTINCT (k.job, k.rank)) FROM {table('kernels')} k JOIN {table('traces')} t USING (trace)"
        ).fetchall()
        checked += 1
        if differ or not kernels or partitions != len(TRACES):
            failures.append(f"partitions: {differ} of {kernels} kernels in another job or rank than their trace's, {partitions} partitions")
        ranks = json.loads(cli(binary, "ranks", "--json", *RANKS))
        for r in ranks["ranks"]:
            (n,), = db.execute(
                f"SELECT COUNT(*) FROM {table('collectives')} WHERE rank = ?", [r["rank"]]
            ).fetchall()
            checked += 1
            if n != r["collectives"]:
                failures.append(f"rank {r['rank']}: {n} collectives vs {r['collectives']}")
    print(f"DuckDB {duckdb.__version__} read the export of {len(TRACES)} traces: {checked} figures compared, {len(failures)} differ")
    for f in failures:
        print("  " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
