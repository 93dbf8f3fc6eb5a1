//! Small wrappers over browser APIs the components need: reading a dropped or chosen file,
//! offering text for download, the address fragment and the clipboard.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Largest file the page's own thread reads whole (the small kinds, when no analysis worker
/// can start; the worker streams files of any size).
pub const MAX_FILE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Why a file is too large to read whole on the page's thread, if it is.
fn too_large(file: &web_sys::Blob, file_name: &str) -> Option<String> {
    let size = file.size();
    (size > MAX_FILE_BYTES).then(|| {
        format!(
            "{} is {}: too large to read on the page without its analysis worker (the limit is {}). \
             Use the command line instead.",
            file_name,
            units::format_bytes(size as u64),
            units::format_bytes(MAX_FILE_BYTES as u64)
        )
    })
}

/// The whole content of a file, read on the page's thread (when no worker can be started).
pub async fn read_blob(file: &web_sys::Blob, file_name: &str) -> Result<Vec<u8>, String> {
    if let Some(e) = too_large(file, file_name) {
        return Err(e);
    }
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("{file_name} could not be read: {}", js_error(e)))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The first `bytes` of a file (all of it if shorter), read on the page's thread.
pub async fn read_head(file: &web_sys::Blob, file_name: &str, bytes: usize) -> Result<Vec<u8>, String> {
    let head = file
        .slice_with_f64_and_f64(0.0, bytes as f64)
        .map_err(|e| format!("{file_name} could not be read: {}", js_error(e)))?;
    let buffer = JsFuture::from(head.array_buffer())
        .await
        .map_err(|e| format!("{file_name} could not be read: {}", js_error(e)))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The file at `path`, fetched from the page's own origin (a relative path: the bundled
/// examples next to the page), as a blob for the analysis worker.
pub async fn fetch_blob(path: &str) -> Result<web_sys::Blob, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(path))
        .await
        .map_err(|e| format!("{path} could not be fetched: {}", js_error(e)))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| format!("{path}: not a response"))?;
    if !response.ok() {
        return Err(format!("{path} could not be fetched: HTTP {} {}", response.status(), response.status_text()));
    }
    let blob = JsFuture::from(response.blob().map_err(js_error)?)
        .await
        .map_err(|e| format!("{path} could not be read: {}", js_error(e)))?;
    blob.dyn_into().map_err(|_| format!("{path}: not a blob"))
}

/// Resolves in a task after the next frame (an animation frame, then `setTimeout(0)`), or after
/// 100 ms if no frame comes (a hidden tab): a long step split at these lets the page draw
/// frames and answer input in between.
pub async fn next_task() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let Some(w) = web_sys::window() else {
            let _ = resolve.call0(&JsValue::NULL);
            return;
        };
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 100);
        let after_frame = Closure::once_into_js(move || {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback(&resolve);
            }
        });
        let _ = w.request_animation_frame(after_frame.unchecked_ref());
    });
    let _ = JsFuture::from(promise).await;
}

/// `future`'s output if it comes within `ms` milliseconds, else `None` (the future can then be
/// awaited further).
pub async fn within<F: Future>(mut future: Pin<&mut F>, ms: i32) -> Option<F::Output> {
    let timer = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let mut timer = JsFuture::from(timer);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        Pin::new(&mut timer).poll(cx).map(|_| None)
    })
    .await
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

/// The fragment that names a view of the results without a share link (`view=fusion`).
pub const VIEW_FRAGMENT: &str = "view=";

/// Records the open view of the results in the address (`#view=fusion`) as a new history
/// entry, so that Back and Forward move between views; an address holding a share link keeps
/// it (the link carries its view itself).
pub fn push_view(id: &str) {
    let current = fragment();
    if !(current.is_empty() || current.starts_with(VIEW_FRAGMENT)) || current == format!("{VIEW_FRAGMENT}{id}") {
        return;
    }
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let url = format!("{}#{VIEW_FRAGMENT}{id}", page_address());
        let _ = history.push_state_with_url(&JsValue::NULL, "", Some(&url));
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
