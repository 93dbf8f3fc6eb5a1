//! Tests of `json`.

use super::*;

#[test]
fn locate_finds_ops_and_tensor_keys() {
    let text =
        "{\n \"tensors\": {\"x\": {\"shape\": [1]}},\n \"ops\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\"}\n ]\n}";
    let s = locate(text);
    assert_eq!(
        s.ops.iter().map(|&o| location(text, o)).map(|l| (l.line, l.column)).collect::<Vec<_>>(),
        vec![(4, 3), (5, 3)]
    );
    assert_eq!(location(text, s.tensors["x"]), Location { line: 2, column: 14 });
}

fn op(name: &str, inputs: &str, output: &str, shape: &str) -> String {
    format!(
        r#"{{"name":{name},"op_type":"elementwise","inputs":{inputs},"output":"{output}","shape":{shape},"bytes_per_element":2}}"#
    )
}

fn error(text: &str) -> String {
    parse_graph(text).unwrap_err().to_string()
}

/// The ops are added as they are read; what is reported is still what reading the whole
/// file first reports: a JSON fault anywhere before any graph error, then the declared
/// tensors (wherever they are in the file), then the ops in file order.
#[test]
fn streaming_reports_what_a_whole_reading_reports() {
    let empty_name = op(r#""""#, r#"["x"]"#, "y", "[4]");
    let bad_type = op("5", r#"["x"]"#, "z", "[4]");
    assert_eq!(
        error(&format!("[{empty_name},\n{bad_type}]")),
        "malformed JSON at line 2, column 9: invalid type: integer `5`, expected a string"
    );
    let a = op(r#""a""#, r#"["x"]"#, "y", "[4]");
    let bad_tensor = r#""tensors":{"x":{"shape":[-1]}}"#;
    assert_eq!(
        error(&format!("{{\"ops\":[{empty_name}],\n {bad_tensor}}}")),
        r#"tensor "x" has a negative dimension (-1) in its shape (line 2, column 13)"#
    );
    assert_eq!(
        error(&format!("{{{bad_tensor},\"ops\":[{a},\n{bad_type}]}}")),
        "malformed JSON at line 2, column 9: invalid type: integer `5`, expected a string"
    );
    // A key written with escapes is the key.
    assert_eq!(
        error(&format!("{{\"ops\":[{a}],\n \"tens\\u006frs\":{{\"x\":{{\"shape\":[-1]}}}}}}")),
        r#"tensor "x" has a negative dimension (-1) in its shape (line 2, column 18)"#
    );
    let twice = op(r#""b""#, r#"["x"]"#, "y", "[4]");
    assert_eq!(
        error(&format!("[{a},\n{twice},\n{a}]")),
        r#"tensor "y" is produced by two ops, "a" and "b" (line 2, column 1)"#
    );
}

/// A file past [`PIPELINE_BYTES`] is read on another thread: the graph, and the first error
/// anywhere in it, are those of one thread's reading of the whole file.
#[test]
fn large_files_read_on_two_threads_give_what_one_reading_gives() {
    let graph = crate::random::random_graph(12_000, 7);
    let text = serde_json::to_string(&to_file(&graph)).unwrap();
    assert!(text.len() > PIPELINE_BYTES, "{} bytes", text.len());
    let whole = |text: &str| match parse_file(text) {
        Ok(file) => build(&file, &|i| Some(location(text, locate(text).ops[i])), &|_| None),
        Err(e) => Err(e),
    };
    assert_eq!(parse_graph(&text).unwrap(), graph);
    assert_eq!(parse_graph(&text).unwrap(), whole(&text).unwrap());
    // An op at fault late in the file (past the first hand-over), then a JSON fault after
    // it: the op's error, then the JSON fault, as one reading reports them.
    let late = text.match_indices("\"bytes_per_element\":").nth(9_000).unwrap().0;
    let bad_op = format!("{}\"bytes_per_element\":-{}", &text[..late], &text[late + 20..]);
    let e = parse_graph(&bad_op).unwrap_err().to_string();
    assert_eq!(e, whole(&bad_op).unwrap_err().to_string());
    assert!(e.contains("bytes_per_element"), "{e}");
    let cut = bad_op.rfind("},{").unwrap() + 2;
    let bad_json = format!("{}x{}", &bad_op[..cut], &bad_op[cut..]);
    let e = parse_graph(&bad_json).unwrap_err().to_string();
    assert!(e.starts_with("malformed JSON"), "{e}");
    assert_eq!(e, whole(&bad_json).unwrap_err().to_string());
}

#[test]
fn tensors_after_the_ops_are_declared_and_long_lists_kept() {
    let mm = op(r#""m""#, r#"["a","b","c","d","e","w","a"]"#, "y", "[4]");
    let g =
        parse_graph(&format!(r#"{{"ops":[{mm}],"tensors":{{"w":{{"shape":[3,5],"bytes_per_element":4}}}}}}"#)).unwrap();
    assert_eq!(g.ops()[0].inputs.len(), 7);
    assert_eq!(g.ops()[0].inputs[0], g.ops()[0].inputs[6]);
    let w = g.tensors().iter().find(|t| t.name == "w").unwrap();
    assert_eq!((w.size_bytes, w.size_source), (60, super::super::graph::SizeSource::Declared));
    // Declared tensors are numbered first, wherever they are in the file.
    assert_eq!(g.tensors()[0].name, "w");
}

#[test]
fn locate_bare_array_with_nested_strings() {
    let text = "[{\"name\": \"a]\", \"shape\": [1,[2]]}, {\"name\": \"b\\\"\"}]";
    let s = locate(text);
    assert_eq!(s.ops, vec![1, 35]);
}
