#!/usr/bin/env python3
"""Fleet scale beyond one machine: a PySpark job that exports traces in parallel, each task
running the `fusionscope` binary on its traces, then runs fusionscope's canned reports, the same
SQL text `fusionscope fleet` runs (src/fleet/sql/), as Spark SQL over the exported Parquet.

    scripts/fleet-spark.py --fusionscope BIN --out DIR [--job NAME] [--report NAME …]
                           [--json FILE] TRACE… | --list FILE

On a cluster, run it with spark-submit: every executor needs the binary at the same path and
the traces and DIR on storage they all reach (a shared file system). In local mode (no master
given) it runs on this machine's cores. --json writes every report's columns and rows as
`fusionscope fleet --json` prints them, for comparison (tests/fleet/spark_matches_datafusion.py).
"""

import argparse
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[1]
SQL = ROOT / "src" / "fleet" / "sql"
TABLES = ["traces", "kernels", "steps", "ops", "fusion_groups", "opportunities", "collectives"]


def export_partition(binary, out, job):
    """The task: `fusionscope export` on this partition's traces (one process per partition)."""

    def run(paths):
        paths = list(paths)
        if not paths:
            return iter([])
        args = [binary, "export", "-o", out] + (["--job", job] if job else []) + paths
        done = subprocess.run(args, capture_output=True, text=True)
        return iter([(len(paths), done.returncode, done.stderr.strip().splitlines()[-1:] or [""])])

    return run


def plain(value):
    """A Spark value as JSON writes it: Parquet's unsigned 64-bit integers come back as decimals."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fusionscope", required=True, help="the fusionscope binary, at this path on every executor")
    parser.add_argument("--out", required=True, help="export folder (DIR/<table>/job=<job>/rank=<rank>/<trace>.parquet)")
    parser.add_argument("--job", help="the job the traces belong to (default: each trace's folder name)")
    parser.add_argument("--report", action="append", help="canned reports to run (default: all but regressions)")
    parser.add_argument("--json", help="write the reports' results here")
    parser.add_argument("--list", help="a file of trace paths, one per line")
    parser.add_argument("--partitions", type=int, help="export tasks (default: one per trace, at most 4,096)")
    parser.add_argument("traces", nargs="*")
    args = parser.parse_args()
    traces = list(args.traces)
    if args.list:
        traces += [l.strip() for l in Path(args.list).read_text().splitlines() if l.strip()]
    if not traces:
        parser.error("no traces: give them as arguments or with --list")
    traces = [str(Path(t).resolve()) if Path(t).exists() else t for t in traces]
    out = str(Path(args.out).resolve())

    spark = SparkSession.builder.appName("fusionscope fleet").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    partitions = args.partitions or min(len(traces), 4096)
    rdd = spark.sparkContext.parallelize(traces, partitions)
    results = rdd.mapPartitions(export_partition(args.fusionscope, out, args.job)).collect()
    failed = [r for r in results if r[1] != 0]
    exported = sum(r[0] for r in results)
    print(f"fleet-spark: {exported} traces in {len(results)} export tasks, {len(failed)} tasks failed", file=sys.stderr)
    for f in failed:
        print(f"fleet-spark: a task failed: {f[2][0]}", file=sys.stderr)

    for table in TABLES:
        folder = Path(out) / table
        if folder.is_dir() and any(folder.rglob("*.parquet")):
            # The files' own columns, as DataFusion reads them: partition discovery would type
            # a job named by digits alone as a number.
            spark.read.option("recursiveFileLookup", "true").parquet(str(folder)).createOrReplaceTempView(table)
    reports = args.report or [p.stem for p in sorted(SQL.glob("*.sql")) if p.stem != "regressions"]
    results = {}
    for name in reports:
        rows = spark.sql((SQL / f"{name}.sql").read_text())
        columns = rows.columns
        results[name] = {"columns": columns, "rows": [[plain(v) for v in r] for r in rows.collect()]}
        print(f"fleet-spark: {name}: {len(results[name]['rows'])} rows", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    else:
        for name, r in results.items():
            print(f"\n{name}\n" + "\t".join(r["columns"]))
            for row in r["rows"]:
                print("\t".join("" if v is None else str(v) for v in row))
    spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
