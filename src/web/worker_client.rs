//! The page's side of the analysis worker ([`super::reader_worker`]): starts it, sends it
//! files and comparisons, and turns its replies into results the page deserialises and shows.
//!
//! The page's first worker lives as long as the page (it keeps the traces it read, see the
//! worker's docs); a second one reads a file beside it and hands its trace over.
//! Requests sent before it said "ready" are queued, since a worker's messages that arrive
//! before its WebAssembly has loaded would be lost. If the worker stops (it cannot load, it ran
//! out of memory, it hit a bug, or it did not stop within a second of Cancel and was
//! terminated), every pending request fails, the page is told in words (the cause, and the
//! file and position it was reading), and the next request starts a new worker.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Promise};
use rustc_hash::{FxHashMap, FxHashSet};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::reader_worker::describe as js_error;
use analysis::pipeline::TraceTime;
use analysis::provenance::CompiledKernels;
use analysis::ranks::RankSummary;
use analysis::{Comparison, TraceSummary};
use fusion::json::GraphFile;
use fusion::AnalysisReport;
use page::protocol::{Json, Reply, Request};
use units::format_bytes;
use view::ranks::RanksDrawn;

/// The worker's script, next to the page (trunk writes it there).
const WORKER_SCRIPT: &str = "./fusionscope-reader_loader.js";

/// The error text of a request that was cancelled.
pub const CANCELLED: &str = "cancelled";

/// The error text of a request whose worker stopped: the page was already told why, with the
/// file (the `on_stop` callback of [`AnalysisWorker::start`]).
pub const STOPPED: &str = "the analysis worker stopped";

/// How long a Cancel may take before the worker is terminated and replaced: reading checks
/// for it between slices (milliseconds apart), but a final analysis step cannot be interrupted.
const CANCEL_GRACE_MS: i32 = 1000;

/// A worker whose memory has reached this when it dies ran out of memory (WebAssembly memory
/// stops at 4 GiB; a failed allocation traps like any bug, so the size is the only tell).
const OUT_OF_MEMORY_BYTES: f64 = 1.5 * (1u64 << 30) as f64;

/// The error text when the worker script could not be loaded (the caller falls back to
/// reading and analysing on the page's thread).
pub const UNAVAILABLE: &str = "the page's analysis worker (fusionscope-reader_loader.js) could not start";

thread_local! {
    static NEXT_JOB: Cell<u32> = const { Cell::new(1) };
}

/// A fresh id for a request or a trace, unique for the page's life (also across workers, so
/// that a restarted worker never mistakes an old trace's id for one of its own).
pub fn next_job_id() -> u32 {
    NEXT_JOB.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    })
}

/// What opening a file in the worker gave.
#[allow(clippy::large_enum_variant)] // made and matched once per file opened
pub enum OpenReply {
    /// A trace, kept by the worker under the job's id.
    Trace { id: u32, summary: TraceSummary, time: TraceTime },
    /// An op graph in its file form and its analysis, decoded by the caller a step at a time,
    /// between which the page can draw frames.
    Graph { graph: Json<GraphFile>, report: Json<AnalysisReport> },
    /// A kind the worker does not analyse: the file's bytes (all, or the head of an
    /// unrecognised file).
    Bytes(Vec<u8>),
    /// A graph-capture trace, kept by the worker; the traces it was joined to, with their new
    /// reports.
    Capture { graphs: u32, joined: Vec<(u32, TraceTime)> },
    /// An execution trace, kept by the worker; the traces it linked to, with their new reports,
    /// and the names of those it did not link to.
    ExecTrace { ops: u64, joined: Vec<(u32, TraceTime)>, unlinked: Vec<String> },
    /// A torch.compile log, kept by the worker; its kernels, and the traces it was joined to
    /// with their new reports.
    CompileLog { kernels: CompiledKernels, joined: Vec<(u32, TraceTime)> },
    /// A trace read for the other worker (`hand_back`), with its results, to
    /// [`AnalysisWorker::adopt`] there.
    Parsed { bytes: Vec<u8>, summary: Json<TraceSummary>, time: Json<TraceTime>, rank: Option<Json<RankSummary>> },
}

