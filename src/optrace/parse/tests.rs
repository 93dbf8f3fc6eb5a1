//! Tests of `parse`.

use super::*;

fn record(line: &str) -> Record {
    parse_line(line, 1).unwrap().expect("a record")
}

fn tensor(v: &Value) -> &TensorRef {
    match v {
        Value::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

#[test]
fn the_spec_line() {
    let r = record(
        "0:0:0 %10:<1x128x2304xf16> = nova_plus.1.0.0.dot(%7:<1x128x768xf16>, %8:<768x2304xf16>, %9:<2304xf16>)",
    );
    assert_eq!(r.prefix, Prefix { pid: Some(0), rank: Some(0), stream: Some(0) });
    assert_eq!(r.callee, "nova_plus.1.0.0.dot");
    assert_eq!(r.op, "dot");
    assert_eq!(r.results[0].id, 10);
    assert_eq!(r.results[0].ty.as_ref().unwrap().shape, [1, 128, 2304]);
    let ids: Vec<u64> = r.operand_tensors().iter().map(|t| t.id).collect();
    assert_eq!(ids, [7, 8, 9]);
    assert_eq!(tensor(&r.args[2].value).ty.as_ref().unwrap().dtype, Dtype::F16);
}

#[test]
fn stray_text_none_prefix_strides_offsets_and_0d() {
    let r = record(
        "for debug!! in forward 58388:None:0 %3:<12288x4608xf16>{1,12288}, %4:<f32> = torch.2_1_0.aten::mm(%236:<12288x4608xf16>{1,12288}, %134:<12288xf16>+12288)",
    );
    assert_eq!(r.prefix, Prefix { pid: Some(58388), rank: None, stream: Some(0) });
    assert_eq!(r.op, "aten::mm");
    assert_eq!(r.results.len(), 2);
    assert_eq!(r.results[0].strides, Some(vec![1, 12288]));
    assert_eq!(r.results[1].ty.as_ref().unwrap().shape, Vec::<u64>::new());
    assert_eq!(r.results[1].ty.as_ref().unwrap().dtype, Dtype::F32);
    let b = tensor(&r.args[1].value);
    assert_eq!(b.offset, Some(12288));
    assert_eq!(b.ty.as_ref().unwrap().shape, [12288]);
}

#[test]
fn scalars_keywords_lists_and_objects() {
    let r = record(
        "1:0:2 %5:<2x3xbf16> = d.v.op(list{%1:<2x3xbf16>, list{%2:<3xbf16>, 7:i32}}, 0.1:f32, False:pred, None:NoneType, dim=-1:i64, w=%9:<3xbf16>, ScriptObject <__torch__.torch.classes.x>:ScriptObject)",
    );
    let ids: Vec<u64> = r.operand_tensors().iter().map(|t| t.id).collect();
    assert_eq!(ids, [1, 2, 9]);
    match &r.args[0].value {
        Value::List(items) => {
            assert_eq!(items.len(), 2);
            assert!(matches!(&items[1], Value::List(inner) if inner.len() == 2));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.args[1].value, Value::Scalar { value: "0.1".into(), ty: "f32".into() });
    assert_eq!(r.args[3].value, Value::Scalar { value: "None".into(), ty: "NoneType".into() });
    assert_eq!(r.args[4].keyword.as_deref(), Some("dim"));
    assert_eq!(r.args[4].value, Value::Scalar { value: "-1".into(), ty: "i64".into() });
    assert_eq!(r.args[5].keyword.as_deref(), Some("w"));
    assert!(matches!(&r.args[6].value, Value::Object { ty, .. } if ty == "ScriptObject"));
    assert_eq!(r.positional().count(), 5);
}

#[test]
fn non_records_are_skipped() {
    for line in
        ["", "   ", "# comment", "INFO 12:30:00 starting", "12:30:00 x = y", "0:0:0 nothing here", "foo(bar) = baz"]
    {
        assert_eq!(parse_line(line, 1).unwrap(), None, "{line:?}");
    }
}

#[test]
fn malformed_records_name_the_problem() {
    let cases = [
        ("0:0:0 %1:<2xf16> = a.b.op(%0:<2xf16>", "'(' is never closed"),
        ("0:0:0 %1:<2xf16> = a.b.op(%0:<2xf16>) trailing", "text after the closing parenthesis"),
        ("0:0:0 %1:<2xf16> = a.b.op(%0:<2xf16>,, %2:<2xf16>)", "empty argument"),
        ("0:0:0 %1:<2xf16> = a.b.op(7)", "no `:type`"),
        ("0:0:0 %1:<2x?xf16> = a.b.op()", "a dimension is not a whole number"),
        ("0:0:0 %1:<2xf16>, x = a.b.op()", "is not a tensor"),
        ("0:0:0 %x:<2xf16> = a.b.op()", "id after %"),
        ("0:0:0 %1:<2xf16> = a.b.op(%2:<2xf16>{1,a})", "stride"),
        ("0:0:0 %1:<2xf16> = a.b.op(list{%2:<2xf16>)", "unexpected ')'"),
        ("0:0:0 %1:<2x> = a.b.op()", "element type"),
    ];
    for (line, expected) in cases {
        let e = parse_line(line, 7).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(e.to_string().contains(expected), "{line}: {e}");
        assert!(e.to_string().starts_with("line 7: malformed record: "), "{e}");
    }
}

#[test]
fn result_types_may_follow_the_call() {
    let r = record("0:0:0 %5, %6 = a.b.split(%4:<4xf16>) : <2xf16>, <1x2xf32>");
    assert_eq!(r.results[0].ty.as_ref().unwrap().shape, [2]);
    assert_eq!(r.results[1].ty.as_ref().unwrap().dtype, Dtype::F32);
    let r = record("0:0:0 %5 = a.b.gelu(%4:<4xf16>) -> <4xf16>");
    assert_eq!(r.results[0].ty.as_ref().unwrap().shape, [4]);
    // One type per result, and only types.
    for line in ["0:0:0 %5, %6 = a.b.split(%4:<4xf16>) : <2xf16>", "0:0:0 %5 = a.b.gelu(%4:<4xf16>) : f16"] {
        assert!(parse_line(line, 1).unwrap_err().to_string().contains("text after the closing parenthesis"));
    }
}

#[test]
fn untyped_results_and_no_results() {
    let r = record("0:0:0 %5, %6 = a.b.split(%4:<4xf16>)");
    assert_eq!(r.results.iter().map(|t| (t.id, t.ty.is_none())).collect::<Vec<_>>(), [(5, true), (6, true)]);
    let r = record("0:0:0  = a.b.barrier()");
    assert!(r.results.is_empty() && r.args.is_empty());
}

#[test]
fn detection() {
    assert!(looks_like_optrace("# dump\nfor debug!! 1:0:0 %3:<2xf16> = a.b.gelu(%2:<2xf16>)\n"));
    assert!(!looks_like_optrace("{\"traceEvents\": []}"));
    assert!(!looks_like_optrace("time 12:30:00 started\n"));
}

/// The search `locate` replaced: every start tries the rest of the line from scratch
/// (quadratic on a long line, but plainly what the module docs say).
fn plain_locate(line: &str) -> Option<(usize, &str, &str, &str)> {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .filter(|&p| p == 0 || !bytes[p - 1].is_ascii_digit())
        .filter(|&p| bytes[p].is_ascii_digit() || bytes[p] == b'N' || bytes[p] == b'-')
        .find_map(|p| {
            let s = &line[p..];
            let (_, s) = prefix_field(s)?;
            let (_, s) = prefix_field(s.strip_prefix(':')?)?;
            let (_, s) = prefix_field(s.strip_prefix(':')?)?;
            if !s.starts_with(|c: char| c.is_whitespace()) {
                return None;
            }
            let s = s.trim_start();
            let eq = s.find('=')?;
            let results = &s[..eq];
            if !(results.trim().is_empty() || results.starts_with('%')) {
                return None;
            }
            let rest = s[eq + 1..].trim_start();
            let paren = rest.find('(')?;
            let callee = &rest[..paren];
            let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-');
            (!callee.is_empty() && callee.chars().all(name_char)).then_some((p, results, callee, &rest[paren + 1..]))
        })
}

proptest::proptest! {
    /// Lines made of the pieces of records, in any order: the linear search finds the
    /// record the plain one finds.
    #[test]
    fn locate_finds_what_the_plain_search_finds(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                "0", "12", "-", "-3", "None", "N", ":", " ", "\t", "\u{a0}", "%", "%1", "=", " = ", "(", ")",
                "a", "a.b", "x:y", "!", "é", "0:0:0 ", "1:None:2 ", "%5:<2xf16>", "nova.1.dot(", "<", ">",
            ]),
            0..40,
        )
    ) {
        let line: String = pieces.concat();
        let got = locate(&line).map(|s| (s.start, s.results, s.callee, s.after_paren));
        proptest::prop_assert_eq!(got, plain_locate(&line), "{:?}", line);
    }

    /// No text makes the parser panic, and whatever it refuses names the line it was given.
    #[test]
    fn any_line_is_a_record_nothing_or_an_error_naming_it(line in "[ -~é\t]{0,200}") {
        if let Err(e) = parse_line(&line, 9) {
            proptest::prop_assert_eq!(e.line, 9);
            proptest::prop_assert!(e.to_string().starts_with("line 9"), "{}", e);
        }
    }
}

