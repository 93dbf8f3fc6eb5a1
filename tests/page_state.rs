//! The page's state natively: every action through the reducer ([`State::apply`]), share
//! links restored and made, files opened through the core's dispatch, exactly as the page does
//! them (the page only wraps `apply` as Yew's `Reducible`).

mod state {
    use fusionscope::fusion::transformer::TransformerConfig;
    use fusionscope::page::form::transformer::{self, TransformerField};
    use fusionscope::page::form::WorkloadField;
    use fusionscope::page::{Action, Source, State};
    use fusionscope::share::{encode, SharedState, SharedView};

    fn reduce(s: State, a: Action) -> State {
        s.apply(a)
    }

    #[test]
    fn invalid_input_keeps_the_last_good_analysis() {
        let s = reduce(State::default(), Action::SetField(TransformerField::Hidden, "4097".into()));
        assert_eq!(
            s.current.as_ref().unwrap_err(),
            "These inputs cannot be analysed: hidden_dim 4097 is not divisible by num_heads 32."
        );
        assert_eq!(s.shown().unwrap().report.unfused.total, 2_348_810_240);
        assert!(s.shared_view().unwrap_err().starts_with("Nothing to share while the inputs are invalid"));
        let s = reduce(s, Action::SetField(TransformerField::Hidden, "2048".into()));
        assert!(s.current.is_ok());
        assert_ne!(s.shown().unwrap().report.unfused.total, 2_348_810_240);
    }

    #[test]
    fn a_share_fragment_restores_the_block_and_a_bad_one_says_why() {
        let config = TransformerConfig { seq_len: 128, hidden_dim: 256, num_heads: 4, dtype_bytes: 4 };
        let shared = SharedState {
            view: SharedView::Transformer { config },
            selected_op: Some("softmax".into()),
            chip: None,
            tab: None,
        };
        let s = State::from_fragment(&format!("#{}", encode(&shared)));
        assert!(matches!(&s.source, Source::Transformer(f) if transformer::config(f) == Ok(config)));
        assert_eq!(s.selected_op, Some(5), "softmax is the sixth op of the block");
        assert_eq!(s.shared_view(), Ok(shared));
        // An op name the graph lacks selects nothing.
        let edited = SharedState {
            view: SharedView::Transformer { config },
            selected_op: Some("nope".into()),
            chip: None,
            tab: None,
        };
        assert_eq!(State::from_fragment(&encode(&edited)).selected_op, None);
        let bad = State::from_fragment("#s=7.xyz");
        assert!(bad.notice.unwrap().text.contains("newer version of fusionscope (format 7)"));
        assert!(bad.current.is_ok(), "the default block is shown");
    }

