//! The page's analysis worker (the `fusionscope-reader` binary, run as a Web Worker): it reads
//! files, parses and analyses them, keeps the traces and compares them, so that no file
//! however large stalls the page's thread.
//!
//! A file is read a piece at a time ([`super::file_bytes`]: its stream into one 4 MiB buffer,
//! awaited, so the worker keeps answering messages between pieces) and each piece goes
//! straight to the core's
//! incremental [`FileOpener`]: a Kineto trace (gzip or not) streams through the
//! [`formats::TraceReader`], so memory stays at the compact trace plus one slice, and the
//! progress posted (at most ten times a second) is true. What comes back to the page is the
//! *result*, serialised: a trace's summary, a graph in its file form with its analysis, never
//! the file.
//! Kinds this worker does not analyse (op traces, simulator CSVs, configurations: small files
//! shown by the page's own views) come back as their bytes, for the same dispatch on the page
//! (`page::open::open_bytes`).
//!
//! **Why the worker keeps the traces.** Comparing two traces needs both whole traces (their
//! kernels, CPU ops and launch calls), not their summaries. The worker is persistent and keeps
//! every trace it read under the page's job id; the page holds only the summary and the id,
//! and asks "compare a b". The alternative, posting a serialised trace for the page to hand
//! back, would copy tens of megabytes through the page on every comparison and would need a
//! binary format for the trace; keeping them where they were parsed costs nothing. The price is
//! that a worker that dies (out of memory) loses its traces: the page then says which to open
//! again. Cancelling is a message (checked between slices), not terminating the worker, so the
//! other traces survive a cancelled read.
//!
//! **Two files at once.** The page runs this worker twice. The first keeps every trace; the
//! second, when two files are dropped together, reads one of them at the same time (an `Open`
//! with `hand_back`), analyses it, and sends the trace back as bytes (`analysis::wire`) with its
//! summary and report, which the first then keeps (`Adopt`) as if it had read the file. A
//! comparison thus always finds both traces in the first worker, and the second holds nothing.
//!
//! **Ranks.** Each trace is read with its rank summary (`analysis::ranks`, in the same pass), kept
//! beside it; `Request::Ranks` gives the job report of those that are ranks of a distributed
//! job, the figures of `fusionscope ranks` (a trace read by the second worker brings its
//! summary along).
//!
//! **Capture traces.** A graph-capture trace (`analysis::capture`) is not listed as a trace: this
//! worker keeps it and joins it to every trace it holds, or later reads, whose graph replays it
//! captured, answering with their new reports.
//!
//! **Execution traces.** A PyTorch execution trace (`analysis::exec_trace`) is not a trace either:
//! it is kept, and linked (record-function id and op name) to every held trace and every trace
//! read later, whose op table and fusion take its shapes and exact data flow, as `fusionscope
//! trace K --exec-trace ET` gives them. A trace read later is opened with it (the opener picks
//! it once the trace is read: [`FileOpener::finish_with_ranks`]), so its report is made once; a
//! held trace, or one the second worker read, gets its op table and fusion again with it. The
//! second worker does not read one: it holds no traces to link it to, so it leaves the file to
//! the first (which reads it again).
//!
//! The messages are [`page::protocol`]'s [`Request`] and [`Reply`], as JavaScript values
//! made by `serde-wasm-bindgen`; a request to open a file is the array `[request, file]`.

use std::cell::{Cell, RefCell};

use js_sys::Array;
use rustc_hash::{FxHashMap, FxHashSet};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent};

use super::file_bytes::FileBytes;
use analysis::capture::{attribute, captured_graph_count};
use analysis::compare::{compare, Input};
use analysis::exec_trace::{link, ExecTrace};
use analysis::pipeline::{add_exec_trace, report, set_fusion, Choices, TraceTime};
use analysis::provenance::{self, CompileLog, CompiledKernels};
use analysis::ranks::RankSummary;
use analysis::structure::{Structure, TraceStructure};
use analysis::summary::ClassifiedTrace;
use analysis::wire;
use analysis::TraceSummary;
use fusion::json::to_file;
use import::FileKind;
use import::{FileOpener, Imported};
use page::protocol::{Json, Reply, Request};
use trace::Trace;
use view::ranks::RanksDrawn;

