//! The "Open" button: a real button (keyboard reachable) in front of a visually hidden file
//! input.

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_files: Callback<Vec<web_sys::File>>,
}

/// The files of a `FileList`, in order.
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

#[function_component(FileOpen)]
pub fn file_open(props: &Props) -> Html {
    let input = use_node_ref();
    let onclick = {
        let input = input.clone();
        Callback::from(move |_| {
            if let Some(el) = input.cast::<web_sys::HtmlInputElement>() {
                el.click();
            }
        })
    };
    let onchange = {
        let on_files = props.on_files.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let files = files_of(el.files());
            el.set_value(""); // choosing the same file again opens it again
            on_files.emit(files);
        })
    };
    html! {
        <span class="file-open">
            <button type="button" {onclick} data-testid="open-button">{ "Open…" }</button>
            <input ref={input} id="file-input" class="visually-hidden" type="file" tabindex="-1" multiple=true
                accept=".json,.gz,.csv,.txt,application/json,application/gzip,text/csv,text/plain"
                aria-label="Open files (two traces are compared)" {onchange} />
        </span>
    }
}
