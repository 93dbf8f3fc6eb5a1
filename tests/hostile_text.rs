//! Hostile text: op traces, simulator tables and op graphs made to hang, recurse or blow up the
//! readers. Files and share links come from strangers, so each must be read in time linear in
//! its size, or refused at a budget of `fusionscope::limits` with an error naming the line.
//!
//! Each input below is sized so that the quadratic reading it once met would take a minute or
//! more in this debug build (measured with each fix reverted, up to over five minutes), or
//! overflow the stack: no test here times anything, the suite's own time limit is the guard.
//! Where the budgets cap an input (a 1 MiB line, 100,000 rows) the sizes sit at the budget.
//! Most also go through the one dispatch the page uses (`import::open_whole`) and, where a user
//! would, through the command line, which must exit with code 2 and a one-line error naming
//! the file and line, never die of a signal.

use crate::common::{run, temp_dir};
use fusionscope::fusion::{analyse, parse_graph, GraphError};
use fusionscope::import::{open_whole, FileKind, Imported, OpenError, ReadError};
use fusionscope::limits::{OPTRACE_LINE_BYTES, OPTRACE_NESTING, OPTRACE_RECORDS, SIM_CSV_FIELDS, SIM_CSV_ROWS};
use fusionscope::optrace::{analyze_optrace, parse_optrace};
use fusionscope::simcsv::{infer_setup, parse_sim_csv, side_by_side, view, SimBound, SimCsvError, SimTable};
use proptest::prelude::*;

/// A record that makes a file detected as an op trace.
const RECORD: &str = "0:0:0 %900000:<2xf16> = nova_plus.1.0.0.gelu(%900001:<2xf16>)";

/// The ten columns a simulator table must have.
const HEADER: &str =
    "Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count";

/// Writes `text` to a file named `name` in this test's folder and runs `fusionscope ARGS FILE`.
fn run_on(name: &str, text: &str, args: &[&str]) -> (i32, String, String, String) {
    let dir = temp_dir(&format!("hostile-text-{name}"));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.push(&path);
    let (code, out, err) = run(&all);
    (code, out, err, path)
}

/// The command line refused the file: exit code 2 and one line naming the file, then `what`.
#[track_caller]
fn refused(result: (i32, String, String, String), what: &str) {
    let (code, _, err, path) = result;
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("fusionscope: {path}: {what}")), "{err}");
}

fn open_error(name: &str, text: &str) -> OpenError {
    match open_whole(name, text.as_bytes()) {
        Err(e) => e,
        Ok(other) => panic!("{name} was read: {}", kind_of(&other)),
    }
}

fn kind_of(i: &Imported) -> &'static str {
    match i {
        Imported::OpTrace { .. } => "op trace",
        Imported::SimTable { .. } => "simulator table",
        Imported::Graph { .. } => "graph",
        Imported::Unrecognised { .. } => "unrecognised",
        _ => "another kind",
    }
}

// ---- op traces ----------------------------------------------------------------------------

/// `list{` nested 100,000 deep: the parser recursed once per level (a stack overflow: a signal
/// on the command line, a trap on the page).
#[test]
fn an_optrace_type_nested_100000_deep_is_refused_at_its_column() {
    let deep = format!("0:0:0 %1:<2xf16> = a.b.op({}1:i32{})", "list{".repeat(100_000), "}".repeat(100_000));
    let text = format!("{RECORD}\n{deep}\n");
    // The call's `(` is level 1: the 64th `list{` opens level 65.
    let column = "0:0:0 %1:<2xf16> = a.b.op(".len() + 63 * "list{".len() + "list{".len();
    let what = format!("line 2, column {column}: types nested deeper than {OPTRACE_NESTING} levels");
    let e = open_error("deep.optrace", &text);
    assert_eq!(e.detected.kind, FileKind::OpTrace);
    assert!(e.error.to_string().starts_with(&what), "{}", e.error);
    refused(run_on("deep.optrace", &text, &["optrace"]), &what);
}