/// A read's progress is posted at most this often (and at its last slice). Each post costs the
/// page a render and a paint of the whole document (about 8 ms of its thread); posted once per
/// slice, a 1 GB read drew the page 240 times, 2 s of the thread that, on two cores, shares the
/// second one with the browser's own threads while the worker parses. Ten a second move the
/// bar as smoothly.
const PROGRESS_EVERY_MS: f64 = 100.0;

/// A trace the worker keeps, for comparisons.
struct Held {
    name: String,
    trace: Trace,
    /// A capture trace's ops were joined to it (it is not joined again).
    joined: bool,
    /// Its steps and layers (the summary's), for its fusion when an execution trace comes.
    structure: Option<Box<Structure>>,
    /// Its structure search, for its comparisons (`None`: nothing found).
    search: Option<Box<TraceStructure>>,
    /// Its report as sent, and the index in `EXEC_TRACES` of the execution trace its fusion
    /// used, if any.
    time: TraceTime,
    exec_trace: Option<usize>,
}

/// An execution trace the worker keeps, to link to the Kineto trace of its run.
struct HeldEt {
    name: String,
    et: ExecTrace,
    /// No trace has been tried against it yet: the next trace read is taken to be its run's
    /// (and, if nothing links, says it is of another run). A cell: it is cleared while the
    /// opener borrows the execution trace it picked.
    waiting: Cell<bool>,
}

thread_local! {
    /// The traces read, by job id.
    static TRACES: RefCell<FxHashMap<u32, Held>> = RefCell::default();
    /// The rank summary of each trace held, by job id.
    static RANKS: RefCell<FxHashMap<u32, RankSummary>> = RefCell::default();
    /// The graph-capture traces read (`analysis::capture`), joined to each replay they match.
    static CAPTURES: RefCell<Vec<Trace>> = RefCell::default();
    /// The execution traces read, linked to each trace of their run.
    static EXEC_TRACES: RefCell<Vec<HeldEt>> = RefCell::default();
    /// The torch.compile logs read (by file name), joined to each trace of their run.
    static COMPILE_LOGS: RefCell<Vec<(String, CompileLog)>> = RefCell::default();
    /// Jobs the page cancelled that have not stopped yet.
    static CANCELLED: RefCell<FxHashSet<u32>> = RefCell::default();
}

/// A JavaScript error's message.
pub fn describe(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Sends a reply to the page.
fn post(reply: &Reply) {
    match serde_wasm_bindgen::to_value(reply) {
        Ok(value) => {
            let _ = scope().post_message(&value);
        }
        // Not expected (every reply is plain data); say so rather than leave the page waiting.
        Err(e) => {
            let text = format!("a reply could not be encoded: {e}");
            if let Ok(value) = serde_wasm_bindgen::to_value(&Reply::Panic { message: text }) {
                let _ = scope().post_message(&value);
            }
        }
    }
}

/// Installs the message handler; the worker then waits for work.
pub fn start() {
    // A bug would otherwise surface on the page as "unreachable": say what it was.
    std::panic::set_hook(Box::new(|info| post(&Reply::Panic { message: info.to_string() })));
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |e: MessageEvent| {
        super::warm_up::interrupt();
        let data = e.data();
        let (request, file) = match data.dyn_ref::<Array>() {
            Some(parts) => (parts.get(0), parts.get(1)),
            None => (data.clone(), JsValue::UNDEFINED),
        };
        match serde_wasm_bindgen::from_value::<Request>(request) {
            Ok(request) => handle(request, file),
            Err(e) => post(&Reply::Panic { message: format!("the page sent a request this worker cannot read: {e}") }),
        }
    });
    let scope = scope();
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // lives as long as the worker
                         // Messages sent before the handler existed would be lost: the page waits for this.
    post(&Reply::Ready);
    // Idle until the first request: the code of reading and analysing is readied meanwhile.
    wasm_bindgen_futures::spawn_local(super::warm_up::warm_up());
}

