//! One whole-number input of a form ([`crate::page::form`]), the same in every form: a label,
//! a text input that keeps what was typed (so a bad value can be quoted back), marked invalid
//! while the form's message is about it.

use yew::prelude::*;

use crate::page::form::{input_id, NumberField, Numbers};

#[derive(Properties, PartialEq)]
pub struct Props<F: NumberField> {
    pub numbers: Numbers<F>,
    /// The fields to draw, in order (a form may draw one of its fields another way).
    pub fields: Vec<F>,
    /// The form's element ids start with this (`in-model-`).
    pub id_prefix: &'static str,
    /// Shown in an empty input (what an empty field means), if anything.
    #[prop_or_default]
    pub placeholder: Option<&'static str>,
    /// The form's message, if any: a field is invalid when the message starts with its label.
    pub error: Option<String>,
    /// The id of the element holding the form's message.
    pub described_by: &'static str,
    pub on_change: Callback<(F, String)>,
}

#[function_component(NumberInputs)]
pub fn number_inputs<F: NumberField>(props: &Props<F>) -> Html {
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
