//! The web page (wasm32 only: natively this crate is empty, so its docs name items without
//! linking them): Yew components over `page`, which holds the state, the
//! actions and the reducer natively. Nothing here computes a figure; every number shown comes
//! from the core and is formatted by `units`.
//!
//! `app` lays the page out; `page_state` wraps `page::State::apply` as Yew's `Reducible`;
//! `components` has one component per file, each with its `Props`; `hooks` listens to the
//! window (drops, pasted links); `opening` reads files through the analysis worker
//! (`worker_client` on the page, `reader_worker` in the worker, speaking
//! `page::protocol`; `file_bytes` takes a file's bytes in the worker; `warm_up` readies
//! a new worker's code); `browser` wraps the few browser calls the page makes.

#![cfg(target_arch = "wasm32")]

pub mod app;
mod browser;
pub mod components;
pub mod file_bytes;
mod hooks;
mod opening;
mod page_state;
pub mod reader_worker;
mod warm_up;
mod worker_client;

/// Mounts the page on `<main id="app">` (or the body if the element is missing).
pub fn start() {
    install_panic_notice();
    let document = gloo_document();
    match document.and_then(|d| d.get_element_by_id("app")) {
        Some(root) => {
            // Replace the "Loading…" placeholder.
            root.set_inner_html("");
            yew::Renderer::<app::App>::with_root(root).render();
        }
        None => {
            yew::Renderer::<app::App>::new().render();
        }
    }
}

fn gloo_document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

/// A panic would otherwise leave a dead page: log it and show it in place of the app, with
/// what to do next.
fn install_panic_notice() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("fusionscope stopped on an internal error: {info}");
        web_sys::console::error_1(&message.clone().into());
        if let Some(doc) = gloo_document() {
            if let Ok(el) = doc.create_element("div") {
                el.set_attribute("role", "alert").ok();
                el.set_class_name("fatal");
                el.set_text_content(Some(&format!(
                    "{message}. Reload the page to start again, and please report this message."
                )));
                if let Some(body) = doc.body() {
                    let _ = body.insert_before(&el, body.first_child().as_ref());
                }
            }
        }
    }));
}