/// A request waiting for its answer. The promise resolves with the reply's index in
/// [`Inner::answers`] (a `Reply` is Rust data, not a JavaScript value).
struct Pending {
    resolve: Function,
    reject: Function,
    progress: Option<Rc<dyn Fn(f64, f64)>>,
    /// For an open: the file's name and how far reading has come (bytes), for the message if
    /// the worker dies.
    file: Option<(String, f64, f64)>,
}

struct Inner {
    worker: web_sys::Worker,
    ready: bool,
    /// Why the worker stopped, once it has.
    stopped: Option<String>,
    queue: Vec<JsValue>,
    pending: FxHashMap<u32, Pending>,
    /// Replies that ended a request, by job, until the request's future takes them.
    answers: FxHashMap<u32, Reply>,
    /// Jobs cancelled that the worker has not yet said it dropped.
    cancelling: FxHashSet<u32>,
    /// The worker's memory at its last progress report (bytes).
    memory: f64,
    /// Told, in words, when a running worker stops.
    on_stop: Rc<dyn Fn(String)>,
    _handlers: Vec<Closure<dyn Fn(web_sys::MessageEvent)>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

/// The running analysis worker (cheap to clone).
#[derive(Clone)]
pub struct AnalysisWorker(Rc<RefCell<Inner>>);

impl AnalysisWorker {
    /// Starts the worker; `on_stop` is told why if it stops once running.
    pub fn start(on_stop: Rc<dyn Fn(String)>) -> Result<AnalysisWorker, String> {
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Classic);
        let worker = web_sys::Worker::new_with_options(WORKER_SCRIPT, &options).map_err(js_error)?;
        let inner = Rc::new(RefCell::new(Inner {
            worker: worker.clone(),
            ready: false,
            stopped: None,
            queue: Vec::new(),
            pending: FxHashMap::default(),
            answers: FxHashMap::default(),
            cancelling: FxHashSet::default(),
            memory: 0.0,
            on_stop,
            _handlers: Vec::new(),
        }));
        let weak = Rc::downgrade(&inner);
        let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            if let Some(inner) = weak.upgrade() {
                on_reply(&inner, e.data());
            }
        });
        let weak = Rc::downgrade(&inner);
        let on_error = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            e.prevent_default(); // reported through the pending requests, not the console
            let text = e.dyn_ref::<web_sys::ErrorEvent>().map(|e| e.message()).unwrap_or_default();
            stop(&weak, Stop::Error(text));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        inner.borrow_mut()._handlers = vec![on_message, on_error];
        Ok(AnalysisWorker(inner))
    }

    /// Whether the worker has stopped (a new one must be started).
    pub fn stopped(&self) -> bool {
        self.0.borrow().stopped.is_some()
    }

    /// Sends `request` (with a file beside it, for `Open`) and returns the reply that ends it,
    /// or the error text.
    fn request(
        &self,
        request: Request,
        file: Option<&web_sys::Blob>,
        progress: Option<Rc<dyn Fn(f64, f64)>>,
    ) -> impl Future<Output = Result<Reply, String>> {
        let job = request_job(&request);
        let mut reading = match (&request, file) {
            (Request::Open { name, .. }, Some(f)) => Some((name.clone(), 0.0, f.size())),
            _ => None,
        };
        let inner = self.0.clone();
        let mut progress = Some(progress);
        let promise = Promise::new(&mut |resolve, reject| {
            let mut i = inner.borrow_mut();
            if let Some(why) = &i.stopped {
                let _ = reject.call1(&JsValue::NULL, &why.into());
                return;
            }
            i.pending
                .insert(job, Pending { resolve, reject, progress: progress.take().flatten(), file: reading.take() });
        });
        self.send(&request, file);
        let inner = self.0.clone();
        async move {
            JsFuture::from(promise).await.map_err(js_error)?;
            inner.borrow_mut().answers.remove(&job).ok_or_else(|| "the analysis worker's reply was lost".to_string())
        }
    }

    /// Posts a request (queued until the worker is ready).
    fn send(&self, request: &Request, file: Option<&web_sys::Blob>) {
        let value = match serde_wasm_bindgen::to_value(request) {
            Ok(v) => v,
            Err(e) => return web_sys::console::error_1(&format!("fusionscope: request not sent: {e}").into()),
        };
        let message: JsValue = match file {
            Some(f) => Array::of2(&value, f).into(),
            None => value,
        };
        let mut i = self.0.borrow_mut();
        if i.ready {
            let _ = i.worker.post_message(&message);
        } else {
            i.queue.push(message);
        }
    }

    /// Reads and analyses `file` (a `File`, or any `Blob` named `name`), calling
    /// `on_progress(done, total)` as slices are read (at most ten times a second). Returns the
    /// job id (to cancel) and the future reply.
    /// With `hand_back`, a trace comes back as [`OpenReply::Parsed`] bytes for the other worker
    /// instead of being analysed and kept here.
    pub fn open(
        &self,
        file: &web_sys::Blob,
        name: &str,
        hand_back: bool,
        on_progress: impl Fn(f64, f64) + 'static,
    ) -> (u32, impl Future<Output = Result<OpenReply, String>>) {
        let job = next_job_id();
        let request = Request::Open { job, name: name.to_string(), hand_back };
        let reply = self.request(request, Some(file), Some(Rc::new(on_progress)));
        (job, async move { decode_open(job, reply.await?) })
    }

    /// Keeps a trace the other worker read (its [`OpenReply::Parsed`]); the reply is the one
    /// opening the file here would give. Returns the trace's id with it.
    pub fn adopt(
        &self,
        name: &str,
        bytes: Vec<u8>,
        summary: Json<TraceSummary>,
        time: Json<TraceTime>,
        rank: Option<Json<RankSummary>>,
    ) -> (u32, impl Future<Output = Result<OpenReply, String>>) {
        let job = next_job_id();
        let request = Request::Adopt { job, name: name.to_string(), bytes, summary, time, rank };
        let reply = self.request(request, None, None);
        (job, async move { decode_open(job, reply.await?) })
    }

    /// The worker's memory at its last progress report (bytes): WebAssembly memory only grows.
    pub fn memory(&self) -> f64 {
        self.0.borrow().memory
    }

    /// Stops a read: the request ends at once with [`CANCELLED`]; the worker stops at its next
    /// slice and keeps nothing of the file. A worker that has not said so within
    /// [`CANCEL_GRACE_MS`] (busy in a step that cannot be interrupted) is terminated, and the
    /// next request starts a new one.
    pub fn cancel(&self, job: u32) {
        let pending = {
            let mut i = self.0.borrow_mut();
            i.cancelling.insert(job);
            i.pending.remove(&job)
        };
        if let Some(p) = pending {
            let _ = p.reject.call1(&JsValue::NULL, &CANCELLED.into());
        }
        self.send(&Request::Cancel { job }, None);
        let weak = Rc::downgrade(&self.0);
        let deadline = Closure::once_into_js(move || {
            let overdue = weak.upgrade().is_some_and(|i| i.borrow().cancelling.contains(&job));
            if overdue {
                stop(&weak, Stop::CancelOverdue);
            }
        });
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(deadline.unchecked_ref(), CANCEL_GRACE_MS);
        }
    }

    /// Compares two traces the worker holds (their open jobs' ids).
    pub fn compare(&self, a: u32, b: u32) -> impl Future<Output = Result<Comparison, String>> {
        let job = next_job_id();
        let reply = self.request(Request::Compare { job, a, b }, None, None);
        async move {
            match reply.await? {
                Reply::Comparison { comparison, .. } => {
                    comparison.decode().map_err(|e| format!("the worker's comparison cannot be read: {e}"))
                }
                other => Err(format!("the analysis worker answered a comparison with {}", reply_kind(&other))),
            }
        }
    }

    /// The job report of the held traces `ids` that are ranks of one distributed job (`None`:
    /// fewer than two are).
    pub fn ranks(&self, ids: Vec<u32>) -> impl Future<Output = Result<Option<RanksDrawn>, String>> {
        let job = next_job_id();
        let reply = self.request(Request::Ranks { job, ids }, None, None);
        async move {
            match reply.await? {
                Reply::Ranks { report, .. } => report
                    .map(|r| r.decode())
                    .transpose()
                    .map_err(|e| format!("the worker's job report cannot be read: {e}")),
                Reply::Error { message, .. } => Err(message),
                other => Err(format!("the analysis worker answered a job report with {}", reply_kind(&other))),
            }
        }
    }

    /// Lets the worker drop a trace the page no longer lists.
    pub fn forget(&self, id: u32) {
        self.send(&Request::Forget { job: id }, None);
    }
}