    #[test]
    fn op_traces_and_simulator_tables_open_and_share() {
        use fusionscope::page::open::open_bytes;
        let text = include_str!("data/optrace/spec_example.optrace");
        let s = reduce(State::default(), open_bytes("spec_example.optrace", text.as_bytes(), 1));
        let Source::OpTrace { report, .. } = &s.source else { panic!("not an op trace: {:?}", s.notice) };
        assert_eq!(report.cases.len(), 7);
        // The results are the report's own analysis (the figures of `optrace --json`).
        assert_eq!(*s.shown().unwrap().report, report.analysis);
        // The link holds the text; opening it recomputes the same case view and analysis.
        let link = encode(&s.shared_view().expect("an op trace is shared"));
        let opened = State::from_fragment(&link);
        let Source::OpTrace { report: again, file_name, .. } = &opened.source else {
            panic!("the link does not open an op trace: {:?}", opened.notice)
        };
        assert_eq!((file_name.as_str(), &again.cases), ("spec_example.optrace", &report.cases));
        assert_eq!(*opened.shown().unwrap().report, report.analysis);
        let csv = include_str!("data/ops-csv/llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode.csv");
        let s =
            reduce(s, open_bytes("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode.csv", csv.as_bytes(), 2));
        let sim = s.sim.as_ref().expect("the simulator view is shown");
        assert_eq!(
            (sim.form.model.as_str(), sim.form.phase.as_str(), sim.form.numbers.get(WorkloadField::SeqLen)),
            ("llama3-8b", "decode", "1024")
        );
        // The link holds the rows and the workload; a fresh page shows the same view.
        let opened = State::from_fragment(&encode(&s.shared_view().expect("a simulator table is shared")));
        let back = opened.sim.as_ref().expect("the link opens the simulator view");
        assert_eq!(
            (&back.file_name, &*back.table, &back.form, &back.notes),
            (&sim.file_name, &*sim.table, &sim.form, &sim.notes)
        );
        // An invalid workload is not shared; the message names the field.
        let mut typo = sim.form.clone();
        typo.numbers.set(WorkloadField::Batch, "x".into());
        let bad = reduce(s.clone(), Action::SetSimForm(typo));
        assert!(bad
            .shared_view()
            .unwrap_err()
            .starts_with("Nothing to share while the workload is invalid: Batch size"));
        let s = reduce(s, Action::CloseSimTable);
        assert!(s.sim.is_none() && matches!(s.source, Source::OpTrace { .. }));
        let broken = reduce(s, open_bytes("bad.optrace", b"0:0:0 %1:<2x?xf16> = a.b.add(%0:<2xf16>)\n", 3));
        assert!(broken.notice.unwrap().text.starts_with("bad.optrace is an op trace but cannot be read: line 1:"));
    }

    /// A page never makes a link it would refuse to open, and a link over the limits (hand-made
    /// or from an older page) leaves the page usable, with a notice naming what was over.
    #[test]
    fn links_over_the_limits_are_neither_made_nor_opened() {
        use fusionscope::fusion::{json::to_file, random::random_graph};
        use fusionscope::page::open::open_bytes;
        let big = serde_json::to_vec(&to_file(&random_graph(5_001, 3))).unwrap();
        let s = reduce(State::default(), open_bytes("big.json", &big, 1));
        assert!(matches!(s.source, Source::Graph { .. }), "{:?}", s.notice);
        assert_eq!(
            s.shared_view().unwrap_err(),
            "This view is too large for a share link: the link's graph has 5,001 ops; a link holds at most 5,000. \
             Send the file instead."
        );
        // The link such a page would have made (encode does not check) opens to the default
        // block with the same words.
        let Source::Graph { graph, .. } = &s.source else { unreachable!() };
        let opened = State::from_fragment(&encode(&SharedView::of_graph("big.json", graph).into()));
        assert_eq!(
            opened.notice.as_ref().unwrap().text,
            "This share link cannot be opened: the link's graph has 5,001 ops; a link holds at most 5,000."
        );
        assert_eq!(opened.shown().unwrap().report.unfused.total, 2_348_810_240);
        // A 5,000-op graph is shared and opens.
        let fits = serde_json::to_vec(&to_file(&random_graph(5_000, 3))).unwrap();
        let s = reduce(State::default(), open_bytes("fits.json", &fits, 2));
        let opened = State::from_fragment(&encode(&s.shared_view().unwrap()));
        assert!(opened.notice.is_none() && matches!(opened.source, Source::Graph { .. }));
    }

    #[test]
    fn notices_do_not_change_the_figures() {
        let s = reduce(State::default(), Action::Fail("x.json cannot be opened".into()));
        assert_eq!(s.notice.as_ref().unwrap().text, "x.json cannot be opened");
        assert_eq!(s.shown().unwrap().report.unfused.total, 2_348_810_240);
        let s = reduce(s, Action::DismissNotice);
        assert!(s.notice.is_none());
    }
}

mod traces {
    use fusionscope::import::{open_whole, Imported};
    use fusionscope::page::form::transformer::TransformerField;
    use fusionscope::page::{compare_on_page, Action, ByAddress, LoadedTrace, PairSide, State, TraceHeld, TraceView};
    use fusionscope::share;

    const H100: &[u8] =
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/www/examples/hf_bert-small_eager_h100.json.gz"));
    const MI300X: &[u8] =
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/www/examples/hf_bert-small_eager_mi300x.json.gz"));

