//! The page's side of the analysis worker ([`super::reader_worker`]): starts it, sends it
//! files and comparisons, and turns its replies into results the page deserialises and shows.
//!
//! One worker lives as long as the page (it keeps the traces it read, see the worker's docs).
//! Requests sent before it said "ready" are queued, since a worker's messages that arrive
//! before its WebAssembly has loaded would be lost. If the worker stops (it cannot load, or it
//! ran out of memory), every pending request fails and the next request starts a new worker.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Promise};
use rustc_hash::FxHashMap;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::reader_worker::describe as js_error;
use crate::fusion::json::GraphFile;
use crate::fusion::AnalysisReport;
use crate::page::protocol::{Json, Reply, Request};
use crate::trace::{Comparison, TraceSummary};

/// The worker's script, next to the page (trunk writes it there).
const WORKER_SCRIPT: &str = "./fusionscope-reader_loader.js";

/// The error text of a request that was cancelled.
pub const CANCELLED: &str = "cancelled";

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
pub enum OpenReply {
    /// A trace, kept by the worker under the job's id.
    Trace { id: u32, summary: TraceSummary },
    /// An op graph in its file form and its analysis, decoded by the caller a step at a time,
    /// between which the page can draw frames.
    Graph { graph: Json<GraphFile>, report: Json<AnalysisReport> },
    /// A kind the worker does not analyse: the file's bytes (all, or the head of an
    /// unrecognised file).
    Bytes(Vec<u8>),
}

/// A request waiting for its answer. The promise resolves with the reply's index in
/// [`Inner::answers`] (a `Reply` is Rust data, not a JavaScript value).
struct Pending {
    resolve: Function,
    reject: Function,
    progress: Option<Rc<dyn Fn(f64, f64)>>,
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
    /// Starts the worker.
    pub fn start() -> Result<AnalysisWorker, String> {
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
            stop(&weak, text);
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
        let inner = self.0.clone();
        let mut progress = Some(progress);
        let promise = Promise::new(&mut |resolve, reject| {
            let mut i = inner.borrow_mut();
            if let Some(why) = &i.stopped {
                let _ = reject.call1(&JsValue::NULL, &why.into());
                return;
            }
            i.pending.insert(job, Pending { resolve, reject, progress: progress.take().flatten() });
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
    /// `on_progress(done, total)` after each slice. Returns the job id (to cancel) and the
    /// future reply.
    pub fn open(
        &self,
        file: &web_sys::Blob,
        name: &str,
        on_progress: impl Fn(f64, f64) + 'static,
    ) -> (u32, impl Future<Output = Result<OpenReply, String>>) {
        let job = next_job_id();
        let request = Request::Open { job, name: name.to_string() };
        let reply = self.request(request, Some(file), Some(Rc::new(on_progress)));
        (job, async move { decode_open(job, reply.await?) })
    }

    /// Stops a read: the request ends at once with [`CANCELLED`]; the worker stops at its next
    /// slice and keeps nothing of the file.
    pub fn cancel(&self, job: u32) {
        let pending = self.0.borrow_mut().pending.remove(&job);
        if let Some(p) = pending {
            let _ = p.reject.call1(&JsValue::NULL, &CANCELLED.into());
        }
        self.send(&Request::Cancel { job }, None);
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

    /// Lets the worker drop a trace the page no longer lists.
    pub fn forget(&self, id: u32) {
        self.send(&Request::Forget { job: id }, None);
    }
}

fn request_job(r: &Request) -> u32 {
    match r {
        Request::Open { job, .. }
        | Request::Cancel { job }
        | Request::Compare { job, .. }
        | Request::Forget { job } => *job,
    }
}

/// A reply's kind in words, for the message when a request got an answer of another kind.
fn reply_kind(r: &Reply) -> &'static str {
    match r {
        Reply::Ready => "ready",
        Reply::Progress { .. } => "progress",
        Reply::Trace { .. } => "a trace",
        Reply::Graph { .. } => "a graph",
        Reply::Bytes { .. } => "a file's bytes",
        Reply::Comparison { .. } => "a comparison",
        Reply::Error { .. } => "an error",
        Reply::Panic { .. } => "a stop",
    }
}

/// The reply to an open request.
fn decode_open(job: u32, reply: Reply) -> Result<OpenReply, String> {
    match reply {
        Reply::Trace { summary, .. } => Ok(OpenReply::Trace {
            id: job,
            summary: summary.decode().map_err(|e| format!("the worker's trace summary cannot be read: {e}"))?,
        }),
        Reply::Graph { graph, report, .. } => Ok(OpenReply::Graph { graph, report }),
        Reply::Bytes { bytes, .. } => Ok(OpenReply::Bytes(bytes)),
        other => Err(format!("the analysis worker answered a file with {}", reply_kind(&other))),
    }
}

/// Handles one message from the worker.
fn on_reply(inner: &Rc<RefCell<Inner>>, data: JsValue) {
    let reply = match serde_wasm_bindgen::from_value::<Reply>(data) {
        Ok(r) => r,
        Err(e) => {
            return stop(&Rc::downgrade(inner), format!("the analysis worker sent a message the page cannot read: {e}"))
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
        Reply::Panic { message } => {
            let text = format!("the analysis worker stopped on an internal error: {message}");
            return stop(&Rc::downgrade(inner), text);
        }
        Reply::Progress { job, done, total } => {
            let progress = inner.borrow().pending.get(job).and_then(|p| p.progress.clone());
            if let Some(progress) = progress {
                progress(*done, *total);
            }
            return;
        }
        other => other.job().unwrap_or(u32::MAX),
    };
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

/// The worker stopped: every pending request fails with why.
fn stop(inner: &Weak<RefCell<Inner>>, text: String) {
    let Some(inner) = inner.upgrade() else { return };
    let (pending, why) = {
        let mut i = inner.borrow_mut();
        let why = if i.ready {
            if text.is_empty() {
                "the analysis worker stopped (out of memory?)".to_string()
            } else {
                text
            }
        } else {
            UNAVAILABLE.to_string()
        };
        i.stopped = Some(why.clone());
        i.worker.terminate();
        (std::mem::take(&mut i.pending), why)
    };
    for p in pending.into_values() {
        let _ = p.reject.call1(&JsValue::NULL, &why.clone().into());
    }
}
