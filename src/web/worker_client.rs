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

use js_sys::{Function, Object, Promise, Uint8Array};
use rustc_hash::FxHashMap;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::reader_worker::{describe as js_error, field, message};
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
pub enum Reply {
    /// A trace, kept by the worker under the job's id.
    Trace { id: u32, summary: TraceSummary },
    /// An op graph (graph-file JSON) and its analysis (JSON), decoded by the caller a step at
    /// a time, between which the page can draw frames.
    Graph { graph: String, report: String },
    /// A kind the worker does not analyse: the file's bytes (all, or the head of an
    /// unrecognised file).
    Raw(Vec<u8>),
}

/// A request waiting for its answer.
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

    /// Sends `request` (with its `job`) and returns the reply message, or the error text.
    fn request(
        &self,
        job: u32,
        request: Object,
        progress: Option<Rc<dyn Fn(f64, f64)>>,
    ) -> impl Future<Output = Result<JsValue, String>> {
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
        self.send(request.into());
        async move { JsFuture::from(promise).await.map_err(js_error) }
    }

    fn send(&self, request: JsValue) {
        let mut i = self.0.borrow_mut();
        if i.ready {
            let _ = i.worker.post_message(&request);
        } else {
            i.queue.push(request);
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
    ) -> (u32, impl Future<Output = Result<Reply, String>>) {
        let job = next_job_id();
        let request = message("open", &[("job", job.into()), ("file", file.into()), ("name", name.into())]);
        let reply = self.request(job, request, Some(Rc::new(on_progress)));
        (job, async move { decode_open(job, reply.await?) })
    }

    /// Stops a read: the request ends at once with [`CANCELLED`]; the worker stops at its next
    /// slice and keeps nothing of the file.
    pub fn cancel(&self, job: u32) {
        let pending = self.0.borrow_mut().pending.remove(&job);
        if let Some(p) = pending {
            let _ = p.reject.call1(&JsValue::NULL, &CANCELLED.into());
        }
        self.send(message("cancel", &[("job", job.into())]).into());
    }

    /// Compares two traces the worker holds (their open jobs' ids).
    pub fn compare(&self, a: u32, b: u32) -> impl Future<Output = Result<Comparison, String>> {
        let job = next_job_id();
        let request = message("compare", &[("job", job.into()), ("a", a.into()), ("b", b.into())]);
        let reply = self.request(job, request, None);
        async move {
            let json = field(&reply.await?, "comparison").as_string().unwrap_or_default();
            serde_json::from_str(&json).map_err(|e| format!("the worker's comparison cannot be read: {e}"))
        }
    }

    /// Lets the worker drop a trace the page no longer lists.
    pub fn forget(&self, id: u32) {
        self.send(message("forget", &[("job", id.into())]).into());
    }
}

/// The reply to an open request.
fn decode_open(job: u32, reply: JsValue) -> Result<Reply, String> {
    let text = |k: &str| field(&reply, k).as_string().unwrap_or_default();
    let bad = |what: &str, e: serde_json::Error| format!("the worker's {what} cannot be read: {e}");
    match text("type").as_str() {
        "trace" => Ok(Reply::Trace {
            id: job,
            summary: serde_json::from_str(&text("summary")).map_err(|e| bad("trace summary", e))?,
        }),
        "graph" => Ok(Reply::Graph { graph: text("graph"), report: text("report") }),
        _ => Ok(Reply::Raw(Uint8Array::new(&field(&reply, "bytes")).to_vec())),
    }
}

/// Handles one message from the worker.
fn on_reply(inner: &Rc<RefCell<Inner>>, data: JsValue) {
    let kind = field(&data, "type").as_string().unwrap_or_default();
    if kind == "ready" {
        let mut i = inner.borrow_mut();
        i.ready = true;
        for request in std::mem::take(&mut i.queue) {
            let _ = i.worker.post_message(&request);
        }
        return;
    }
    if kind == "panic" {
        let text = field(&data, "message").as_string().unwrap_or_default();
        return stop(&Rc::downgrade(inner), format!("the analysis worker stopped on an internal error: {text}"));
    }
    let job = field(&data, "job").as_f64().unwrap_or(-1.0) as u32;
    if kind == "progress" {
        let progress = inner.borrow().pending.get(&job).and_then(|p| p.progress.clone());
        if let Some(progress) = progress {
            progress(field(&data, "done").as_f64().unwrap_or(0.0), field(&data, "total").as_f64().unwrap_or(0.0));
        }
        return;
    }
    let pending = inner.borrow_mut().pending.remove(&job);
    match pending {
        Some(p) if kind == "error" => {
            let _ = p.reject.call1(&JsValue::NULL, &field(&data, "message"));
        }
        Some(p) => {
            let _ = p.resolve.call1(&JsValue::NULL, &data);
        }
        // A read cancelled after the worker had finished it: it must not keep the trace.
        None if kind == "trace" => {
            let i = inner.borrow();
            let _ = i.worker.post_message(&message("forget", &[("job", job.into())]));
        }
        None => {}
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
