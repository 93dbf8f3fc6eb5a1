use super::*;
use crate::detect::tests::trace_kind;
use analysis::summarize;
use formats::read_trace;

const TRITON: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/traces/amd/torch_compile_triton_mi300x.json.gz"
));
const QWEN: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
));
const GRAPH: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/graphs/worked_example.json"));

#[test]
fn a_trace_opened_with_ranks_folds_the_rank_summary_of_the_command_line_in_the_same_pass() {
    let rank0 = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/multirank/hta_sampled_128rank_rank0.json.gz"
    ));
    let name = "hta_sampled_128rank_rank0.json.gz";
    let expected = crate::read_rank(name, [&rank0[..]]).unwrap();
    let plain = open_in_slices(name, rank0, 100_000).unwrap();
    let mut opener = FileOpener::with_ranks(name);
    for slice in rank0.chunks(100_000) {
        opener.feed(slice).unwrap();
    }
    let (imported, rank) = opener.finish_with_ranks(|_| None).unwrap();
    assert_eq!(rank, Some(expected));
    match (imported, plain) {
        (Imported::Trace { summary, time, .. }, Imported::Trace { summary: s0, time: t0, .. }) => {
            assert_eq!((summary, time), (s0, t0), "the trace's own results do not change");
        }
        other => panic!("{other:?}"),
    }
    let mut plain = FileOpener::new(name);
    plain.feed(rank0).unwrap();
    assert!(plain.finish_with_ranks(|_| None).unwrap().1.is_none(), "only asked for");
}

#[test]
fn a_trace_fed_in_any_slices_gives_the_summary_of_the_whole_file() {
    let whole = read_trace(QWEN).unwrap();
    let expected = summarize(&ClassifiedTrace::new(&whole), Some("q.json.gz"));
    for n in [7, 4096, 100_000, QWEN.len()] {
        match open_in_slices("q.json.gz", QWEN, n).unwrap() {
            Imported::Trace { trace, summary, .. } => {
                assert_eq!(summary, expected, "slices of {n}");
                assert_eq!(trace.kernels.len(), whole.kernels.len());
            }
            other => panic!("slices of {n}: {other:?}"),
        }
    }
}

#[test]
fn an_execution_trace_is_read_whole_and_a_broken_one_names_the_file() {
    let et =
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/exec-trace/param_linear_et.json.gz"));
    let text = text(et, usize::MAX).unwrap();
    let expected = parse_exec_trace(&text, "et.json.gz").unwrap();
    for n in [100, et.len()] {
        let Imported::ExecTrace(read) = open_in_slices("et.json.gz", et, n).unwrap() else { panic!("slices of {n}") };
        assert_eq!(read, expected, "slices of {n}");
    }
    assert_eq!(expected.nodes.iter().filter(|n| n.is_op()).count(), 928, "as `trace --exec-trace` counts them");
    let broken = br#"{"schema": "1.0.1", "pid": 1, "nodes": [{"id": 1, "name": "a", "parent": 2}, {"id": 2, "name": "b", "parent": 1}]}"#;
    let e = open_whole("loop.json", broken).unwrap_err();
    assert_eq!(
            e.message("loop.json"),
            "loop.json is a PyTorch execution trace but cannot be read: execution trace loop.json: the parent links make a cycle through node 1."
        );
}