    fn reduce(s: State, a: Action) -> State {
        s.apply(a)
    }

    /// A trace held on the page (natively, as tests can; the page's own build has the analysis
    /// worker read every trace).
    fn loaded(id: u32, name: &str, bytes: &[u8]) -> LoadedTrace {
        let Ok(Imported::Trace { trace, summary, time, .. }) = open_whole(name, bytes) else {
            panic!("{name} is not a trace")
        };
        LoadedTrace {
            id,
            file_name: name.into(),
            summary: ByAddress::new(summary),
            time: ByAddress::new(time),
            held: TraceHeld::Page(ByAddress::new(trace)),
        }
    }

    fn open(s: State, id: u32, name: &str, bytes: &[u8]) -> State {
        reduce(s, Action::OpenTrace(loaded(id, name, bytes)))
    }

    /// The pair compared on the page and shown, as the page does after "Compare A with B".
    fn compare_pair(s: State) -> State {
        let (a, b) = s.traces.pair_traces().expect("a pair");
        let comparison = compare_on_page(a, b).expect("both held on the page");
        let files = (a.file_name.clone(), b.file_name.clone());
        reduce(s.clone(), Action::ShowComparison { files, comparison: ByAddress::new(comparison) })
    }

    const RANK0: &[u8] =
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/multirank/hta_sampled_128rank_rank0.json.gz"));
    const RANK1: &[u8] =
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/multirank/hta_sampled_128rank_rank1.json.gz"));

    /// The job report of these files, as the page's worker gives it (`page::ranks::job_of` over
    /// the rank summaries it folds while reading).
    fn job(files: &[(&str, &[u8])]) -> Option<fusionscope::analysis::ranks::JobReport> {
        let summaries: Vec<_> = files
            .iter()
            .map(|(name, bytes)| {
                let mut opener = fusionscope::import::FileOpener::with_ranks(name);
                opener.feed(bytes).unwrap();
                opener.finish_with_ranks(|_| None).unwrap().1.expect("a rank summary")
            })
            .collect();
        fusionscope::page::ranks::job_of(&summaries).unwrap()
    }

    #[test]
    fn ranks_opened_together_show_the_ranks_view_and_a_rank_opens_its_trace() {
        let (r0, r1) = ("hta_sampled_128rank_rank0.json.gz", "hta_sampled_128rank_rank1.json.gz");
        assert_eq!(job(&[(r0, RANK0)]), None, "one rank is no job");
        assert_eq!(job(&[(r0, RANK0), ("h100.json.gz", H100)]), None, "a trace without a rank is left out");
        let report = job(&[(r1, RANK1), (r0, RANK0)]).expect("two ranks");
        assert_eq!(report.ranks.iter().map(|e| e.rank).collect::<Vec<_>>(), vec![0, 1]);
        let s = open(State::default(), 1, r1, RANK1);
        let s = open(s, 2, r0, RANK0);
        let drawn = fusionscope::view::ranks::RanksDrawn::of(&report).unwrap();
        let s = reduce(s, Action::ShowRanks(ByAddress::new(drawn)));
        assert!(s.traces.job_shown && s.traces.view.is_none());
        assert_eq!(s.traces.rank_trace(0).map(|t| t.id), Some(2));
        assert_eq!(s.traces.rank_trace(1).map(|t| t.id), Some(1));
        assert!(s.traces.rank_trace(5).is_none());
        // A rank clicked: its trace view; the report stays to go back to.
        let t = reduce(s.clone(), Action::ShowTrace(2));
        assert!(!t.traces.job_shown);
        assert!(matches!(&t.traces.view, Some(TraceView::Summary { file_name, .. }) if file_name == r0));
        let back = reduce(t.clone(), Action::ShowJob);
        assert!(back.traces.job_shown && back.traces.view.is_none());
        // Leaving for the op graph hides it; a later trace's view replaces it.
        let g = reduce(s.clone(), Action::SetField(TransformerField::Hidden, "2048".into()));
        assert!(!g.traces.job_shown && g.traces.job.is_some());
        let c = reduce(s.clone(), Action::CloseTrace);
        assert!(!c.traces.job_shown);
        let later = open(s.clone(), 3, "h100.json.gz", H100);
        assert!(!later.traces.job_shown && later.traces.view.is_some());
        // A share link of the Ranks view: the figures (trimmed), which reopen the view; with
        // the rank files opened here, a rank still opens its trace.
        let shared = s.shared_view().expect("a link");
        assert!(matches!(shared.view, share::SharedView::Ranks { .. }));
        let link = share::encode(&shared);
        assert!(link.len() < 8 * 1024, "{} bytes", link.len());
        let opened = State::from_fragment(&link);
        assert!(opened.traces.job_shown && opened.notice.is_none());
        assert_eq!(opened.traces.job.as_ref().unwrap().headline, s.traces.job.as_ref().unwrap().headline);
        assert!(opened.traces.job.as_ref().unwrap().report_json.is_empty(), "no export text in a link");
        let restored = reduce(s.clone(), Action::Restore(Box::new(share::decode(&link).unwrap())));
        assert!(restored.traces.job_shown);
        assert_eq!(restored.traces.rank_trace(1).map(|t| t.id), Some(1));
        // A rank's trace removed: the report no longer holds.
        let removed = reduce(s, Action::RemoveTrace(1));
        assert_eq!((removed.traces.job.is_none(), removed.traces.job_shown), (true, false));
    }

