//! The share button: makes a link whose fragment holds the page's state (see
//! [`share`]), copies it, shows it and its size.

use yew::prelude::*;

use units::{format_bytes, group_digits};

use crate::browser;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The link's fragment (without `#`) for the current state, or why there is none.
    pub make_fragment: Callback<(), Result<String, String>>,
}

#[derive(Clone, PartialEq)]
enum Shown {
    Nothing,
    Link { url: String, copied: Result<(), String> },
    Error(String),
}

/// Links above this size may be cut by chat tools and mail clients.
const COMFORTABLE_LINK_BYTES: usize = 8 * 1024;

/// `"162 bytes"`, or `"1.23 KiB (1,262 bytes)"` from 1 KiB on.
fn link_size(bytes: usize) -> String {
    let exact = format!("{} bytes", group_digits(bytes as u64));
    if bytes < 1024 {
        format!("Link size: {exact}")
    } else {
        format!("Link size: {} ({exact})", format_bytes(bytes as u64))
    }
}

#[function_component(ShareLink)]
pub fn share_link(props: &Props) -> Html {
    let shown = use_state(|| Shown::Nothing);
    let onclick = {
        let shown = shown.clone();
        let make = props.make_fragment.clone();
        Callback::from(move |_| match make.emit(()) {
            Ok(fragment) => {
                let url = format!("{}#{fragment}", browser::page_address());
                shown.set(Shown::Link { url: url.clone(), copied: Err("copying…".into()) });
                let shown = shown.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let copied = browser::copy_text(&url).await;
                    shown.set(Shown::Link { url, copied });
                });
            }
            Err(e) => shown.set(Shown::Error(e)),
        })
    };
    let body = match &*shown {
        Shown::Nothing => html! {},
        Shown::Error(e) => html! { <p class="share-status error-text" role="alert">{ e.clone() }</p> },
        Shown::Link { url, copied } => {
            let size = url.len();
            let status = match copied {
                Ok(()) => "Copied to the clipboard.".to_string(),
                Err(e) if e == "copying…" => e.clone(),
                Err(e) => format!("Could not copy ({e}): select the link and copy it."),
            };
            let warn =
                if size > COMFORTABLE_LINK_BYTES { " Long links may be cut by some chat and mail tools." } else { "" };
            html! {
                <div class="share-status" role="status">
                    <input class="share-url" type="text" readonly=true value={url.clone()} aria-label="Share link" data-testid="share-url"
                        onfocus={Callback::from(|e: FocusEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); i.select(); })} />
                    <span data-testid="share-size">{ format!("{}. {status}{warn}", link_size(size)) }</span>
                </div>
            }
        }
    };
    html! {
        <div class="share">
            <button type="button" {onclick} data-testid="share-button">{ "Copy share link" }</button>
            { body }
        </div>
    }
}
