//! The file reader that runs in a Web Worker (the `fusionscope-reader` binary).
//!
//! It receives a `File`, reads it in [`SLICE_BYTES`] slices with `FileReaderSync` (which
//! only workers have), posts a progress message after each slice, and finally posts the whole
//! content as a transferred `ArrayBuffer`, so that a large file never stalls the page's
//! thread. Cancelling is terminating the worker. Messages are plain objects:
//! `{type: "ready"}` once it listens, then `{type: "progress", done, total}`,
//! `{type: "done", bytes}` or `{type: "error", message}`.

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync, MessageEvent};

/// Bytes read per slice: small enough for smooth progress, large enough to keep the
/// per-slice overhead negligible.
pub const SLICE_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

/// A message object with a `type` and fields.
pub fn message(kind: &str, fields: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    let _ = Reflect::set(&o, &"type".into(), &kind.into());
    for (k, v) in fields {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o
}

fn describe(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Installs the message handler; the worker then waits for files.
pub fn start() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |e: MessageEvent| {
        let result = match e.data().dyn_into::<File>() {
            Ok(file) => read(&reply_to, &file),
            Err(_) => Err("the reader was sent something that is not a file".to_string()),
        };
        if let Err(text) = result {
            let _ = reply_to.post_message(&message("error", &[("message", text.into())]));
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // lives as long as the worker
                         // Messages sent before the handler existed would be lost: the page waits for this.
    let _ = scope.post_message(&message("ready", &[]));
}

fn read(scope: &DedicatedWorkerGlobalScope, file: &File) -> Result<(), String> {
    let name = file.name();
    let fail = |e: JsValue| format!("{name} could not be read: {}", describe(e));
    let total = file.size();
    let reader = FileReaderSync::new().map_err(fail)?;
    let all = Uint8Array::new_with_length(total as u32);
    let mut done = 0.0;
    while done < total {
        let end = (done + SLICE_BYTES).min(total);
        let slice = file.slice_with_f64_and_f64(done, end).map_err(fail)?;
        let buffer = reader.read_as_array_buffer(&slice).map_err(fail)?;
        all.set(&Uint8Array::new(&buffer), done as u32);
        done = end;
        scope.post_message(&message("progress", &[("done", done.into()), ("total", total.into())])).map_err(fail)?;
    }
    let buffer = all.buffer();
    scope
        .post_message_with_transfer(&message("done", &[("bytes", buffer.clone().into())]), &Array::of1(&buffer))
        .map_err(fail)
}
