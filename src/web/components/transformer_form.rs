//! The transformer block's inputs: S, H, NH as number inputs and the element size as a choice.

use yew::prelude::*;

use super::number_input::{number_inputs, NumberInputs};
use page::form::transformer::{TransformerField, TransformerForm, ID_PREFIX};
use page::form::{input_id, NumberField};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub form: TransformerForm,
    /// Why the inputs cannot be analysed, shown under them.
    pub error: Option<String>,
    pub on_change: Callback<(TransformerField, String)>,
}

/// Element sizes offered, with the data types that have them.
const DTYPES: [(&str, &str); 4] =
    [("1", "1 byte (fp8, int8)"), ("2", "2 bytes (fp16, bf16)"), ("4", "4 bytes (fp32)"), ("8", "8 bytes (fp64)")];

#[function_component(TransformerFormView)]
pub fn transformer_form(props: &Props) -> Html {
    let on_dtype = {
        let on_change = props.on_change.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            on_change.emit((TransformerField::DtypeBytes, select.value()));
        })
    };
    let current = props.form.get(TransformerField::DtypeBytes).to_string();
    let dtype_id = input_id(ID_PREFIX, TransformerField::DtypeBytes);
    html! {
        <form class="transformer-form" aria-label="Transformer block inputs" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { number_inputs(NumberInputs { numbers: props.form.clone(), id_prefix: ID_PREFIX, placeholder: None,
                fields: vec![TransformerField::SeqLen, TransformerField::Hidden, TransformerField::Heads],
                error: props.error.clone(), described_by: "form-error", on_change: props.on_change.clone() }) }
            <label class="field" for={dtype_id.clone()}>
                <span>{ TransformerField::DtypeBytes.label() }</span>
                <select id={dtype_id} onchange={on_dtype}>
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