#[test]
fn nesting_is_bounded_by_any_bracket() {
    assert_eq!(too_deep("a(b{c<d>})", 3), None);
    assert_eq!(too_deep("a(b{c<d>})", 2), Some(5));
    // Closing brackets lower the level whatever they close, never below 0.
    assert_eq!(too_deep(")))((", 2), None);
    assert_eq!(too_deep("(}(>(", 1), None);
    assert_eq!(too_deep("((>((", 2), Some(4));
}

#[test]
fn budgets_name_the_line_and_where() {
    let deep = format!("x 0:0:0 %1:<2xf16> = a.b.op({}1:i32{})", "list{".repeat(100), "}".repeat(100));
    let e = parse_line(&deep, 4).unwrap_err();
    assert_eq!(e.kind, ParseErrorKind::TooDeep { limit: OPTRACE_NESTING });
    // `(` is level 1, so the 64th `list{` opens level 65; columns count characters.
    let column = deep.find("list{").unwrap() + 63 * 5 + 5;
    assert_eq!(e.column, Some(column));
    assert_eq!(
        e.to_string(),
        format!("line 4, column {column}: types nested deeper than 64 levels (`(`, `{{` and `<` open at once; real records nest 3 deep)")
    );
    // 64 levels in all (the call's `(` and 63 lists) are read.
    let ok = format!("0:0:0 %1:<2xf16> = a.b.op({}1:i32{})", "list{".repeat(63), "}".repeat(63));
    assert!(parse_line(&ok, 1).unwrap().is_some());

    let long = format!("0:0:0 %1:<2xf16> = a.b.op({})", "%2:<2xf16>, ".repeat(100_000));
    let e = parse_line(&long, 2).unwrap_err();
    assert_eq!(e.kind, ParseErrorKind::LineTooLong { bytes: long.len(), limit: OPTRACE_LINE_BYTES });
    assert_eq!(
        e.to_string(),
        "line 2: the line is 1,200,027 bytes long, over the budget of 1,048,576 bytes for one op-trace line"
    );
    // A long line is refused whatever it holds.
    assert!(parse_line(&"x".repeat(OPTRACE_LINE_BYTES + 1), 1).is_err());
    assert_eq!(parse_line(&"x".repeat(OPTRACE_LINE_BYTES), 1), Ok(None));
}

#[test]
fn counts_skipped_lines_and_reports_the_first_bad_line() {
    let t = parse_optrace("hello\n0:0:0 %1:<2xf16> = a.b.gelu(%0:<2xf16>)\n\nbye\n").unwrap();
    assert_eq!(t.records.len(), 1);
    assert_eq!(t.records[0].line, 2);
    assert_eq!(t.skipped_lines, [1, 3, 4]);
    let e = parse_optrace("x\n0:0:0 %1:<2xf16> = a.b.gelu(%0:<2xf16>)\n0:0:0 %2:<2xf16> = a.b.gelu(%1)\n").unwrap_err();
    assert_eq!(e.line, 3);
}