#[test]
fn a_trace_opened_with_its_execution_trace_is_classified_and_analysed_once() {
    use analysis::pipeline::{report, Choices, FUSIONS_MADE};
    use analysis::summary::CLASSIFIED;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/exec-trace/");
    let read = |f: &str| std::fs::read(format!("{dir}{f}")).unwrap();
    let (kineto, et_bytes) = (read("param_linear_kineto.json.gz"), read("param_linear_et.json.gz"));
    let Imported::ExecTrace(et) = open_whole("et.json.gz", &et_bytes).unwrap() else { panic!("an execution trace") };
    let mut opener = FileOpener::with_ranks("k.json.gz");
    for slice in kineto.chunks(1 << 20) {
        opener.feed(slice).unwrap();
    }
    let counts = || (CLASSIFIED.with(|n| n.get()), FUSIONS_MADE.with(|n| n.get()));
    let before = counts();
    let mut asked = 0;
    let (opened, _) = opener
        .finish_with_ranks(|trace| {
            asked += 1;
            assert!(!trace.cpu_ops.is_empty(), "the opener asks once the trace is read");
            Some((&et, "et.json.gz"))
        })
        .unwrap();
    let after = counts();
    assert_eq!(asked, 1);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 1), "one classification, one fusion analysis");
    let Imported::Trace { trace, summary, time, .. } = opened else { panic!("a trace") };
    let f = time.fusion.as_ref().unwrap();
    assert_eq!(f.exec_trace.as_ref().map(|e| (e.file.as_str(), e.linked_ops)), Some(("et.json.gz", 218)));
    assert!(time.ops.iter().any(|r| r.shapes_from == analysis::time::op_table::ShapesFrom::ExecutionTrace));
    // The report is the command line's (`trace K --exec-trace ET`): the op table and the
    // fusion with the execution trace.
    let side = ClassifiedTrace::new(&trace);
    let expected = report(&side, summary.structure.as_deref(), &Choices::with_exec_trace(Some((&et, "et.json.gz"))));
    assert_eq!(time, expected);
}

#[test]
fn a_graph_is_parsed_and_analysed() {
    let Imported::Graph { graph, report } = open_in_slices("g.json", GRAPH, 100).unwrap() else { panic!() };
    assert_eq!(graph.len(), 4);
    assert_eq!(report, analyse(&graph).report(&graph));
}

#[test]
fn a_cut_trace_fails_with_the_offset() {
    let plain = crate::decompress(TRITON, usize::MAX).unwrap().into_owned();
    let cut = &plain[..plain.len() / 2];
    match open_in_slices("cut.json", cut, 1000) {
        Err(e @ OpenError { detected: Detected { kind: FileKind::Trace(format), gzipped: false }, .. })
            if format.name() == "kineto" =>
        {
            assert!(e.error.to_string().contains("byte"), "{e:?}");
            assert!(e.message("cut.json").starts_with("cut.json is a PyTorch-profiler trace but cannot be read: "));
        }
        other => panic!("{other:?}"),
    }
    let gz_cut = &TRITON[..TRITON.len() / 2];
    let e = open_in_slices("cut.json.gz", gz_cut, 1000).unwrap_err();
    assert_eq!(e.detected, Detected { kind: trace_kind("kineto"), gzipped: true });
}

