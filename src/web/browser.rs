//! Small wrappers over browser APIs the components need: reading a dropped or chosen file,
//! offering text for download, the address fragment and the clipboard.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Largest file the page reads: it holds the whole file in WebAssembly memory (at most 4 GiB,
/// shared with the analysis).
pub const MAX_FILE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Why a file is too large for the page, if it is.
pub fn too_large(file: &web_sys::File) -> Option<String> {
    let size = file.size();
    (size > MAX_FILE_BYTES).then(|| {
        format!(
            "{} is {}: too large to analyse in the browser (the limit is {}). Use the command line instead \
             (fusionscope graph FILE, or fusionscope trace FILE for a trace).",
            file.name(),
            crate::units::format_bytes(size as u64),
            crate::units::format_bytes(MAX_FILE_BYTES as u64)
        )
    })
}

/// The whole content of a file, read on the page's thread (when no worker can be started).
pub async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, String> {
    if let Some(e) = too_large(file) {
        return Err(e);
    }
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("{} could not be read: {}", file.name(), js_error(e)))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The bytes at `path`, fetched from the page's own origin (a relative path: the bundled
/// examples next to the page).
pub async fn fetch_bytes(path: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(path))
        .await
        .map_err(|e| format!("{path} could not be fetched: {}", js_error(e)))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| format!("{path}: not a response"))?;
    if !response.ok() {
        return Err(format!("{path} could not be fetched: HTTP {} {}", response.status(), response.status_text()));
    }
    let buffer = JsFuture::from(response.array_buffer().map_err(js_error)?)
        .await
        .map_err(|e| format!("{path} could not be read: {}", js_error(e)))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Offers `content` as a file named `file_name` (the browser's download).
pub fn download(file_name: &str, mime: &str, content: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(content));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(js_error)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_error)?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement =
        document.create_element("a").map_err(js_error)?.dyn_into().map_err(|_| "not an anchor".to_string())?;
    a.set_href(&url);
    a.set_download(file_name);
    a.click();
    web_sys::Url::revoke_object_url(&url).map_err(js_error)?;
    Ok(())
}

/// The address's fragment, without `#`.
pub fn fragment() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// The address without its fragment.
pub fn page_address() -> String {
    let href = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    match href.split_once('#') {
        Some((base, _)) => base.to_string(),
        None => href,
    }
}

/// Drops the fragment from the address bar (without reloading) once the page no longer shows
/// what the link held, so that a reload does not bring the old state back.
pub fn clear_fragment() {
    if fragment().is_empty() {
        return;
    }
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&page_address()));
    }
}

/// Copies text to the clipboard; the error says why it could not (the caller shows the text
/// for copying by hand).
pub async fn copy_text(text: &str) -> Result<(), String> {
    let clipboard = web_sys::window().ok_or("no window")?.navigator().clipboard();
    JsFuture::from(clipboard.write_text(text)).await.map(|_| ()).map_err(js_error)
}

/// The reader worker's script, next to the page (trunk writes it there).
const READER_SCRIPT: &str = "./fusionscope-reader_loader.js";

/// The worker's message and error handlers, kept alive while the worker may call them.
type Handlers = Rc<RefCell<Vec<Closure<dyn Fn(web_sys::MessageEvent)>>>>;

/// A file being read by the reader worker; dropping it or [`WorkerRead::cancel`] ends it.
pub struct WorkerRead {
    worker: web_sys::Worker,
    reject: Rc<RefCell<Option<js_sys::Function>>>,
    _handlers: Handlers,
}

impl WorkerRead {
    /// Stops reading: the worker is terminated and the read ends with [`CANCELLED`].
    pub fn cancel(&self) {
        self.worker.terminate();
        if let Some(reject) = self.reject.borrow_mut().take() {
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(CANCELLED));
        }
    }
}

impl Drop for WorkerRead {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

/// The error text of a read that was cancelled.
pub const CANCELLED: &str = "cancelled";

/// The error text when the worker script could not be loaded (the caller falls back to
/// reading on the page's thread).
pub const READER_FAILED: &str = "the page's file reader (fusionscope-reader_loader.js) could not start";

/// Starts reading `file` in the reader worker, calling `on_progress(done, total)` after each
/// slice. Returns the handle (to cancel) and the future content.
pub fn read_in_worker(
    file: &web_sys::File,
    on_progress: impl Fn(f64, f64) + 'static,
) -> Result<(WorkerRead, impl std::future::Future<Output = Result<Vec<u8>, String>>), String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Classic);
    let worker = web_sys::Worker::new_with_options(READER_SCRIPT, &options).map_err(js_error)?;
    let reject_slot: Rc<RefCell<Option<js_sys::Function>>> = Rc::new(RefCell::new(None));
    let handlers: Handlers = Rc::new(RefCell::new(Vec::new()));
    let mut on_progress = Some(on_progress);
    let promise = js_sys::Promise::new(&mut |resolve: js_sys::Function, reject: js_sys::Function| {
        *reject_slot.borrow_mut() = Some(reject.clone());
        let on_progress = on_progress.take().expect("a promise executor runs once");
        let reject_on_error = reject.clone();
        let (for_worker, file) = (worker.clone(), file.clone());
        let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data();
            let field = |k: &str| js_sys::Reflect::get(&data, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
            match field("type").as_string().as_deref() {
                // The worker's handler is installed once its wasm is loaded: only then send.
                Some("ready") => {
                    if let Err(e) = for_worker.post_message(&file) {
                        let _ = reject.call1(&JsValue::NULL, &e);
                    }
                }
                Some("progress") => {
                    on_progress(field("done").as_f64().unwrap_or(0.0), field("total").as_f64().unwrap_or(0.0))
                }
                Some("done") => {
                    let _ = resolve.call1(&JsValue::NULL, &field("bytes"));
                }
                _ => {
                    let _ = reject.call1(&JsValue::NULL, &field("message"));
                }
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        handlers.borrow_mut().push(on_message);
        let on_error = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |_e: web_sys::MessageEvent| {
            let _ = reject_on_error.call1(&JsValue::NULL, &JsValue::from_str(READER_FAILED));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        handlers.borrow_mut().push(on_error);
    });
    let read = WorkerRead { worker, reject: reject_slot, _handlers: handlers.clone() };
    let content = async move {
        let result = JsFuture::from(promise).await;
        drop(handlers);
        let buffer = result.map_err(js_error)?;
        Ok(js_sys::Uint8Array::new(&buffer).to_vec())
    };
    Ok((read, content))
}