/// One 4 MB line of record prefixes. Each of its 700,000 prefixes searched the rest of the line
/// for `=`; now the line is refused before it is searched.
#[test]
fn a_4_mb_optrace_line_is_refused_by_its_length() {
    let line = "0:0:0 ".repeat(700_000);
    let text = format!("{RECORD}\n{line}\n{RECORD}\n");
    let what = "line 2: the line is 4,200,000 bytes long, over the budget of 1,048,576 bytes";
    let e = open_error("long.optrace", &text);
    assert!(e.error.to_string().starts_with(what), "{}", e.error);
    refused(run_on("long.optrace", &text, &["optrace"]), what);
}

/// A line just under the budget that looks like 58,000 records but is none: every prefix is
/// followed by the same `=` and the same 520,000-character callee, which ends in `!`. Checking
/// that callee once per prefix was quadratic (minutes); it is checked once.
#[test]
fn a_line_of_58000_almost_records_is_skipped_in_one_reading() {
    let line = format!("{}= {}!(", "0:0:0 %1 ".repeat(58_000), "a".repeat(520_000));
    assert!(line.len() <= OPTRACE_LINE_BYTES);
    let text = format!("{RECORD}\n{line}\n");
    let report = analyze_optrace(&text).unwrap();
    assert_eq!((report.records, report.skipped_lines), (1, 1));
    match open_whole("almost.optrace", text.as_bytes()) {
        Ok(Imported::OpTrace { report, .. }) => assert_eq!(report.skipped_lines, 1),
        other => panic!("{:?}", other.map(|i| kind_of(&i))),
    }
    let (code, out, err, _) = run_on("almost.optrace", &text, &["optrace", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["records"].as_u64(), v["skipped_lines"].as_u64()), (Some(1), Some(1)));
}

/// One record reading 60,000 tensors, each the result of a matmul that reads the one before.
/// Conversion searched the inputs so far for each operand, grouping searched the candidate
/// groups so far and marked all of them once per candidate (each is rejected: it reaches the
/// next): three quadratic steps on 60,000.
#[test]
fn a_record_reading_60000_chained_tensors_is_converted_and_grouped_in_one_pass() {
    let n = 60_000;
    let mut text: String = (1..=n).map(|i| format!("0:0:0 %{i}:<1xf16> = a.b.dot(%{}:<1xf16>)\n", i - 1)).collect();
    let operands: Vec<String> = (1..=n).map(|i| format!("%{i}:<1xf16>")).collect();
    let wide = format!("0:0:0 %{}:<1xf16> = a.b.add({})\n", n + 1, operands.join(", "));
    assert!(wide.len() <= OPTRACE_LINE_BYTES);
    text += &wide;
    let report = analyze_optrace(&text).unwrap();
    assert_eq!(report.records, n + 1);
    // Every dot starts a group; the add may only join the last (the others reach it).
    let groups = &report.analysis.groups;
    assert_eq!(groups.len(), n);
    assert_eq!(groups[n - 1], [format!("dot %{n}"), format!("add %{}", n + 1)]);
    let add = report.analysis.op_details.last().unwrap();
    assert_eq!(add.decision.rejected.len(), n - 1);
    let (code, out, err, _) = run_on("wide.optrace", &text, &["optrace"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("{} records", n + 1)), "{}", &out[..200]);
}

/// One record with 100,000 results: its head's name listed them all, and each result op read a
/// token named after it (100,000 copies of a 700 KB name, each copied and hashed: minutes).
#[test]
fn a_record_with_100000_results_has_a_short_head_name() {
    let n = 100_000;
    let results: Vec<String> = (1..=n).map(|i| format!("%{i}")).collect();
    let text = format!("{RECORD}\n0:0:0 {} = a.b.split(%0:<{n}xf16>)\n", results.join(", "));
    let report = analyze_optrace(&text).unwrap();
    let head = format!("split %1,…,%{n} (100,000 results)");
    assert!(report.graph_ops.iter().any(|o| o.name == head));
    assert_eq!(report.graph_ops.len(), 1 + 1 + n);
    assert!(report.graph_ops.iter().all(|o| o.name.len() < 60));
}

/// As many records as a trace may hold, each of its own op: listing the distinct unmapped op
/// names searched the names so far for each (2 · 10^10 comparisons of equally long names).
#[test]
fn as_many_distinct_unknown_ops_as_records_are_listed_once_each() {
    let n = OPTRACE_RECORDS;
    let text: String = (0..n).map(|i| format!("0:0:0 %{}:<1xf16> = a.b.op{i:06}(%0:<1xf16>)\n", i + 1)).collect();
    let report = analyze_optrace(&text).unwrap();
    assert_eq!(report.unmapped.len(), n);
    assert_eq!(report.unmapped[n - 1], format!("op{:06}", n - 1));
}

