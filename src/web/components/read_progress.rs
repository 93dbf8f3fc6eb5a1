//! The progress of a file being read: bytes so far, rate, time left, and a Cancel button.

use yew::prelude::*;

use page::Reading;
use units::{format_bytes, format_duration_us};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub reading: Reading,
    pub on_cancel: Callback<()>,
}

#[function_component(ReadProgress)]
pub fn read_progress(props: &Props) -> Html {
    let r = &props.reading;
    let now = js_sys::Date::now();
    let rate = r.rate(now);
    let left = r.seconds_left(now).map(|s| format!(", about {} left", format_duration_us((s.round() * 1e6).max(1e6))));
    let on_cancel = props.on_cancel.clone();
    let pct = if r.total > 0.0 { 100.0 * r.done / r.total } else { 0.0 };
    html! {
        <div class="reading" role="status" data-testid="reading">
            <span class="reading-name">{ format!("Reading {}", r.file_name) }</span>
            <progress max="100" value={format!("{pct:.1}")} aria-label={format!("Reading {}", r.file_name)}></progress>
            <span class="reading-figures">
                { format!("{} of {}", format_bytes(r.done as u64), format_bytes(r.total as u64)) }
                { if rate > 0.0 { format!(", {:.1} MB/s", rate / 1e6) } else { String::new() } }
                { left.unwrap_or_default() }
            </span>
            <button type="button" onclick={Callback::from(move |_| on_cancel.emit(()))} data-testid="cancel-read">{ "Cancel" }</button>
        </div>
    }
}