fn handle(request: Request, file: JsValue) {
    match request {
        Request::Open { job, name, hand_back } => match file.dyn_into::<Blob>() {
            Ok(blob) => wasm_bindgen_futures::spawn_local(open(job, blob, name, hand_back)),
            Err(_) => post(&Reply::Error { job, message: "the worker was sent something that is not a file".into() }),
        },
        Request::Cancel { job } => {
            CANCELLED.with(|c| c.borrow_mut().insert(job));
        }
        Request::Compare { job, a, b } => post(&match compare_held(a, b) {
            Ok(comparison) => Reply::Comparison { job, comparison },
            Err(message) => Reply::Error { job, message },
        }),
        // The second worker holds no execution trace: one held here is added to the report.
        Request::Adopt { job, name, bytes, summary, time, rank } => {
            let adopted = wire::from_bytes(&bytes).map_err(|e| e.to_string()).and_then(|(trace, search)| {
                let decoded = summary.decode().and_then(|summary| Ok((summary, time.decode()?)));
                let rank = rank.map(|r| r.decode()).transpose();
                decoded.and_then(|(s, t)| Ok((trace, search, s, t, rank?))).map_err(|e| e.to_string())
            });
            drop(bytes);
            post(&match adopted {
                Ok((trace, search, summary, mut time, rank)) => {
                    let et = (captured_graph_count(&trace).is_none()).then(|| exec_trace_for(&trace)).flatten();
                    if let Some(et) = et {
                        with_held_exec_trace(&mut time, &trace, summary.structure.as_deref(), et);
                    }
                    let search = search.map(Box::new);
                    reply_of(job, name, Imported::Trace { trace, summary, time, search }, rank, et)
                }
                Err(e) => {
                    Reply::Error { job, message: format!("{name}: the trace read beside it cannot be kept: {e}") }
                }
            })
        }
        Request::Forget { job } => {
            TRACES.with(|t| t.borrow_mut().remove(&job));
            RANKS.with(|r| r.borrow_mut().remove(&job));
        }
        Request::Ranks { job, ids } => post(&ranks_reply(job, &ids)),
    }
}

/// The job report of the held traces among `ids` that are ranks.
fn ranks_reply(job: u32, ids: &[u32]) -> Reply {
    let report = RANKS.with(|r| {
        let held = r.borrow();
        page::ranks::job_of(ids.iter().filter_map(|id| held.get(id)))
    });
    let drawn = |r: &analysis::ranks::JobReport| RanksDrawn::of(r).and_then(|d| Json::encode(&d));
    match report.and_then(|r| r.as_ref().map(drawn).transpose().map_err(|e| e.to_string())) {
        Ok(report) => Reply::Ranks { job, report },
        Err(message) => Reply::Error { job, message: format!("the traces are not one job's ranks: {message}") },
    }
}

/// The worker's WebAssembly memory: it only grows, so at a crash it is the peak.
fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

/// Whether the page cancelled `job` (and forgets it: a job is only asked once it ended).
fn take_cancelled(job: u32) -> bool {
    CANCELLED.with(|c| c.borrow_mut().remove(&job))
}

fn is_cancelled(job: u32) -> bool {
    CANCELLED.with(|c| c.borrow().contains(&job))
}

/// Reads, opens and answers one file.
async fn open(job: u32, blob: Blob, name: String, hand_back: bool) {
    let result = read_and_open(job, &blob, &name, hand_back).await;
    if take_cancelled(job) {
        return post(&Reply::Cancelled { job });
    }
    let reply = match result {
        Ok(None) => Reply::Cancelled { job },
        Ok(Some(Read::Bytes(bytes))) => Reply::Bytes { job, bytes },
        Ok(Some(Read::Opened(opened))) => match *opened {
            (Imported::Trace { trace, summary, time, search }, rank, _) if hand_back => {
                hand_back_reply(job, &name, (&trace, search.as_deref()), &summary, &time, rank.as_ref())
            }
            (opened, rank, exec_trace) => reply_of(job, name, opened, rank, exec_trace),
        },
        Err(message) => Reply::Error { job, message },
    };
    post(&reply);
}

