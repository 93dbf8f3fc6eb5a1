//! Hooks that listen to the window: a share link pasted into the address bar of an open page,
//! and files dropped anywhere on it.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::browser;
use super::components::file_open::files_of;
use crate::page_state::PageState;
use page::Action;

/// Opens the state of a share link pasted into the address bar of an open page, and the view
/// of the results Back or Forward lands on.
#[hook]
pub fn use_hash_restore(state: UseReducerHandle<PageState>) {
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn()>::new(move || {
            let fragment = browser::fragment();
            // Back to the address without a view: the overview every result opens in.
            if fragment.is_empty() {
                state.dispatch(Action::ShowTab(page::ResultsTab::Overview));
                return;
            }
            // Back or Forward between views of the results.
            if let Some(id) = fragment.strip_prefix(browser::VIEW_FRAGMENT) {
                state.dispatch(Action::ShowTab(page::ResultsTab::from_id(id).unwrap_or_default()));
                return;
            }
            match share::decode(&fragment) {
                Ok(shared) => state.dispatch(Action::Restore(Box::new(shared))),
                Err(e) => state.dispatch(Action::Fail(format!("This share link cannot be opened: {e}."))),
            }
        });
        let window = web_sys::window();
        if let Some(w) = &window {
            let _ = w.add_event_listener_with_callback("hashchange", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(w) = window {
                let _ = w.remove_event_listener_with_callback("hashchange", listener.as_ref().unchecked_ref());
            }
        }
    });
}

/// Files dropped anywhere in the window are opened (listening on the window, not an element,
/// so that no drop falls through to the browser, which would navigate away to the file).
#[hook]
pub fn use_window_drop(on_files: Callback<Vec<web_sys::File>>, dragging: UseStateSetter<bool>) {
    use_effect_with((), move |_| {
        let over = {
            let dragging = dragging.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
                e.prevent_default(); // allows the drop
                dragging.set(true);
            })
        };
        let leave = {
            let dragging = dragging.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
                // Only when the pointer leaves the window, not when it moves between elements.
                if e.dyn_ref::<web_sys::DragEvent>().is_some_and(|d| d.related_target().is_none()) {
                    dragging.set(false);
                }
            })
        };
        let drop = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            dragging.set(false);
            if let Some(d) = e.dyn_ref::<web_sys::DragEvent>() {
                on_files.emit(files_of(d.data_transfer().and_then(|t| t.files())));
            }
        });
        let window = web_sys::window();
        let listeners = [("dragover", over), ("dragleave", leave), ("drop", drop)];
        if let Some(w) = &window {
            for (name, f) in &listeners {
                let _ = w.add_event_listener_with_callback(name, f.as_ref().unchecked_ref());
            }
        }
        move || {
            if let Some(w) = window {
                for (name, f) in &listeners {
                    let _ = w.remove_event_listener_with_callback(name, f.as_ref().unchecked_ref());
                }
            }
        }
    });
}