/// A list nested `depth` deep is read while the call's `(` and the lists fit the budget, and
/// refused at the bracket over it beyond.
#[test]
fn nesting_is_read_up_to_the_budget_and_refused_beyond() {
    for depth in 0..150 {
        let line = format!("0:0:0 %1:<2xf16> = a.b.op({}1:i32{})", "list{".repeat(depth), "}".repeat(depth));
        match parse_optrace(&line) {
            Ok(t) => assert!(depth < OPTRACE_NESTING && t.records.len() == 1, "{depth}"),
            Err(e) => {
                assert!(depth >= OPTRACE_NESTING, "{depth}: {e}");
                assert_eq!(e.to_string(), "line 1, column 346: types nested deeper than 64 levels (`(`, `{` and `<` open at once; real records nest 3 deep)");
            }
        }
    }
}

/// The record after the budget of records is refused at its line: the line after the blank one
/// that follows the budget's worth (blank lines are not records, so all before were read).
#[test]
fn the_record_after_the_budget_is_refused_at_its_line() {
    let text = "0:0:0 = a.b()\n".repeat(OPTRACE_RECORDS) + "\n0:0:0 = a.b()\n";
    let e = parse_optrace(&text).unwrap_err();
    assert_eq!(e.line, OPTRACE_RECORDS + 2);
    assert_eq!(e.to_string(), "line 200002: more than 200,000 records, the budget of one op trace");
    let e = open_error("many.optrace", &text);
    assert!(
        e.message("many.optrace")
            .starts_with("many.optrace is an op trace but cannot be read: line 200002: more than 200,000 records"),
        "{}",
        e.message("many.optrace")
    );
}

// ---- simulator op tables --------------------------------------------------------------------

fn table_text(rows: usize, row: impl Fn(usize) -> String) -> String {
    let mut text = format!("{HEADER}\n");
    for i in 0..rows {
        text += &row(i);
        text.push('\n');
    }
    text
}

