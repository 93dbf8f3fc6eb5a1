//! `fusionscope export` and `fusionscope fleet` as a user runs them, on the shared traces: the
//! exported tables agree with `trace --json`, read back by DataFusion; a report is its SQL; bad
//! input is named; a second export is byte-identical.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{data, json, run, temp_dir};

const TRACES: [&str; 4] = [
    "traces/nvidia/hf_bert-small_eager_h100.json.gz",
    "traces/amd/hf_bert-small_eager_mi300x.json.gz",
    "multirank/hta_sampled_128rank_rank0.json.gz",
    "multirank/hta_sampled_128rank_rank1.json.gz",
];

/// Exports `TRACES` (and `extra`) into `dir`; returns stderr.
fn export(dir: &Path, extra: &[String]) -> String {
    let files: Vec<String> = TRACES.iter().map(|t| data(t)).chain(extra.iter().cloned()).collect();
    let mut args = vec!["export", "-o", dir.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    err
}

fn sql(dir: &Path, query: &str) -> Value {
    json(&["fleet", dir.to_str().unwrap(), "--sql", query, "--json"])
}

/// A result's rows as maps of column → value.
fn rows(result: &Value) -> Vec<BTreeMap<String, Value>> {
    let columns: Vec<String> =
        result["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().into()).collect();
    let rows = result["rows"].as_array().unwrap();
    rows.iter().map(|r| columns.iter().cloned().zip(r.as_array().unwrap().iter().cloned()).collect()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn exported_tables_agree_with_trace_json_and_a_report_is_its_sql() {
    let dir = temp_dir("fleet-export");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"traceEvents\": [").unwrap();
    let out = dir.join("export");
    let err = export(&out, &[broken.to_str().unwrap().to_string()]);
    assert!(err.contains("4 traces exported") && err.contains("1 failed to read"), "{err}");

    let traces = rows(&sql(&out, "SELECT * FROM traces ORDER BY trace"));
    assert_eq!(traces.len(), 5);
    for t in TRACES {
        let path = data(t);
        let want = json(&["trace", &path, "--json"]);
        let platform = &want["platforms"][0];
        let row = traces.iter().find(|r| r["trace"] == path.as_str()).unwrap_or_else(|| panic!("{t}"));
        assert_eq!(row["kernels"], platform["kernels"], "{t}");
        assert!(close(row["gpu_time_us"].as_f64().unwrap(), platform["gpu_time_us"].as_f64().unwrap()), "{t}");
        assert_eq!(row["error"], Value::Null, "{t}");
        for (column, key) in [("idle_host_wait_us", "host_wait_us"), ("idle_launch_gap_us", "kernel_wait_us")] {
            let (got, want) = (row[column].as_f64().unwrap(), want["waits"][key].as_f64().unwrap());
            assert!(close(got, want), "{t}: {column} {got} vs {want}");
        }
        // Kernel time per category, from the kernels table, is the trace's.
        let by_category = rows(&sql(
            &out,
            &format!("SELECT category, COUNT(*) AS n, SUM(duration_us) AS us FROM kernels WHERE trace = '{path}' GROUP BY category"),
        ));
        let categories = want["categories"].as_array().unwrap();
        assert_eq!(by_category.len(), categories.len(), "{t}");
        for c in categories {
            let row = by_category.iter().find(|r| r["category"] == c["category"]).unwrap();
            assert_eq!(row["n"], c["trace"]["count"], "{t}");
            assert!(close(row["us"].as_f64().unwrap(), c["trace"]["time_us"].as_f64().unwrap()), "{t} {c}");
        }
        // The fusion groups and the op table, row for row.
        let groups = rows(&sql(&out, &format!("SELECT COUNT(*) AS n FROM fusion_groups WHERE trace = '{path}'")));
        assert_eq!(groups[0]["n"].as_i64().unwrap() as usize, want["fusion"]["groups"].as_array().unwrap().len());
        let ops = rows(&sql(&out, &format!("SELECT COUNT(*) AS n FROM ops WHERE trace = '{path}'")));
        assert_eq!(ops[0]["n"].as_i64().unwrap() as usize, want["ops"].as_array().unwrap().len());
    }
    // The broken trace is listed with its error, named.
    let failed = traces.iter().find(|r| r["error"] != Value::Null).unwrap();
    assert!(failed["error"].as_str().unwrap().contains("broken.json"), "{failed:?}");
    // The two ranks of the 128-rank job are in their job, with their ranks.
    let ranks = rows(&sql(&out, "SELECT job, rank, world_size FROM traces WHERE rank IS NOT NULL ORDER BY rank"));
    assert_eq!(ranks.len(), 2, "{ranks:?}");
    assert_eq!((ranks[0]["job"].as_str(), ranks[0]["world_size"].as_i64()), (Some("multirank"), Some(128)));

    // A canned report is its SQL, row for row.
    for (report, file) in [("categories", "categories"), ("fusions", "fusions"), ("stragglers", "stragglers")] {
        let text = std::fs::read_to_string(format!("{}/src/fleet/sql/{file}.sql", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let canned = json(&["fleet", out.to_str().unwrap(), "--report", report, "--json"]);
        assert_eq!(canned, sql(&out, &text), "{report}");
        assert!(!canned["rows"].as_array().unwrap().is_empty(), "{report}");
    }
    // A query says what it reads, and what it read.
    let (code, _, err) = run(&["fleet", out.to_str().unwrap(), "--report", "categories"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(" Parquet files (") && err.contains(" rows, ") && err.contains(" of Parquet read, in "),
        "{err}"
    );
    assert!(!err.contains(" 0 B of Parquet read"), "{err}");
    // Against a baseline of the same traces nothing changed.
    let regressions = json(&[
        "fleet",
        out.to_str().unwrap(),
        "--baseline",
        out.to_str().unwrap(),
        "--report",
        "regressions",
        "--json",
    ]);
    let changes = rows(&regressions);
    assert!(!changes.is_empty() && changes.iter().all(|r| r["change_us_per_trace"] == 0.0), "{changes:?}");
}

/// A report is the same on one thread as on eight, run after run: DataFusion adds up the
/// partitions of a sum in whatever order its threads finish, and a sum of reals changes in its
/// last bits with the order (one category's mean here sits on a rounding boundary, 52,230.9705
/// µs a trace); the reports sum whole nanoseconds, which add up the same in any order.
#[test]
fn every_report_is_the_same_on_any_number_of_threads() {
    let dir = temp_dir("fleet-threads");
    let out = dir.join("export");
    export(&out, &[]);
    let out = out.to_str().unwrap();
    for report in ["categories", "kernels", "fusions", "devices", "stragglers", "regressions"] {
        let on = |threads: &str| {
            let mut args = vec!["fleet", out, "--report", report, "--json", "--threads", threads];
            if report == "regressions" {
                args.extend(["--baseline", out]);
            }
            json(&args)
        };
        let one = on("1");
        assert!(!rows(&one).is_empty(), "{report}");
        for run in 0..4 {
            assert_eq!(on("8"), one, "{report}, run {run} on 8 threads");
        }
        if report == "regressions" {
            // The same set against itself: nothing changed, to the bit.
            assert!(rows(&one).iter().all(|r| r["change_us_per_trace"] == 0.0), "{one}");
        }
    }
}

/// Every Parquet file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_second_export_is_byte_identical_and_partitioned_by_job_and_rank() {
    let dir = temp_dir("fleet-twice");
    let (a, b) = (dir.join("a"), dir.join("b"));
    export(&a, &[]);
    export(&b, &[]);
    let files = files_under(&a);
    assert_eq!(files, files_under(&b));
    assert_eq!(files.len(), 7 * TRACES.len());
    for f in &files {
        assert!(std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(), "{}", f.display());
    }
    // Hive's layout: a rank's files in its job's and rank's folders; a trace without a rank in
    // the null partition.
    let file = |table: &str, job: &str, rank: &str, trace: &str| {
        Path::new(table).join(format!("job={job}")).join(format!("rank={rank}")).join(format!("{trace}.parquet"))
    };
    let rank1 = files.iter().find(|f| f.to_string_lossy().contains("128rank_rank1")).unwrap().clone();
    let stem = rank1.file_stem().unwrap().to_str().unwrap();
    assert!(files.contains(&file("kernels", "multirank", "1", stem)), "{files:?}");
    assert!(files.contains(&file("collectives", "multirank", "1", stem)), "{files:?}");
    let bert = files.iter().find(|f| f.starts_with("steps") && f.to_string_lossy().contains("h100")).unwrap();
    assert!(bert.starts_with("steps/job=nvidia/rank=__HIVE_DEFAULT_PARTITION__"), "{}", bert.display());
}

/// `kernels.step`, `kernels.layer` and `kernels.fusion_group` against `trace --json`'s
/// structure and fusion groups: on SGLang's prefill (one step of 36 layers, kernels on a second
/// stream) and a compiled training run (five profiler steps).
#[test]
fn each_kernel_has_its_step_layer_and_fusion_group() {
    let dir = temp_dir("fleet-places");
    let out = dir.join("export");
    let paths = [
        data("traces/amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz"),
        data("traces/nvidia/hta_a100_compiled_rank0.json.gz"),
    ];
    let (code, _, err) = run(&["export", "-o", out.to_str().unwrap(), &paths[0], &paths[1]]);
    assert_eq!(code, 0, "{err}");
    let (mut layers, mut steps_seen) = (0, 0);
    for path in &paths {
        let want = json(&["trace", path, "--json"]);
        let s = &want["structure"];
        let want_steps = s["steps"].as_array().unwrap();
        let steps = rows(&sql(&out, &format!("SELECT * FROM steps WHERE trace = '{path}' ORDER BY step")));
        assert_eq!(steps.len(), want_steps.len(), "{path}");
        let per_step = rows(&sql(
            &out,
            &format!(
                "SELECT step, COUNT(*) AS n, COUNT(DISTINCT layer) AS layers, MAX(layer) AS last FROM kernels \
                 WHERE trace = '{path}' AND device = {} AND stream = {} AND step IS NOT NULL \
                 GROUP BY step ORDER BY step",
                s["device"], s["stream"]
            ),
        ));
        assert_eq!(per_step.len(), want_steps.len(), "{path}");
        for (i, ((row, k), w)) in steps.iter().zip(&per_step).zip(want_steps).enumerate() {
            let step = Some(i as u64);
            assert_eq!((row["step"].as_u64(), &row["kernels"], &row["layers"]), (step, &w["kernels"], &w["layers"]));
            assert_eq!(row["phase"], s["phases"][w["phase"].as_u64().unwrap() as usize]["label"], "{path}");
            assert_eq!((k["step"].as_u64(), &k["n"], &k["layers"]), (step, &w["kernels"], &w["layers"]), "{path}");
            if let Some(n) = w["layers"].as_u64().filter(|&n| n > 0) {
                assert_eq!(k["last"].as_u64(), Some(n - 1), "{path} step {i}");
            }
            layers += w["layers"].as_u64().unwrap();
            steps_seen += 1;
        }
        // Every kernel is in one fusion group, and each group's calls and time are its kernels'.
        let groups = rows(&sql(
            &out,
            &format!(
                "SELECT g.fusion_group, g.calls, g.time_us, COUNT(k.start_us) AS n, SUM(k.duration_us) AS us \
                 FROM fusion_groups g LEFT JOIN kernels k ON k.trace = g.trace AND k.fusion_group = g.fusion_group \
                 WHERE g.trace = '{path}' GROUP BY g.fusion_group, g.calls, g.time_us"
            ),
        ));
        assert_eq!(groups.len(), want["fusion"]["groups"].as_array().unwrap().len(), "{path}");
        let with_kernels: Vec<_> = groups.iter().filter(|g| g["n"].as_u64() > Some(0)).collect();
        assert!(with_kernels.len() > 10, "{path}");
        for g in with_kernels {
            assert_eq!(g["calls"], g["n"], "{path}: {g:?}");
            let (want, got) = (g["time_us"].as_f64().unwrap(), g["us"].as_f64().unwrap());
            assert!((want - got).abs() < 1e-3 + 1e-9 * got, "{path}: {g:?}");
        }
    }
    assert!(layers >= 36 && steps_seen >= 6, "{layers} layers in {steps_seen} steps");
    let ungrouped = rows(&sql(&out, "SELECT COUNT(*) AS n FROM kernels WHERE fusion_group IS NULL"));
    assert_eq!(ungrouped[0]["n"], 0);
    // A kernel of another stream is in the step whose span holds its start.
    let elsewhere = "SELECT COUNT(*) AS n FROM kernels k JOIN steps s ON k.trace = s.trace AND k.step = s.step \
                     WHERE k.start_us < s.start_us - 0.001 OR k.start_us >= s.end_us + 0.001";
    assert_eq!(rows(&sql(&out, elsewhere))[0]["n"], 0);
}

#[test]
fn bad_folders_files_and_queries_are_named() {
    let dir = temp_dir("fleet-bad");
    let out = dir.join("export");
    export(&out, &[]);
    let path = out.to_str().unwrap();
    // Writing is refused: DDL, DML, COPY, settings.
    for query in [
        "CREATE TABLE t AS SELECT 1",
        "INSERT INTO traces SELECT * FROM traces",
        "COPY (SELECT 1) TO 'x.csv'",
        "SET datafusion.execution.batch_size = 1",
    ] {
        let (code, _, err) = run(&["fleet", path, "--sql", query]);
        assert_eq!(code, 2, "{query}");
        assert!(err.contains("query failed"), "{query}: {err}");
    }
    // A result past --max-rows keeps its first rows and says so; past --memory-mb a query
    // fails naming the limit.
    let (code, out_json, err) = run(&["fleet", path, "--sql", "SELECT name FROM kernels", "--max-rows", "2", "--json"]);
    let kept: Value = serde_json::from_str(&out_json).unwrap();
    assert!(code == 0 && kept["rows"].as_array().unwrap().len() == 2 && kept["truncated"] == true, "{out_json}");
    assert!(err.contains("more rows than these first 2") && err.contains("--max-rows"), "{err}");
    let grouped = "SELECT value % 300000 AS k, COUNT(*) AS n FROM range(600000) GROUP BY k";
    let (code, _, err) = run(&["fleet", path, "--sql", grouped, "--memory-mb", "1"]);
    assert!(code == 2 && err.contains("limit of 1.00 MiB"), "{err}");
    for threads in ["0", "1025"] {
        let (code, _, err) = run(&["fleet", path, "--report", "kernels", "--threads", threads]);
        assert!(code == 2 && err.contains("is not in 1..=1024"), "{threads}: {err}");
    }
    let (code, _, err) = run(&["fleet", path, "--report", "regressions"]);
    assert!(code == 2 && err.contains("--baseline"), "{err}");
    let (code, _, err) = run(&["fleet", path, "--report", "nope"]);
    assert!(code == 2 && err.contains("categories, kernels"), "{err}");
    // A folder with no export.
    let (code, _, err) = run(&["fleet", dir.join("none").to_str().unwrap(), "--report", "kernels"]);
    assert!(code == 2 && err.contains("no exported tables"), "{err}");
    // A damaged file is named.
    let victim = out.join(files_under(&out).into_iter().find(|f| f.starts_with("kernels")).unwrap());
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    let (code, _, err) = run(&["fleet", path, "--report", "kernels"]);
    assert!(code == 2 && err.contains(victim.to_str().unwrap()) && err.contains("not a Parquet file"), "{err}");
}

#[test]
fn a_streamed_export_has_the_same_kernels_and_collectives_without_the_analyses() {
    let dir = temp_dir("fleet-streamed");
    let ranks: Vec<String> = TRACES[2..].iter().map(|t| data(t)).collect();
    let (whole, streamed) = (dir.join("whole"), dir.join("streamed"));
    for (out, flag) in [(&whole, None), (&streamed, Some("--streamed"))] {
        let mut args = vec!["export", "-o", out.to_str().unwrap()];
        args.extend(flag);
        args.extend(ranks.iter().map(String::as_str));
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
    }
    let per_trace = "SELECT trace, COUNT(*) AS n, SUM(duration_us) AS us, COUNT(launching_op) AS with_op \
                     FROM kernels GROUP BY trace ORDER BY trace";
    let (a, b) = (rows(&sql(&whole, per_trace)), rows(&sql(&streamed, per_trace)));
    assert_eq!(a.len(), 2);
    for (a, b) in a.iter().zip(&b) {
        assert_eq!((&a["trace"], &a["n"]), (&b["trace"], &b["n"]));
        assert!(close(a["us"].as_f64().unwrap(), b["us"].as_f64().unwrap()));
        assert!(a["with_op"].as_i64().unwrap() > 0);
        assert_eq!(b["with_op"], 0, "a streamed kernel has no launching op");
    }
    let collectives = "SELECT rank, COUNT(*) AS n, SUM(bytes) AS bytes FROM collectives GROUP BY rank ORDER BY rank";
    assert_eq!(sql(&whole, collectives), sql(&streamed, collectives));
    assert_eq!(rows(&sql(&whole, collectives))[0]["n"], 10);
    let traces =
        "SELECT rank, world_size, kernels, busy_us, idle_host_wait_us, idle_other_us FROM traces ORDER BY rank";
    assert_eq!(sql(&whole, traces), sql(&streamed, traces));
    // A trace that fails to read as it streams leaves no partial file behind.
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"traceEvents\": [").unwrap();
    let (code, _, err) = run(&["export", "--streamed", "-o", streamed.to_str().unwrap(), broken.to_str().unwrap()]);
    assert!(code == 0 && err.contains("1 failed to read"), "{err}");
    assert!(
        files_under(&streamed).iter().all(|f| f.extension().is_some_and(|e| e == "parquet")),
        "{:?}",
        files_under(&streamed)
    );
    let notes = rows(&sql(&streamed, "SELECT notes FROM traces WHERE error IS NULL"));
    assert!(notes.iter().all(|r| r["notes"].as_str().unwrap().starts_with("streamed")), "{notes:?}");
    assert_eq!(rows(&sql(&streamed, "SELECT COUNT(*) AS n FROM ops"))[0]["n"], 0);
    assert_eq!(rows(&sql(&streamed, "SELECT COUNT(*) AS n FROM steps"))[0]["n"], 0);
    let placed = "SELECT COUNT(step) + COUNT(layer) + COUNT(fusion_group) AS n FROM kernels";
    assert_eq!(rows(&sql(&streamed, placed))[0]["n"], 0, "a streamed kernel has no step, layer or group");
}
