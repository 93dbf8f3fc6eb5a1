//! The transformer block's inputs: S, H, NH as text fields and the element size as a choice.

use yew::prelude::*;

use crate::web::state::{Field, TransformerForm};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub form: TransformerForm,
    /// Why the inputs cannot be analysed, shown under them.
    pub error: Option<String>,
    pub on_change: Callback<(Field, String)>,
}

/// Element sizes offered, with the data types that have them.
const DTYPES: [(&str, &str); 4] =
    [("1", "1 byte (fp8, int8)"), ("2", "2 bytes (fp16, bf16)"), ("4", "4 bytes (fp32)"), ("8", "8 bytes (fp64)")];

#[function_component(TransformerFormView)]
pub fn transformer_form(props: &Props) -> Html {
    let text_input = |field: Field| {
        let on_change = props.on_change.clone();
        let oninput = Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            on_change.emit((field, input.value()));
        });
        let invalid = props.error.as_deref().is_some_and(|m| m.starts_with(field.label()));
        html! {
            <label class="field" for={field.id()}>
                <span>{ field.label() }</span>
                <input id={field.id()} type="text" inputmode="numeric" autocomplete="off" spellcheck="false"
                    value={props.form.get(field).to_string()} {oninput}
                    aria-invalid={invalid.to_string()} aria-describedby="form-error" />
            </label>
        }
    };
    let on_dtype = {
        let on_change = props.on_change.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            on_change.emit((Field::DtypeBytes, select.value()));
        })
    };
    let current = props.form.dtype_bytes.clone();
    html! {
        <form class="transformer-form" aria-label="Transformer block inputs" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { text_input(Field::SeqLen) }
            { text_input(Field::Hidden) }
            { text_input(Field::Heads) }
            <label class="field" for={Field::DtypeBytes.id()}>
                <span>{ Field::DtypeBytes.label() }</span>
                <select id={Field::DtypeBytes.id()} onchange={on_dtype}>
                    { for DTYPES.iter().map(|(v, text)| html! {
                        <option value={*v} selected={current == *v}>{ *text }</option>
                    }) }
                </select>
            </label>
            <p id="form-error" class="form-error" role="status" aria-live="polite">
                { props.error.clone().unwrap_or_default() }
            </p>
        </form>
    }
}