fn request_job(r: &Request) -> u32 {
    match r {
        Request::Open { job, .. }
        | Request::Adopt { job, .. }
        | Request::Cancel { job }
        | Request::Compare { job, .. }
        | Request::Ranks { job, .. }
        | Request::Forget { job } => *job,
    }
}

/// A reply's kind in words, for the message when a request got an answer of another kind.
fn reply_kind(r: &Reply) -> &'static str {
    match r {
        Reply::Ready => "ready",
        Reply::Progress { .. } => "progress",
        Reply::Cancelled { .. } => "a cancellation",
        Reply::Trace { .. } => "a trace",
        Reply::Graph { .. } => "a graph",
        Reply::Bytes { .. } => "a file's bytes",
        Reply::Comparison { .. } => "a comparison",
        Reply::Capture { .. } => "a capture trace",
        Reply::ExecTrace { .. } => "an execution trace",
        Reply::CompileLog { .. } => "a torch.compile log",
        Reply::Parsed { .. } => "a trace read for the other worker",
        Reply::Ranks { .. } => "a job report",
        Reply::Error { .. } => "an error",
        Reply::Panic { .. } => "a stop",
    }
}

/// The reply to an open request.
fn decode_open(job: u32, reply: Reply) -> Result<OpenReply, String> {
    match reply {
        Reply::Trace { summary, time, .. } => Ok(OpenReply::Trace {
            id: job,
            summary: summary.decode().map_err(|e| format!("the worker's trace summary cannot be read: {e}"))?,
            time: time.decode().map_err(|e| format!("the worker's op table cannot be read: {e}"))?,
        }),
        Reply::Graph { graph, report, .. } => Ok(OpenReply::Graph { graph, report }),
        Reply::Bytes { bytes, .. } => Ok(OpenReply::Bytes(bytes)),
        Reply::Parsed { bytes, summary, time, rank, .. } => Ok(OpenReply::Parsed { bytes, summary, time, rank }),
        Reply::Capture { graphs, joined, .. } => Ok(OpenReply::Capture { graphs, joined: decode_joined(joined)? }),
        Reply::ExecTrace { ops, joined, unlinked, .. } => {
            Ok(OpenReply::ExecTrace { ops, joined: decode_joined(joined)?, unlinked })
        }
        Reply::CompileLog { kernels, joined, .. } => Ok(OpenReply::CompileLog {
            kernels: kernels.decode().map_err(|e| format!("the worker's compile-log kernels cannot be read: {e}"))?,
            joined: decode_joined(joined)?,
        }),
        other => Err(format!("the analysis worker answered a file with {}", reply_kind(&other))),
    }
}