/// The reply for a file the worker opened; a trace stays here under the job's id, with the
/// index of the held execution trace its report was made with (`exec_trace`).
fn reply_of(job: u32, name: String, opened: Imported, rank: Option<RankSummary>, exec_trace: Option<usize>) -> Reply {
    match opened {
        Imported::Trace { trace, summary, time, search } => {
            if let Some(graphs) = captured_graph_count(&trace) {
                return capture_reply(job, trace, graphs);
            }
            let structure = summary.structure.clone();
            // A trace joined to its capture is another trace: its search is made again.
            let (trace, time, joined, search) =
                match CAPTURES.with(|c| c.borrow().iter().find_map(|c| join(&trace, c, exec_trace))) {
                    Some((joined, time)) => (joined, time, true, None),
                    None => (trace, time, false, search),
                };
            let (trace, time) = with_held_compile_log(trace, time, structure.as_deref(), exec_trace);
            match (Json::encode(&summary), Json::encode(&time)) {
                (Ok(summary), Ok(sent)) => {
                    let held = Held { name, trace, joined, structure, search, time, exec_trace };
                    TRACES.with(|t| t.borrow_mut().insert(job, held));
                    let time = sent;
                    if let Some(rank) = rank {
                        RANKS.with(|r| r.borrow_mut().insert(job, rank));
                    }
                    Reply::Trace { job, summary, time }
                }
                (Err(e), _) | (_, Err(e)) => {
                    Reply::Error { job, message: format!("{name}: the summary cannot be sent: {e}") }
                }
            }
        }
        // Two texts, so that the page can decode them in separate tasks.
        Imported::Graph { graph, report } => match (Json::encode(&to_file(&graph)), Json::encode(&report)) {
            (Ok(graph), Ok(report)) => Reply::Graph { job, graph, report },
            (Err(e), _) | (_, Err(e)) => {
                Reply::Error { job, message: format!("{name}: the analysis cannot be sent: {e}") }
            }
        },
        Imported::ExecTrace(et) => exec_trace_reply(job, name, et),
        Imported::CompileLog(log) => compile_log_reply(job, name, log),
        _ => Reply::Error { job, message: format!("{name}: the worker opened a kind the page opens itself") },
    }
}

/// The execution trace a trace being opened takes: the latest held one that links to it, else
/// the latest one still waiting for its trace (its fusion then says it is of another run, and
/// it waits no more).
fn exec_trace_for(trace: &Trace) -> Option<usize> {
    EXEC_TRACES.with(|e| pick_exec_trace(&e.borrow(), trace))
}

/// [`exec_trace_for`] among `ets`.
fn pick_exec_trace(ets: &[HeldEt], trace: &Trace) -> Option<usize> {
    let linked = ets.iter().rposition(|h| link(trace, &h.et).linked_ops > 0);
    let chosen = linked.or_else(|| ets.iter().rposition(|h| h.waiting.get()));
    if let Some(i) = chosen {
        ets[i].waiting.set(false);
    }
    chosen
}

/// `time`'s op table and fusion again, with the held execution trace `et` (for a trace whose
/// report was made without it: held before it came, or read by the second worker).
fn with_held_exec_trace(time: &mut TraceTime, trace: &Trace, structure: Option<&Structure>, et: usize) {
    EXEC_TRACES.with(|e| {
        if let Some(h) = e.borrow().get(et) {
            let side = ClassifiedTrace::new(trace);
            add_exec_trace(time, &side, structure, (&h.et, h.name.as_str()));
        }
    })
}

/// An execution trace is kept and linked to every held trace of its run (in place of one it
/// was linked to before), whose new reports go back; the others are named.
fn exec_trace_reply(job: u32, name: String, et: ExecTrace) -> Reply {
    let ops = et.nodes.iter().filter(|n| n.is_op()).count() as u64;
    let index = EXEC_TRACES.with(|e| e.borrow().len());
    let (mut joined, mut unlinked) = (Vec::new(), Vec::new());
    let mut fail = None;
    let waiting = TRACES.with(|t| {
        let mut traces = t.borrow_mut();
        let mut ids: Vec<u32> = traces.keys().copied().collect();
        ids.sort_unstable();
        for id in &ids {
            let Some(held) = traces.get_mut(id) else { continue };
            if link(&held.trace, &et).linked_ops == 0 {
                unlinked.push(held.name.clone());
                continue;
            }
            let side = ClassifiedTrace::new(&held.trace);
            let mut time = held.time.clone();
            add_exec_trace(&mut time, &side, held.structure.as_deref(), (&et, name.as_str()));
            match Json::encode(&time) {
                Ok(sent) => {
                    held.time = time;
                    held.exec_trace = Some(index);
                    joined.push((*id, sent));
                }
                Err(e) => fail = Some(format!("{name}: the linked trace's report cannot be sent: {e}")),
            }
        }
        ids.is_empty()
    });
    EXEC_TRACES.with(|e| e.borrow_mut().push(HeldEt { name, et, waiting: Cell::new(waiting) }));
    match fail {
        Some(message) => Reply::Error { job, message },
        None => Reply::ExecTrace { job, ops, joined, unlinked },
    }
}