#[test]
fn an_unknown_file_keeps_only_its_head() {
    let noise: Vec<u8> = (0..DETECT_BYTES * 3).map(|i| b"lorem ipsum\n"[i % 12]).collect();
    let mut opener = FileOpener::new("x.txt");
    opener.feed(&noise[..DETECT_BYTES + 10]).unwrap();
    assert!(!opener.wants_more());
    match opener.finish().unwrap() {
        Imported::Unrecognised { detected, reason } => {
            assert_eq!(detected.kind, FileKind::Unknown);
            assert!(reason.contains("text"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_file_shorter_than_the_detection_prefix_is_known_by_its_end() {
    // The worker decides from this which kinds to analyse and which to send back: a small
    // graph must be known as a graph, though its bytes never filled the prefix.
    let mut opener = FileOpener::new("g.json");
    opener.feed(GRAPH).unwrap();
    assert!(GRAPH.len() < DETECT_BYTES);
    assert_eq!(opener.detected(), Detected { kind: FileKind::OpGraph, gzipped: false });
    assert!(opener.detected().kind.analysed_off_the_page());
}

#[test]
fn every_small_kind_is_parsed_by_the_one_dispatch() {
    let data = |rel: &str| {
        std::fs::read(format!("{}/tests/data/{rel}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap()
    };
    let csv = data("ops-csv/dit-xl_inference_tpuv5p_bs8.csv");
    match open_whole("dit-xl_inference_tpuv5p_bs8.csv", &csv).unwrap() {
        Imported::SimTable { text, table, inferred } => {
            assert_eq!(text.as_bytes(), csv);
            assert!(!table.rows.is_empty());
            assert_eq!(inferred.setup.model, "dit-xl");
        }
        other => panic!("{other:?}"),
    }
    let optrace = data("optrace/spec_example.optrace");
    assert!(matches!(open_whole("a.optrace", &optrace).unwrap(), Imported::OpTrace { graph, .. } if !graph.is_empty()));
    let calib = data("calibration/i7_12700k_with_fusion.json");
    assert!(matches!(open_whole("c.json", &calib).unwrap(), Imported::Calibration(_)));
    let model = data("models/models/llama2-13b.json");
    assert!(matches!(open_whole("m.json", &model).unwrap(), Imported::ModelConfig { text } if text.contains("llama")));
    let chip = br#"{"name": "mine", "peak_flops": 1e15, "hbm_bw_GBps": 3000}"#;
    assert!(matches!(open_whole("chip.json", chip).unwrap(), Imported::Chip(c) if c.name == "mine"));
    assert!(matches!(open_whole("empty", b""), Ok(Imported::Unrecognised { .. })));
}

#[test]
fn a_bad_small_file_names_its_kind_and_the_place() {
    let e = open_whole("bad.optrace", b"0:0:0 %1:<2x?xf16> = a.b.add(%0:<2xf16>)\n").unwrap_err();
    assert_eq!(e.detected.kind, FileKind::OpTrace);
    assert!(
        e.message("bad.optrace").starts_with("bad.optrace is an op trace but cannot be read: line 1"),
        "{}",
        e.message("bad.optrace")
    );
}

/// Bytes that start with the gzip magic and go on as garbage.
fn gzip_garbage(len: usize) -> Vec<u8> {
    let mut bytes = vec![0x1f, 0x8b];
    bytes.extend((0..len - 2).map(|i| (i * 7 % 251) as u8));
    bytes
}

#[test]
fn gzip_garbage_keeps_only_its_head_and_wants_no_more() {
    let garbage = gzip_garbage(DETECT_BYTES * 4);
    let mut opener = FileOpener::new("g.json.gz");
    let mut fed = 0;
    for slice in garbage.chunks(4096) {
        if !opener.wants_more() {
            break;
        }
        opener.feed(slice).unwrap();
        fed += slice.len();
    }
    assert!(fed <= DETECT_BYTES + 4096, "read {fed} bytes");
    assert_eq!(opener.detected(), Detected { kind: FileKind::Gzip, gzipped: true });
    assert_eq!(opener.into_gathered().unwrap().len(), DETECT_BYTES);
    // Fed whole in one slice, the same: only the head is kept.
    let mut opener = FileOpener::new("g.json.gz");
    opener.feed(&garbage).unwrap();
    assert!(!opener.wants_more());
    match opener.finish().unwrap() {
        Imported::Unrecognised { detected, reason } => {
            assert_eq!(detected, Detected { kind: FileKind::Gzip, gzipped: true });
            assert_eq!(reason, "it is gzip-compressed but its content could not be inflated");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_small_kind_past_its_budget_fails_as_the_slice_arrives() {
    let limit = text_budget(FileKind::SimOpsCsv).unwrap();
    let head = std::fs::read(format!(
        "{}/tests/data/ops-csv/dit-xl_inference_tpuv5p_bs8.csv",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    ))
    .unwrap();
    let mut opener = FileOpener::new("big.csv");
    opener.feed(&head).unwrap();
    opener.feed(&vec![b'\n'; DETECT_BYTES]).unwrap();
    assert_eq!(opener.detected().kind, FileKind::SimOpsCsv);
    // Zeros, so that the slice costs no memory until it is read (it is refused unread).
    let e = opener.feed(&vec![0u8; limit]).unwrap_err();
    assert_eq!(e.error, ReadError::from(ImportError::TooLarge { limit }));
    assert_eq!(
        e.message("big.csv"),
        "big.csv is a simulator op table but cannot be read: the file is larger than the limit of 256.00 MiB \
             (268,435,456 bytes) for this kind of file."
    );
}
