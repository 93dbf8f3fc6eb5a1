//! One export button: builds its content when clicked (a large table's CSV is not rebuilt on
//! every render) and offers it as a download; a failure is reported through `on_error`.

use yew::prelude::*;

use crate::browser;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub label: AttrValue,
    pub file_name: AttrValue,
    pub mime: AttrValue,
    /// The file's content, made on click.
    pub make: Callback<(), String>,
    /// Where an export that fails says why.
    pub on_error: Callback<String>,
    /// `data-export` (for tests): the file name's suffix after the base name.
    pub suffix: AttrValue,
}

#[function_component(DownloadButton)]
pub fn download_button(props: &Props) -> Html {
    let onclick = {
        let (label, file_name, mime) = (props.label.clone(), props.file_name.clone(), props.mime.clone());
        let (make, on_error) = (props.make.clone(), props.on_error.clone());
        Callback::from(move |_| {
            if let Err(e) = browser::download(&file_name, &mime, &make.emit(())) {
                on_error.emit(format!("The {label} export failed: {e}."));
            }
        })
    };
    html! { <button type="button" {onclick} data-export={props.suffix.clone()}>{ props.label.clone() }</button> }
}