    #[test]
    fn a_removed_rank_leaves_the_job_of_the_others() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/multirank/synthetic_small");
        let files: Vec<(String, Vec<u8>)> = (0..3)
            .map(|r| {
                let name = format!("synthetic_rank{r}.json");
                let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
                (name, bytes)
            })
            .collect();
        let all: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        let drawn = |files: &[(&str, &[u8])]| {
            ByAddress::new(fusionscope::view::ranks::RanksDrawn::of(&job(files).expect("a job")).unwrap())
        };
        let mut s = State::default();
        for (i, (name, bytes)) in all.iter().enumerate() {
            s = open(s, i as u32 + 1, name, bytes);
        }
        let s = reduce(s, Action::ShowRanks(drawn(&all)));
        assert_eq!(s.traces.job.as_ref().unwrap().ranks.len(), 3);
        // Rank 1 removed while the Ranks view shows: the job of ranks 0 and 2, shown again.
        let removed = reduce(s, Action::RemoveTrace(2));
        assert!(removed.traces.job.is_none());
        let rest = [all[0], all[2]];
        let redone = reduce(removed.clone(), Action::RedoneJob { job: drawn(&rest), show: true });
        assert!(redone.traces.job_shown && redone.traces.view.is_none());
        let ranks: Vec<u32> = redone.traces.job.as_ref().unwrap().ranks.iter().map(|(r, _)| *r).collect();
        assert_eq!(ranks, vec![0, 2]);
        assert_eq!(redone.traces.rank_trace(2).map(|t| t.id), Some(3));
        // A trace opened before the new report came: it stays shown, the job is held.
        let later = open(removed, 9, "h100.json.gz", H100);
        let held = reduce(later, Action::RedoneJob { job: drawn(&rest), show: true });
        assert!(!held.traces.job_shown && held.traces.job.is_some());
        assert!(matches!(&held.traces.view, Some(TraceView::Summary { file_name, .. }) if file_name == "h100.json.gz"));
    }

    #[test]
    fn a_stopped_worker_takes_its_traces_with_it_and_says_which() {
        let in_worker = |id, name: &str, bytes| LoadedTrace { held: TraceHeld::Worker, ..loaded(id, name, bytes) };
        let s = reduce(State::default(), Action::OpenTrace(in_worker(1, "h100.json.gz", H100)));
        let s = reduce(s, Action::OpenTrace(in_worker(2, "mi300x.json.gz", MI300X)));
        let s = open(s, 3, "local.json.gz", H100);
        assert_eq!(s.traces.pair, Some((2, 3)));
        let why =
            "The analysis worker ran out of memory reading big.json.gz at 2.10 GiB of 3.00 GiB; it was restarted.";
        let s = reduce(s, Action::WorkerStopped(why.into()));
        let notice = s.notice.as_ref().expect("a notice");
        assert!(notice.is_error);
        assert_eq!(
            notice.text,
            format!("{why} The traces it held (h100.json.gz, mi300x.json.gz) are no longer listed: open them again to compare.")
        );
        assert_eq!(s.traces.opened.iter().map(|t| t.id).collect::<Vec<_>>(), vec![3]);
        assert_eq!(s.traces.pair, None, "one trace left: nothing to pair");
        // The summary shown stays readable, and the page's figures are untouched.
        assert!(matches!(&s.traces.view, Some(TraceView::Summary { file_name, .. }) if file_name == "local.json.gz"));
        assert!(s.current.is_ok());
        // With no trace held, the message is only what happened.
        let s = reduce(State::default(), Action::WorkerStopped(why.into()));
        assert_eq!(s.notice.unwrap().text, why);
    }

    #[test]
    fn a_capture_trace_joins_the_replay_it_belongs_to_and_says_so() {
        let data =
            |f: &str| std::fs::read(format!("{}/tests/data/traces/amd/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let replay_bytes = data("vllm_decode_graph_full_replay.json.gz");
        let capture_bytes = data("vllm_decode_graph_full_capture.json.gz");
        let s = open(State::default(), 1, "replay.json.gz", &replay_bytes);
        let s = open(s, 2, "h100.json.gz", H100);
        assert_eq!(s.traces.get(1).unwrap().time.unattributed.events, 421, "graph kernels have no op before");
        // What the worker does on opening the capture: join it, and report the new figures.
        let (Ok(Imported::Trace { trace: replay, .. }), Ok(Imported::Trace { trace: capture, .. })) =
            (open_whole("r", &replay_bytes), open_whole("c", &capture_bytes))
        else {
            panic!("traces")
        };
        assert_eq!(fusionscope::analysis::capture::captured_graph_count(&capture), Some(1));
        let (joined, report) = fusionscope::analysis::capture::attribute(&replay, &capture).unwrap();
        let side = fusionscope::analysis::summary::ClassifiedTrace::new(&joined);
        let mut time = fusionscope::analysis::pipeline::time_report(&side, &Default::default());
        time.capture = Some(report);
        let s = reduce(
            s,
            Action::CaptureOpened {
                file_name: "capture.json.gz".into(),
                graphs: 1,
                joined: vec![(1, ByAddress::new(time))],
            },
        );
        let joined_time = &s.traces.get(1).unwrap().time;
        assert_eq!(joined_time.unattributed.events, 0);
        assert!(joined_time.ops.iter().any(|r| r.op == "aten::addmm" && r.calls == 24));
        assert_eq!(s.traces.get(2).unwrap().time.unattributed.events, 0, "the other trace is unchanged");
        let notice = s.notice.as_ref().unwrap();
        assert!(!notice.is_error);
        assert!(
            notice.text.starts_with("capture.json.gz (a graph capture) was joined to replay.json.gz. Capture: 1 of 1"),
            "{}",
            notice.text
        );
        // The view shows the joined trace's new report.
        assert!(matches!(&s.traces.view, Some(TraceView::Summary { file_name, time: Some(t), .. })
            if file_name == "replay.json.gz" && t.capture.is_some()));
        // A capture that joins nothing (yet) says what it is for.
        let s = reduce(s, Action::CaptureOpened { file_name: "c2.json.gz".into(), graphs: 25, joined: Vec::new() });
        assert!(s
            .notice
            .unwrap()
            .text
            .starts_with("c2.json.gz is a graph-capture trace (25 graphs captured): the traces of its replays opened with it or after it"));
    }

    #[test]
    fn an_execution_trace_links_to_its_run_and_says_so_or_why_not() {
        let data =
            |f: &str| std::fs::read(format!("{}/tests/data/exec-trace/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (kineto, et_bytes) = (data("hta_simple_add_kineto.json.gz"), data("hta_simple_add_et.json.gz"));
        // Dropped alone: it needs its Kineto trace (opened through the page's dispatch).
        let s = reduce(State::default(), fusionscope::page::open::open_bytes("add_et.json.gz", &et_bytes, 1));
        let notice = s.notice.clone().unwrap();
        assert!(!notice.is_error);
        assert_eq!(
            notice.text,
            "add_et.json.gz is an execution trace (36 ops): it needs the Kineto trace of the same run. Drop both \
             together, or the trace now: its fusion then takes the exact data flow from the execution trace."
        );
        // What the worker does when it is dropped onto its trace: the op table and fusion
        // again, with it.
        let s = open(s, 2, "add.json.gz", &kineto);
        assert!(s.traces.get(2).unwrap().time.fusion.as_ref().unwrap().exec_trace.is_none());
        let Ok(Imported::Trace { trace, summary, time, .. }) = open_whole("add.json.gz", &kineto) else {
            panic!("trace")
        };
        let Ok(Imported::ExecTrace(et)) = open_whole("add_et.json.gz", &et_bytes) else { panic!("exec trace") };
        let side = fusionscope::analysis::summary::ClassifiedTrace::new(&trace);
        let mut linked = time.clone();
        fusionscope::analysis::pipeline::add_exec_trace(
            &mut linked,
            &side,
            summary.structure.as_deref(),
            (&et, "add_et.json.gz"),
        );
        let e = linked.fusion.as_ref().unwrap().exec_trace.clone().unwrap();
        assert_eq!((e.ops, e.linked_ops, e.linked_kernels), (36, 36, 4));
        let action = |joined, unlinked| Action::ExecTraceOpened {
            file_name: "add_et.json.gz".into(),
            ops: 36,
            joined,
            unlinked,
        };
        let s2 = reduce(s.clone(), action(vec![(2, ByAddress::new(linked))], Vec::new()));
        let notice = s2.notice.clone().unwrap();
        assert!(!notice.is_error);
        assert_eq!(
            notice.text,
            "add_et.json.gz (an execution trace of 36 ops) was linked to add.json.gz: its fusion now takes the data \
             flow from it. Execution trace add_et.json.gz: 36 of its 36 ops linked to this trace's CPU ops (100.00 %); \
             the hand-offs of 4 kernel launches are exact (its tensor ids)."
        );
        assert!(matches!(&s2.traces.view, Some(TraceView::Summary { time: Some(t), .. })
            if t.fusion.as_ref().is_some_and(|f| f.exec_trace.is_some())));
        // Of another run: an error naming the file and the traces it does not link to.
        let s3 = reduce(s, action(Vec::new(), vec!["add.json.gz".into()]));
        let notice = s3.notice.unwrap();
        assert!(notice.is_error);
        assert!(
            notice.text.starts_with(
                "add_et.json.gz is an execution trace of another run: none of its 36 ops has a CPU op with its \
                 record-function id and name in add.json.gz."
            ),
            "{}",
            notice.text
        );
    }

    #[test]
    fn a_trace_opening_with_an_execution_trace_of_another_run_gets_an_alert() {
        use fusionscope::page::open::{action_of, Opened};
        let data =
            |f: &str| std::fs::read(format!("{}/tests/data/exec-trace/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        // What the worker sends when a trace opens while another run's ET waits for its trace:
        // the trace opened with that ET (nothing linked).
        let (kineto, et_bytes) = (data("hta_simple_add_kineto.json.gz"), data("param_linear_et.json.gz"));
        let Ok(Imported::ExecTrace(et)) = open_whole("linear_et.json.gz", &et_bytes) else { panic!("exec trace") };
        let mut opener = fusionscope::import::FileOpener::new("add.json.gz");
        opener.feed(&kineto).unwrap();
        let Ok((Imported::Trace { summary, time, .. }, _)) =
            opener.finish_with_ranks(|_| Some((&et, "linear_et.json.gz")))
        else {
            panic!("trace")
        };
        let e = time.fusion.as_ref().unwrap().exec_trace.clone().unwrap();
        assert_eq!(e.linked_ops, 0);
        let s = reduce(State::default(), action_of("add.json.gz", Opened::TraceInWorker { summary, time }, 3));
        let notice = s.notice.clone().expect("an alert");
        assert!(notice.is_error);
        assert_eq!(
            notice.text,
            format!(
                "linear_et.json.gz is an execution trace of another run: none of its {} ops has a CPU op with its \
                 record-function id and name in add.json.gz. Drop it with the Kineto trace of the same run.",
                e.ops
            )
        );
        // The trace is open all the same.
        assert!(s.traces.get(3).is_some());
        // A trace opening on its own (no execution trace) gets no notice.
        let s = open(State::default(), 4, "add.json.gz", &kineto);
        assert!(s.notice.is_none());
    }

    /// The open view of the results: kept as traces open, carried by a share link (unless it
    /// is the overview every link opens in), and named in the address without one.
    #[test]
    fn the_open_view_stays_and_travels_in_links() {
        use fusionscope::page::ResultsTab;
        let s = open(State::default(), 1, "h100.json.gz", H100);
        assert_eq!(s.traces.tab, ResultsTab::Overview);
        let s = reduce(s, Action::ShowTab(ResultsTab::Fusion));
        let s = open(s, 2, "mi300x.json.gz", MI300X);
        let s = compare_pair(s);
        assert_eq!(s.traces.tab, ResultsTab::Fusion, "a new result opens in the view the reader had open");
        let link = s.shared_view().unwrap();
        assert_eq!(link.tab.as_deref(), Some("fusion"));
        assert_eq!(State::from_fragment(&share::encode(&link)).traces.tab, ResultsTab::Fusion);
        let overview = reduce(s, Action::ShowTab(ResultsTab::Overview));
        assert_eq!(overview.shared_view().unwrap().tab, None);
        assert_eq!(State::from_fragment("#view=time").traces.tab, ResultsTab::Time);
        let edited = State::from_fragment("#view=nonsense");
        assert_eq!(edited.traces.tab, ResultsTab::Overview);
        assert!(edited.notice.is_none(), "a view fragment is not a link");
        for t in ResultsTab::ALL {
            assert_eq!(ResultsTab::from_id(t.id()), Some(t));
        }
    }

    #[test]
    fn traces_open_compare_share_and_close() {
        let s = open(State::default(), 1, "h100.json.gz", H100);
        let Some(TraceView::Summary { summary, .. }) = &s.traces.view else { panic!("no summary") };
        assert_eq!(summary.platforms[0].kernels, 60);
        assert_eq!(s.traces.pair, None);
        let s = open(s, 2, "mi300x.json.gz", MI300X);
        assert_eq!(s.traces.pair, Some((1, 2)));
        let s = compare_pair(s);
        let Some(TraceView::Comparison { comparison, files, .. }) = &s.traces.view else { panic!("no comparison") };
        assert_eq!(files, &("h100.json.gz".to_string(), "mi300x.json.gz".to_string()));
        assert_eq!(comparison.time_ratio, "amd / nvidia");
        // The link restores the comparison in a fresh page.
        let fragment = share::encode(&s.shared_view().unwrap());
        let restored = State::from_fragment(&fragment);
        assert!(
            matches!(&restored.traces.view, Some(TraceView::Comparison { comparison: c, .. }) if c.categories.len() == comparison.categories.len())
        );
        // The reviewer reads the sender's verdict and findings, word for word (the link trims
        // the reports they were computed from).
        let sent = s.traces.view.as_ref().unwrap().overview();
        assert!(sent.verdict.text.contains("(AMD)") && sent.verdict.text.contains("(NVIDIA)"), "{sent:?}");
        assert!(!sent.findings.is_empty());
        assert_eq!(**restored.traces.view.as_ref().unwrap().overview(), **sent);
        // Closing returns to the block; the traces stay for another comparison.
        let s = reduce(s, Action::CloseTrace);
        assert!(s.traces.view.is_none() && s.traces.opened.len() == 2);
        assert!(s.current.is_ok());
    }

    #[test]
    fn a_chip_pick_remeasures_the_trace_and_a_comparison_carries_the_gap_in_its_order() {
        let s = open(State::default(), 1, "h100.json.gz", H100);
        let chip_of = |s: &State| match &s.traces.view {
            Some(TraceView::Summary { time: Some(t), .. }) => t.chip.clone().map(|c| (c.name, c.detected_from)),
            other => panic!("no time report: {other:?}"),
        };
        assert_eq!(chip_of(&s), Some(("H100 SXM".into(), "device name \"NVIDIA H100 80GB HBM3\"".into())));
        let s = reduce(s, Action::TraceChip("mi300x".into()));
        assert_eq!(chip_of(&s), Some(("MI300X".into(), "picked on the page".into())));
        // The trace keeps the pick, so a comparison made afterwards uses it.
        assert_eq!(s.traces.opened[0].time.chip.as_ref().unwrap().name, "MI300X");
        let unchanged = reduce(s.clone(), Action::TraceChip(String::new()));
        assert_eq!(unchanged.traces, s.traces);
        let s = reduce(s, Action::TraceChip("h100".into()));
        let s = compare_pair(open(s, 2, "mi300x.json.gz", MI300X));
        let Some(TraceView::Comparison { comparison, gap: Some(g), .. }) = &s.traces.view else { panic!("no gap") };
        // AMD first, as the comparison orders its sides, whichever was opened first.
        assert_eq!(comparison.platforms[0].key, "amd");
        let times = g.times.as_ref().expect("both reports");
        assert_eq!(times[0].chip.as_ref().unwrap().name, "MI300X");
        assert_eq!(times[1].chip.as_ref().unwrap().name, "H100 SXM");
        // Every side's rows plus its unattributed time are its GPU time.
        for (i, key) in ["amd", "nvidia"].into_iter().enumerate() {
            let rows: f64 = g.gap.rows.iter().filter_map(|r| r.sides[key].as_ref()).map(|s| s.kernel_time_us).sum();
            let total = rows + g.gap.unattributed_us[key];
            assert!((total - times[i].op_coverage.gpu_time_us).abs() < 0.01, "{key}: {total}");
            assert_eq!(g.gap.headline.gpu_time_us[key], times[i].op_coverage.gpu_time_us);
        }
    }

    #[test]
    fn any_two_of_several_traces_can_be_picked_and_one_removed() {
        let s = open(State::default(), 1, "a100.json.gz", H100);
        let s = open(s, 2, "mi300x.json.gz", MI300X);
        let s = open(s, 3, "h100.json.gz", H100);
        // The latest NVIDIA and the latest AMD trace, in opening order.
        assert_eq!(s.traces.pair, Some((2, 3)));
        let s = reduce(s, Action::PickTrace(PairSide::A, 1));
        assert_eq!(s.traces.pair, Some((1, 3)));
        // Picking B's trace as A swaps the two.
        let s = reduce(s, Action::PickTrace(PairSide::A, 3));
        assert_eq!(s.traces.pair, Some((3, 1)));
        let s = compare_pair(s);
        let Some(TraceView::Comparison { files, .. }) = &s.traces.view else { panic!("no comparison") };
        assert_eq!(files, &("h100.json.gz".to_string(), "a100.json.gz".to_string()));
        // Removing a trace of the pair falls back to the default pair of those left.
        let s = reduce(s, Action::ShowTrace(1));
        let s = reduce(s, Action::RemoveTrace(1));
        assert_eq!(s.traces.opened.iter().map(|t| t.id).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(s.traces.pair, Some((2, 3)));
        assert!(s.traces.view.is_none(), "the removed trace's summary is no longer shown");
        let s = reduce(s, Action::RemoveTrace(2));
        assert_eq!(s.traces.pair, None);
    }
}
