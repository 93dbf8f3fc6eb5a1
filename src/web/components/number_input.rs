//! The whole-number inputs of a form ([`page::form`]), drawn the same in every form: a
//! label, a text input that keeps what was typed (so a bad value can be quoted back), marked
//! invalid while the form's message is about it. A function rather than a function component:
//! it holds no state, and each component type is code in the page's first download.

use yew::prelude::*;

use page::form::{input_id, NumberField, Numbers};

/// The inputs to draw and what typing in them does.
pub struct NumberInputs<F: NumberField> {
    pub numbers: Numbers<F>,
    /// The fields to draw, in order (a form may draw one of its fields another way).
    pub fields: Vec<F>,
    /// The form's element ids start with this (`in-model-`).
    pub id_prefix: &'static str,
    /// Shown in an empty input (what an empty field means), if anything.
    pub placeholder: Option<&'static str>,
    /// The form's message, if any: a field is invalid when the message starts with its label.
    pub error: Option<String>,
    /// The id of the element holding the form's message.
    pub described_by: &'static str,
    pub on_change: Callback<(F, String)>,
}

/// One labelled input per field.
pub fn number_inputs<F: NumberField>(props: NumberInputs<F>) -> Html {
    let props = &props;
    let input = |field: F| {
        let id = input_id(props.id_prefix, field);
        let on_change = props.on_change.clone();
        let oninput = Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            on_change.emit((field, input.value()));
        });
        let invalid = props.error.as_deref().is_some_and(|m| m.starts_with(field.label()));
        html! {
            <label class="field" for={id.clone()}>
                <span>{ field.label() }</span>
                <input {id} type="text" inputmode="numeric" autocomplete="off" spellcheck="false"
                    placeholder={props.placeholder} value={props.numbers.get(field).to_string()} {oninput}
                    aria-invalid={invalid.to_string()} aria-describedby={props.described_by} />
            </label>
        }
    };
    html! { <>{ for props.fields.iter().copied().map(input) }</> }
}
