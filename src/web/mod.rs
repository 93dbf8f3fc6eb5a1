//! The web page (wasm only): a Yew app over the core. Nothing here computes a figure; every
//! number shown comes from [`crate::fusion`] and is formatted by [`crate::units`].
//!
//! Layout follows Yew's examples: [`state`] holds the page state, the [`state::Action`]s and
//! the reducer; [`components`] has one component per file, each with its `Props`.

pub mod app;
mod browser;
pub mod components;
pub mod open_file;
mod opening;
pub mod reader_worker;
pub mod shared;
pub mod state;
pub mod time_model;
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