/// The new reports of the traces a capture or an execution trace was joined to.
fn decode_joined(joined: Vec<(u32, Json<TraceTime>)>) -> Result<Vec<(u32, TraceTime)>, String> {
    joined
        .into_iter()
        .map(|(id, time)| Ok((id, time.decode().map_err(|e| format!("the worker's op table cannot be read: {e}"))?)))
        .collect()
}

/// Handles one message from the worker.
fn on_reply(inner: &Rc<RefCell<Inner>>, data: JsValue) {
    let reply = match serde_wasm_bindgen::from_value::<Reply>(data) {
        Ok(r) => r,
        Err(e) => {
            let why = Stop::Bug(format!("it sent a message the page cannot read: {e}"));
            return stop(&Rc::downgrade(inner), why);
        }
    };
    let job = match &reply {
        Reply::Ready => {
            let mut i = inner.borrow_mut();
            i.ready = true;
            for request in std::mem::take(&mut i.queue) {
                let _ = i.worker.post_message(&request);
            }
            return;
        }
        Reply::Panic { message } => return stop(&Rc::downgrade(inner), Stop::Bug(message.clone())),
        Reply::Progress { job, done, total, memory } => {
            let progress = {
                let mut i = inner.borrow_mut();
                i.memory = *memory;
                let p = i.pending.get_mut(job);
                p.and_then(|p| {
                    if let Some(f) = &mut p.file {
                        (f.1, f.2) = (*done, *total);
                    }
                    p.progress.clone()
                })
            };
            if let Some(progress) = progress {
                progress(*done, *total);
            }
            return;
        }
        other => other.job().unwrap_or(u32::MAX),
    };
    // Any last word on a job (dropped, done or failed) ends its Cancel's grace period.
    inner.borrow_mut().cancelling.remove(&job);
    let pending = inner.borrow_mut().pending.remove(&job);
    match (pending, reply) {
        (Some(p), Reply::Error { message, .. }) => {
            let _ = p.reject.call1(&JsValue::NULL, &message.into());
        }
        (Some(p), reply) => {
            inner.borrow_mut().answers.insert(job, reply);
            let _ = p.resolve.call0(&JsValue::NULL);
        }
        // A read cancelled after the worker had finished it: it must not keep the trace.
        (None, Reply::Trace { .. }) => {
            let i = inner.borrow();
            if let Ok(v) = serde_wasm_bindgen::to_value(&Request::Forget { job }) {
                let _ = i.worker.post_message(&v);
            }
        }
        (None, _) => {}
    }
}

