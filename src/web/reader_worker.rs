//! The page's analysis worker (the `fusionscope-reader` binary, run as a Web Worker): it reads
//! files, parses and analyses them, keeps the traces and compares them, so that no file
//! however large stalls the page's thread.
//!
//! A file is read in [`SLICE_BYTES`] slices (`Blob.arrayBuffer()`, awaited, so the worker
//! keeps answering messages between slices) and each slice goes straight to the core's
//! incremental [`FileOpener`]: a Kineto trace (gzip or not) streams through the
//! [`crate::trace::TraceReader`], so memory stays at the compact trace plus one slice, and the
//! progress posted after each slice is true. What comes back to the page is the *result*,
//! serialised: a trace's summary, a graph in its file form with its analysis, never the file.
//! Kinds this worker does not analyse (op traces, simulator CSVs, configurations: small files
//! shown by the page's own views) come back as their bytes, for `open_file` on the page.
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
//! Messages (plain objects) from the page: `{type: "open", job, file, name}` (a `Blob`),
//! `{type: "cancel", job}`, `{type: "compare", job, a, b}` (ids of open jobs),
//! `{type: "forget", job}`. To the page: `{type: "ready"}` once it listens, then per job
//! `{type: "progress", job, done, total}`, and one of `{type: "trace", job, summary}` (JSON),
//! `{type: "graph", job, graph, report}` (JSON of the graph file and of its analysis), `{type: "raw", job, bytes}`
//! (a transferred `ArrayBuffer`), `{type: "comparison", job, comparison}` (JSON) or
//! `{type: "error", job, message}`; `{type: "panic", message}` if the worker hits a bug.

use std::cell::RefCell;

use js_sys::{Array, Object, Reflect, Uint8Array};
use rustc_hash::{FxHashMap, FxHashSet};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent};

use crate::fusion::json::to_file;
use crate::import::open::{FileOpener, Opened};
use crate::trace::{classify, compare, Input, Trace};

use super::open_file;

/// Bytes read per slice: small enough for smooth progress and low memory, large enough to
/// keep the per-slice overhead negligible.
pub const SLICE_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

thread_local! {
    /// The traces read, by job id, with their file names.
    static TRACES: RefCell<FxHashMap<u32, (String, Trace)>> = RefCell::default();
    /// Jobs the page cancelled that have not stopped yet.
    static CANCELLED: RefCell<FxHashSet<u32>> = RefCell::default();
}