/// 100,000 identical rows, the most a table may have: finding each row's group's heaviest row
/// went through the group's rows so far (5 · 10^9 steps).
#[test]
fn a_table_of_100000_identical_rows_is_grouped_in_one_pass() {
    let text = table_text(SIM_CSV_ROWS, |_| "3,-Q-3,MXU,32,Compute,10,10,2,100,1000".to_string());
    let t = parse_sim_csv(&text).unwrap();
    assert_eq!((t.rows.len(), t.groups.len()), (SIM_CSV_ROWS, 1));
    assert_eq!(t.groups[0].descriptions, ["-Q-3"]);
    assert_eq!(t.groups[0].execution_ns, 10.0 * SIM_CSV_ROWS as f64);
    let name = "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill.csv";
    match open_whole(name, text.as_bytes()) {
        Ok(Imported::SimTable { table, .. }) => assert_eq!(table.rows.len(), SIM_CSV_ROWS),
        other => panic!("{:?}", other.map(|i| kind_of(&i))),
    }
    let (code, out, err, _) = run_on(name, &text, &["simcsv"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("100000 ops in 1 fusion groups"), "{}", &out[..300]);
}

/// 200,000 identical rows (a share link can carry them in a few hundred bytes): refused at the
/// first row over the budget, without reading the rest.
#[test]
fn a_table_of_200000_rows_is_refused_at_the_first_row_over_the_budget() {
    let text = table_text(2 * SIM_CSV_ROWS, |_| "3,-Q-3,MXU,32,Compute,10,10,2,100,1000".to_string());
    let line = SIM_CSV_ROWS + 2;
    let e = parse_sim_csv(&text).unwrap_err();
    assert_eq!(e, SimCsvError::TooManyRows { line, limit: SIM_CSV_ROWS });
    assert!(e.to_string().starts_with("line 100002: more than 100,000 rows, the budget of one simulator table"), "{e}");
    let e = open_error("big.csv", &text);
    assert!(matches!(e.error, ReadError::SimTable(SimCsvError::TooManyRows { .. })), "{e:?}");
    refused(run_on("big.csv", &text, &["simcsv"]), &format!("line {line}: more than 100,000 rows"));
}

/// 100,000 rows, each a fusion index, description and unit of its own, and none of a known
/// role: finding a row's group, a group's descriptions, a group's units for the page, and the
/// simulator-only descriptions of the side-by-side each searched what came before.
#[test]
fn a_table_of_100000_distinct_rows_is_grouped_viewed_and_compared_in_one_pass() {
    let text = table_text(SIM_CSV_ROWS, |i| format!("{i},desc{i:06},unit{i:06},1,Memory,{i},1,1,1,1"));
    let t = parse_sim_csv(&text).unwrap();
    assert_eq!(t.groups.len(), SIM_CSV_ROWS);
    assert_eq!(t.groups[SIM_CSV_ROWS - 1].fusion_index, SIM_CSV_ROWS as u64 - 1);
    let inferred = infer_setup("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill.csv", &t);
    let s = side_by_side(&t, &inferred.setup).unwrap();
    assert_eq!(s.comparison.sim_only.len(), SIM_CSV_ROWS);
    // All in one group: its descriptions and units, each once.
    let one = table_text(SIM_CSV_ROWS, |i| format!("7,desc{i:06},unit{i:06},1,Memory,{i},1,1,1,1"));
    let t = parse_sim_csv(&one).unwrap();
    assert_eq!(t.groups[0].descriptions.len(), SIM_CSV_ROWS);
    assert_eq!(t.groups[0].bound, SimBound::Memory);
    let d = view::groups_table(&t);
    assert_eq!(d.rows[0][3].text.matches('+').count(), SIM_CSV_ROWS - 1);
}

/// A record of 2,000,000 empty fields is refused at the first field over the budget.
#[test]
fn a_record_of_two_million_fields_is_refused() {
    let text = format!("{HEADER}\n{}\n", ",".repeat(2_000_000));
    assert_eq!(parse_sim_csv(&text).unwrap_err(), SimCsvError::TooManyFields { line: 2, limit: SIM_CSV_FIELDS });
    refused(run_on("wide.csv", &text, &["simcsv"]), "line 2: more than 1,000 fields in one record");
}

// ---- op graphs (JSON) -----------------------------------------------------------------------

/// Nesting 100,000 deep never recurses: the format's own types nest 3 deep, so deeper nesting
/// where an op is expected is a type error at once, and serde_json skips the value of an unknown
/// key without recursion (as does the reader's position scanner).
#[test]
fn an_op_graph_nested_100000_deep_is_read_without_recursion() {
    let deep =
        |open: &str, inside: &str, close: &str| format!("{}{inside}{}", open.repeat(100_000), close.repeat(100_000));
    let text = deep("[", "", "]");
    match parse_graph(&text) {
        Err(GraphError::Json { line: 1, column: 2, message }) => {
            assert_eq!(message, "invalid type: sequence, expected a string")
        }
        other => panic!("{other:?}"),
    }
    refused(run_on("deep.json", &text, &["graph"]), "malformed JSON at line 1, column 2");
    for unknown in [deep("[", "", "]"), deep("{\"a\":", "1", "}")] {
        let text = format!("{{\"ops\": [], \"x\": {unknown}}}");
        assert!(parse_graph(&text).unwrap().is_empty());
        let (code, _, err, _) = run_on("deep.json", &text, &["graph"]);
        assert_eq!(code, 0, "{err}");
    }
}

/// An op reading 200,000 tensors, each the output of a matmul that reads the one before: the
/// grouping searched and marked the candidate groups so far for each candidate.
#[test]
fn an_op_graph_op_reading_200000_chained_tensors_is_grouped_in_one_pass() {
    let n = 200_000;
    let mut ops: Vec<String> = (1..=n)
        .map(|i| {
            format!(
                r#"{{"name": "m{i}", "op_type": "matmul", "inputs": ["t{}"], "output": "t{i}", "shape": [1], "bytes_per_element": 2}}"#,
                i - 1
            )
        })
        .collect();
    let inputs: Vec<String> = (1..=n).map(|i| format!("\"t{i}\"")).collect();
    ops.push(format!(
        r#"{{"name": "sink", "op_type": "elementwise", "inputs": [{}], "output": "out", "shape": [1], "bytes_per_element": 2}}"#,
        inputs.join(", ")
    ));
    let text = format!("[{}]", ops.join(",\n"));
    let graph = parse_graph(&text).unwrap();
    let analysis = analyse(&graph);
    assert_eq!(analysis.grouping.groups.len(), n);
    assert_eq!(analysis.grouping.decisions[n].rejected.len(), n - 1);
    assert!(matches!(open_whole("wide.json", text.as_bytes()), Ok(Imported::Graph { .. })));
}

// ---- random input ---------------------------------------------------------------------------

/// Text made of the characters the two grammars care about.
fn structured_text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop::sample::select(vec![
            "0", "1", "-", "None", ":", " ", "%", "%1", "=", "(", ")", "{", "}", "<", ">", "list{", ",", "\"", "\n",
            "\r\n", "x", "f16", "a.b.op(", "0:0:0 ", "é", "\t",
        ]),
        0..max,
    )
    .prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random bytes, as the page would read them: never a panic, and an error names a line of
    /// the text.
    #[test]
    fn random_bytes_never_panic_either_reader(bytes in proptest::collection::vec(any::<u8>(), 0..4000)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(fusionscope::optrace::OptraceError::Parse(p)) = analyze_optrace(&text) {
            prop_assert!(p.line >= 1 && p.line <= text.lines().count(), "{}", p);
        }
        let _ = parse_sim_csv(&text);
        let _ = open_whole("x", &bytes);
    }

    /// Text of brackets, prefixes, quotes and line breaks: never a panic.
    #[test]
    fn structured_text_never_panics_either_reader(text in structured_text(400)) {
        let _ = analyze_optrace(&text);
        let _ = parse_sim_csv(&text);
        let _ = parse_sim_csv(&format!("{HEADER}\n{text}"));
    }

    /// Grouping by fusion index is the plain definition: rows in order of their index's first
    /// appearance, each group's bound that of its first heaviest row, each description once.
    #[test]
    fn sim_groups_are_the_plain_definition(
        rows in proptest::collection::vec((0u64..6, 0usize..4, 0u64..5, 0u32..4, 0u64..3), 0..60)
    ) {
        let bounds = ["Compute", "Memory", "ICI/NVLink", "Other"];
        let text = table_text(rows.len(), |i| {
            let (index, desc, count, time, bound) = rows[i];
            format!("{index},d{desc},MXU,{count},{},{time},1,1,1,1", bounds[bound as usize])
        });
        let t = parse_sim_csv(&text).unwrap();
        prop_assert_eq!(&t.groups, &plain_groups(&t));
    }
}