/// A compile log is kept and joined to every held trace of its run, whose new reports (their
/// compiled kernels' groups the log's) go back with the log's kernels.
fn compile_log_reply(job: u32, name: String, log: CompileLog) -> Reply {
    let mut joined = Vec::new();
    let mut fail = None;
    TRACES.with(|t| {
        let mut traces = t.borrow_mut();
        let mut ids: Vec<u32> = traces.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(held) = traces.get_mut(&id) else { continue };
            let Some(time) =
                joined_report(&mut held.trace, &held.time, held.structure.as_deref(), held.exec_trace, (&name, &log))
            else {
                continue;
            };
            match Json::encode(&time) {
                Ok(sent) => {
                    held.time = time;
                    joined.push((id, sent));
                }
                Err(e) => fail = Some(format!("{name}: the joined trace's report cannot be sent: {e}")),
            }
        }
    });
    let kernels = Json::encode(&CompiledKernels::of(&name, &log, None));
    COMPILE_LOGS.with(|l| l.borrow_mut().push((name.clone(), log)));
    match (fail, kernels) {
        (Some(message), _) => Reply::Error { job, message },
        (None, Err(e)) => Reply::Error { job, message: format!("{name}: its kernels cannot be sent: {e}") },
        (None, Ok(kernels)) => Reply::CompileLog { job, kernels, joined },
    }
}

/// `trace` with the groups of the compile log `log` (named `name`) linked in, and its report
/// with the fusion made again from them, if the log has kernels the trace ran.
fn joined_report(
    trace: &mut Trace,
    time: &TraceTime,
    structure: Option<&Structure>,
    exec_trace: Option<usize>,
    (name, log): (&str, &CompileLog),
) -> Option<TraceTime> {
    // The report before the join holds the groups inferred without the log.
    let kernels = provenance::apply(trace, name, log, time.fusion.as_ref());
    if !kernels.ran() {
        return None;
    }
    let mut time = time.clone();
    let side = ClassifiedTrace::new(trace);
    EXEC_TRACES.with(|e| {
        let ets = e.borrow();
        let et = exec_trace.and_then(|i| ets.get(i)).map(|h| (&h.et, h.name.as_str()));
        set_fusion(&mut time, &side, structure, &Choices::with_exec_trace(et));
    });
    time.compiled_kernels = Some(kernels);
    Some(time)
}

/// A trace being held, joined to the latest held compile log of its run, if any.
fn with_held_compile_log(
    mut trace: Trace,
    time: TraceTime,
    structure: Option<&Structure>,
    exec_trace: Option<usize>,
) -> (Trace, TraceTime) {
    let joined = COMPILE_LOGS.with(|l| {
        l.borrow()
            .iter()
            .rev()
            .find_map(|(name, log)| joined_report(&mut trace, &time, structure, exec_trace, (name, log)))
    });
    (trace, joined.unwrap_or(time))
}

/// `trace` joined to `capture` and its new report, if the capture holds its graphs; its op
/// table and fusion with the held execution trace `et`, if it has one.
fn join(trace: &Trace, capture: &Trace, et: Option<usize>) -> Option<(Trace, TraceTime)> {
    let (joined, captured) = attribute(trace, capture).ok()?;
    let side = ClassifiedTrace::new(&joined);
    let time = EXEC_TRACES.with(|e| {
        let ets = e.borrow();
        let et = et.and_then(|i| ets.get(i)).map(|h| (&h.et, h.name.as_str()));
        report(&side, None, &Choices::with_exec_trace(et))
    });
    Some((joined, TraceTime { capture: Some(captured), ..time }))
}

/// A capture trace is kept (not listed as a trace) and joined to every held trace it matches.
fn capture_reply(job: u32, capture: Trace, graphs: usize) -> Reply {
    let graphs = graphs as u32;
    let joined = TRACES.with(|t| {
        let mut traces = t.borrow_mut();
        let mut joined = Vec::new();
        for (&id, held) in traces.iter_mut().filter(|(_, h)| !h.joined) {
            if let Some((trace, time)) = join(&held.trace, &capture, held.exec_trace) {
                if let Ok(sent) = Json::encode(&time) {
                    (held.trace, held.time, held.joined, held.search) = (trace, time, true, None);
                    joined.push((id, sent));
                }
            }
        }
        joined
    });
    CAPTURES.with(|c| c.borrow_mut().push(capture));
    Reply::Capture { job, graphs, joined }
}

