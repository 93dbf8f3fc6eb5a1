//! The chip the time model uses: the presets and the chips loaded from files.

use yew::prelude::*;

use hardware::ChipChoice;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Every chip offered, with its label.
    pub options: Vec<(ChipChoice, String)>,
    pub chosen: ChipChoice,
    pub on_change: Callback<ChipChoice>,
    /// Element id of the select (the page has one picker per view that uses a chip).
    #[prop_or(AttrValue::from("in-chip"))]
    pub id: AttrValue,
    #[prop_or(AttrValue::from("chip-picker"))]
    pub testid: AttrValue,
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
        <label class="field" for={props.id.clone()}>
            <span>{ "Chip" }</span>
            <select id={props.id.clone()} data-testid={props.testid.clone()} {onchange}>
                { for props.options.iter().enumerate().map(|(i, (choice, label))| html! {
                    <option value={i.to_string()} selected={*choice == props.chosen}>{ label.clone() }</option>
                }) }
            </select>
        </label>
    }
}