/// Groups as `SimTable` defines them, by searching (quadratic, fine for a few rows).
fn plain_groups(t: &SimTable) -> Vec<fusionscope::simcsv::SimGroup> {
    let mut indices: Vec<u64> = Vec::new();
    for r in &t.rows {
        if !indices.contains(&r.fusion_index) {
            indices.push(r.fusion_index);
        }
    }
    indices
        .into_iter()
        .map(|index| {
            let rows: Vec<usize> = (0..t.rows.len()).filter(|&i| t.rows[i].fusion_index == index).collect();
            let weight = |i: usize| t.rows[i].execution_ns * t.rows[i].count as f64;
            // The first row of the largest weight (the first row when all weigh 0).
            let heaviest =
                rows.iter().copied().fold(rows[0], |best, i| if weight(i) > weight(best) { i } else { best });
            let mut descriptions: Vec<String> = Vec::new();
            for &i in &rows {
                if !descriptions.contains(&t.rows[i].description) {
                    descriptions.push(t.rows[i].description.clone());
                }
            }
            fusionscope::simcsv::SimGroup {
                fusion_index: index,
                descriptions,
                count: rows.iter().map(|&i| t.rows[i].count).max().unwrap_or(0),
                execution_ns: rows.iter().map(|&i| t.rows[i].execution_ns).sum(),
                total_ns: rows.iter().map(|&i| weight(i)).sum(),
                bound: t.rows[heaviest].bound.clone(),
                flops: rows.iter().map(|&i| t.rows[i].flops).sum(),
                bytes: rows.iter().map(|&i| t.rows[i].bytes).sum(),
                rows,
            }
        })
        .collect()
}
