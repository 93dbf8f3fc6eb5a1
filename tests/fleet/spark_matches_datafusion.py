"""Spark SQL and DataFusion give the same reports: scripts/fleet-spark.py exports the shared
traces in Spark's local mode (each task running the fusionscope binary) and runs the canned
reports as Spark SQL; `fusionscope fleet --report` runs the same SQL with DataFusion over the same
files; every report must agree row for row. Run by scripts/test with the PySpark that scripts/setup
installs into target/py, and Java 17 or later:

    python tests/fleet/spark_matches_datafusion.py FUSIONSCOPE_BIN
"""

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from shared_traces import BERT, QWEN, RANKS

ROOT = Path(__file__).resolve().parents[2]
TRACES = BERT + QWEN + RANKS


def same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def main():
    binary = str(Path(sys.argv[1]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        out, spark_json = Path(tmp) / "facts", Path(tmp) / "spark.json"
        done = subprocess.run(
            [sys.executable, ROOT / "scripts/fleet-spark.py", "--fusionscope", binary, "--out", out,
             "--json", spark_json, *TRACES],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            sys.exit(f"fleet-spark.py failed: {done.stderr[-2000:]}")
        spark = json.loads(spark_json.read_text())
        differences, rows = [], 0
        for name, got in spark.items():
            fleet = subprocess.run([binary, "fleet", out, "--report", name, "--json"], capture_output=True, text=True)
            if fleet.returncode != 0:
                sys.exit(f"fusionscope fleet --report {name} failed: {fleet.stderr}")
            want = json.loads(fleet.stdout)
            if got["columns"] != want["columns"]:
                differences.append(f"{name}: columns {got['columns']} vs {want['columns']}")
            if len(got["rows"]) != len(want["rows"]):
                differences.append(f"{name}: {len(got['rows'])} rows vs {len(want['rows'])}")
            for i, (g, w) in enumerate(zip(got["rows"], want["rows"])):
                rows += 1
                if len(g) != len(w) or not all(same(x, y) for x, y in zip(g, w)):
                    differences.append(f"{name} row {i}: Spark {g} vs DataFusion {w}")
    print(f"Spark SQL and DataFusion: {len(spark)} reports, {rows} rows compared, {len(differences)} differ")
    for d in differences[:20]:
        print("  " + d)
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
