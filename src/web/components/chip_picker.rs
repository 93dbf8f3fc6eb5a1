//! The chip the time model uses: the presets and the chips loaded from files.

use yew::prelude::*;

use crate::hardware::ChipChoice;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Every chip offered, with its label.
    pub options: Vec<(ChipChoice, String)>,
    pub chosen: ChipChoice,
    pub on_change: Callback<ChipChoice>,
}

#[function_component(ChipPicker)]
pub fn chip_picker(props: &Props) -> Html {
    let onchange = {
        let options = props.options.clone();
        let on_change = props.on_change.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some((choice, _)) = select.value().parse::<usize>().ok().and_then(|i| options.get(i)) {
                on_change.emit(choice.clone());
            }
        })
    };
    html! {
        <label class="field" for="in-chip">
            <span>{ "Chip" }</span>
            <select id="in-chip" data-testid="chip-picker" {onchange}>
                { for props.options.iter().enumerate().map(|(i, (choice, label))| html! {
                    <option value={i.to_string()} selected={*choice == props.chosen}>{ label.clone() }</option>
                }) }
            </select>
        </label>
    }
}