/// A file read by the worker: opened (the kinds that can be large; a trace with the index of the
/// held execution trace its report took), or its bytes for the page.
enum Read {
    Opened(Box<(Imported, Option<RankSummary>, Option<usize>)>),
    Bytes(Vec<u8>),
}

/// A trace read for the other worker (`hand_back`): the trace as bytes, with its results.
fn hand_back_reply(
    job: u32,
    name: &str,
    (trace, search): (&Trace, Option<&TraceStructure>),
    summary: &TraceSummary,
    time: &TraceTime,
    rank: Option<&RankSummary>,
) -> Reply {
    let rank = rank.map(Json::encode).transpose();
    match (wire::to_bytes(trace, search), Json::encode(summary), Json::encode(time), rank) {
        (Ok(bytes), Ok(summary), Ok(time), Ok(rank)) => Reply::Parsed { job, bytes, summary, time, rank },
        (Err(e), _, _, _) => Reply::Error { job, message: format!("{name}: {e}") },
        (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            Reply::Error { job, message: format!("{name}: the summary cannot be sent: {e}") }
        }
    }
}

/// The file read slice by slice into the opener; `None` if cancelled.
async fn read_and_open(job: u32, blob: &Blob, name: &str, hand_back: bool) -> Result<Option<Read>, String> {
    let fail = |e: JsValue| format!("{name} could not be read: {}", describe(e));
    let total = blob.size();
    let mut opener = FileOpener::with_ranks(name);
    let mut bytes = FileBytes::new(blob);
    let (mut done, mut posted_ms) = (0.0, f64::NEG_INFINITY);
    while !is_cancelled(job) && opener.wants_more() {
        let Some(piece) = bytes.next().await.map_err(fail)? else { break };
        done += f64::from(piece.length());
        opener.feed(&piece.to_vec()).map_err(|e| e.message(name))?;
        if hand_back && matches!(opener.detected().kind, FileKind::ExecTrace | FileKind::CompileLog) {
            return Err(format!(
                "{name} is {}: the worker that holds the traces reads it",
                opener.detected().kind.describe()
            ));
        }
        let now_ms = js_sys::Date::now();
        if now_ms - posted_ms >= PROGRESS_EVERY_MS || done >= total {
            posted_ms = now_ms;
            post(&Reply::Progress { job, done, total, memory: memory_bytes() });
        }
    }
    // Before the analyses: a read that stopped early lets the browser drop the rest now.
    drop(bytes);
    if is_cancelled(job) {
        return Ok(None);
    }
    if !opener.detected().kind.analysed_off_the_page() {
        if let Some(bytes) = opener.into_gathered() {
            return Ok(Some(Read::Bytes(bytes)));
        }
        return Err(format!("{name}: the worker lost the file's bytes"));
    }
    // A trace's report is made once, with the held execution trace that links to it (none in
    // the second worker; a capture trace takes none: it is joined to its replays instead).
    let mut picked = None;
    let opened = EXEC_TRACES.with(|e| {
        let ets = e.borrow();
        opener.finish_with_ranks(|trace| {
            if captured_graph_count(trace).is_some() {
                return None;
            }
            picked = pick_exec_trace(&ets, trace);
            picked.map(|i| (&ets[i].et, ets[i].name.as_str()))
        })
    });
    opened.map(|(i, r)| Some(Read::Opened(Box::new((i, r, picked))))).map_err(|e| e.message(name))
}

/// The comparison of two held traces.
fn compare_held(a: u32, b: u32) -> Result<Json<analysis::Comparison>, String> {
    TRACES.with(|t| {
        let traces = t.borrow();
        let get = |id: u32| {
            traces.get(&id).ok_or_else(|| {
                "a trace to compare is no longer held by the analysis worker (it was restarted); open the trace again"
                    .to_string()
            })
        };
        let (a, b) = (get(a)?, get(b)?);
        // Each trace's structure search was made as it was opened (held traces keep theirs; a
        // trace joined to its capture searches again).
        fn side(h: &Held) -> Input<'_> {
            let c = ClassifiedTrace::new(&h.trace);
            let side = if h.joined { c } else { c.with_search(h.search.as_deref()) };
            Input { side, file: Some(h.name.as_str()) }
        }
        let comparison = compare(side(a), side(b));
        Json::encode(&comparison).map_err(|e| format!("the comparison cannot be sent: {e}"))
    })
}