/// A message object with a `type` and fields.
pub fn message(kind: &str, fields: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    let _ = Reflect::set(&o, &"type".into(), &kind.into());
    for (k, v) in fields {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o
}

/// A field of a message object.
pub fn field(data: &JsValue, key: &str) -> JsValue {
    Reflect::get(data, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
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

fn post(kind: &str, job: u32, fields: &[(&str, JsValue)]) {
    let mut all = vec![("job", JsValue::from(job))];
    all.extend(fields.iter().cloned());
    let _ = scope().post_message(&message(kind, &all));
}

/// Installs the message handler; the worker then waits for work.
pub fn start() {
    // A bug would otherwise surface on the page as "unreachable": say what it was.
    std::panic::set_hook(Box::new(|info| {
        let _ = scope().post_message(&message("panic", &[("message", info.to_string().into())]));
    }));
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let job = field(&data, "job").as_f64().unwrap_or(-1.0) as u32;
        match field(&data, "type").as_string().as_deref() {
            Some("open") => match field(&data, "file").dyn_into::<Blob>() {
                Ok(blob) => {
                    let name = field(&data, "name").as_string().unwrap_or_else(|| "the file".into());
                    wasm_bindgen_futures::spawn_local(open(job, blob, name));
                }
                Err(_) => post("error", job, &[("message", "the worker was sent something that is not a file".into())]),
            },
            Some("cancel") => {
                CANCELLED.with(|c| c.borrow_mut().insert(job));
            }
            Some("compare") => {
                let id = |k: &str| field(&data, k).as_f64().unwrap_or(-1.0) as u32;
                match compare_held(id("a"), id("b")) {
                    Ok(json) => post("comparison", job, &[("comparison", json.into())]),
                    Err(text) => post("error", job, &[("message", text.into())]),
                }
            }
            Some("forget") => {
                TRACES.with(|t| t.borrow_mut().remove(&job));
            }
            other => post("error", job, &[("message", format!("unknown request {other:?}").into())]),
        }
    });
    let scope = scope();
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // lives as long as the worker
                         // Messages sent before the handler existed would be lost: the page waits for this.
    let _ = scope.post_message(&message("ready", &[]));
}

/// Whether the page cancelled `job` (and forgets it: a job is only asked once it ended).
fn take_cancelled(job: u32) -> bool {
    CANCELLED.with(|c| c.borrow_mut().remove(&job))
}

fn is_cancelled(job: u32) -> bool {
    CANCELLED.with(|c| c.borrow().contains(&job))
}

/// Reads, opens and answers one file.
async fn open(job: u32, blob: Blob, name: String) {
    let result = read_and_open(job, &blob, &name).await;
    if take_cancelled(job) {
        return;
    }
    let opened = match result {
        Ok(Some(opened)) => opened,
        Ok(None) => return,
        Err(text) => return post("error", job, &[("message", text.into())]),
    };
    match opened {
        Opened::Trace { trace, summary } => match serde_json::to_string(&summary) {
            Ok(json) => {
                TRACES.with(|t| t.borrow_mut().insert(job, (name, trace)));
                post("trace", job, &[("summary", json.into())]);
            }
            Err(e) => post("error", job, &[("message", format!("{name}: the summary cannot be sent: {e}").into())]),
        },
        Opened::Graph { graph, report } => {
            // Two strings, so that the page can decode them in separate tasks.
            match (serde_json::to_string(&to_file(&graph)), serde_json::to_string(&report)) {
                (Ok(graph), Ok(report)) => post("graph", job, &[("graph", graph.into()), ("report", report.into())]),
                (Err(e), _) | (_, Err(e)) => {
                    post("error", job, &[("message", format!("{name}: the analysis cannot be sent: {e}").into())])
                }
            }
        }
        Opened::Other { bytes, .. } => {
            let buffer = Uint8Array::from(&bytes[..]).buffer();
            let reply = message("raw", &[("job", job.into()), ("bytes", buffer.clone().into())]);
            let _ = scope().post_message_with_transfer(&reply, &Array::of1(&buffer));
        }
    }
}

/// The file read slice by slice into the opener; `None` if cancelled.
async fn read_and_open(job: u32, blob: &Blob, name: &str) -> Result<Option<Opened>, String> {
    let fail = |e: JsValue| format!("{name} could not be read: {}", describe(e));
    let total = blob.size();
    let mut opener = FileOpener::new(name);
    let mut done = 0.0;
    while done < total && opener.wants_more() {
        if is_cancelled(job) {
            return Ok(None);
        }
        let end = (done + SLICE_BYTES).min(total);
        let slice = blob.slice_with_f64_and_f64(done, end).map_err(fail)?;
        let buffer = JsFuture::from(slice.array_buffer()).await.map_err(fail)?;
        opener.feed(&Uint8Array::new(&buffer).to_vec()).map_err(|e| open_file::failure(name, &e))?;
        done = end;
        post("progress", job, &[("done", done.into()), ("total", total.into())]);
    }
    if is_cancelled(job) {
        return Ok(None);
    }
    opener.finish().map(Some).map_err(|e| open_file::failure(name, &e))
}

/// The comparison of two held traces, as JSON.
fn compare_held(a: u32, b: u32) -> Result<String, String> {
    TRACES.with(|t| {
        let traces = t.borrow();
        let get = |id: u32| {
            traces.get(&id).ok_or_else(|| {
                "a trace to compare is no longer held by the analysis worker (it was restarted); open the trace again"
                    .to_string()
            })
        };
        let ((name_a, a), (name_b, b)) = (get(a)?, get(b)?);
        let comparison = compare(
            Input { trace: a, file: Some(name_a.as_str()) },
            Input { trace: b, file: Some(name_b.as_str()) },
            &classify,
        );
        serde_json::to_string(&comparison).map_err(|e| format!("the comparison cannot be sent: {e}"))
    })
}