/// Why a worker stopped.
enum Stop {
    /// Its `onerror`: a trap (out of memory, or a bug without a panic message), or a failure to
    /// load; the browser's text.
    Error(String),
    /// It reported a panic (a bug), with the message.
    Bug(String),
    /// It did not stop within [`CANCEL_GRACE_MS`] of a Cancel.
    CancelOverdue,
}

/// The worker stopped: every pending request fails (with [`STOPPED`], or [`UNAVAILABLE`] if it
/// never started), and `on_stop` is told why in words: the cause, and the file it was reading
/// and how far it had come.
fn stop(inner: &Weak<RefCell<Inner>>, why: Stop) {
    let Some(inner) = inner.upgrade() else { return };
    let (pending, tell) = {
        let mut i = inner.borrow_mut();
        if i.stopped.is_some() {
            return;
        }
        let started = i.ready;
        let cause = match &why {
            Stop::CancelOverdue => "did not stop within a second of Cancel and was terminated".to_string(),
            Stop::Bug(text) => format!("stopped on an internal error ({text})"),
            Stop::Error(_) if i.memory >= OUT_OF_MEMORY_BYTES => {
                format!("ran out of memory (it had reached {})", format_bytes(i.memory as u64))
            }
            Stop::Error(text) if text.is_empty() => "stopped".to_string(),
            Stop::Error(text) => format!("stopped ({text})"),
        };
        let reading = i.pending.values().find_map(|p| p.file.clone()).map(|(name, done, total)| {
            format!(" reading {name} at {} of {}", format_bytes(done as u64), format_bytes(total as u64))
        });
        let text =
            format!("The analysis worker {cause}{}; a new one starts with the next file.", reading.unwrap_or_default());
        i.stopped = Some(if started { STOPPED.to_string() } else { UNAVAILABLE.to_string() });
        i.cancelling.clear();
        i.worker.terminate();
        let tell = started.then(|| (i.on_stop.clone(), text));
        (std::mem::take(&mut i.pending), tell)
    };
    let reason = if tell.is_some() { STOPPED } else { UNAVAILABLE };
    for p in pending.into_values() {
        let _ = p.reject.call1(&JsValue::NULL, &reason.into());
    }
    if let Some((on_stop, text)) = tell {
        on_stop(text);
    }
}
