//! The traces opened: file, vendor and devices, kernel count; pick any two as A and B and
//! compare them, show one's summary, or remove one. Radio groups and buttons, so every action
//! is reachable from the keyboard.

use yew::prelude::*;

use page::{LoadedTrace, PairSide};
use trace::Processor;
use units::group_digits;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub opened: Vec<LoadedTrace>,
    /// Ids of A and B.
    pub pair: Option<(u32, u32)>,
    /// A comparison is being computed.
    pub comparing: bool,
    pub on_show: Callback<u32>,
    pub on_pick: Callback<(PairSide, u32)>,
    pub on_remove: Callback<u32>,
    pub on_compare: Callback<()>,
}

/// "NVIDIA on NVIDIA H100 80GB HBM3" from the summary's first platform; "CPU" for a CPU run,
/// which has no GPU vendor.
fn platform(t: &LoadedTrace) -> (String, String) {
    match t.summary.platforms.first() {
        Some(p) if p.processor() == Processor::Cpu => ("CPU".to_string(), group_digits(p.kernels as u64)),
        Some(p) => {
            let devices = if p.devices.is_empty() { "no device".to_string() } else { p.devices.join(", ") };
            (format!("{} on {devices}", p.vendor), group_digits(p.kernels as u64))
        }
        None => ("unknown".to_string(), "0".to_string()),
    }
}

fn radio(side: PairSide, t: &LoadedTrace, checked: bool, on_pick: &Callback<(PairSide, u32)>) -> Html {
    let (name, label) = match side {
        PairSide::A => ("trace-a", "A"),
        PairSide::B => ("trace-b", "B"),
    };
    let id = t.id;
    let on_pick = on_pick.clone();
    html! {
        <input type="radio" {name} {checked} aria-label={format!("{label}: {}", t.file_name)}
            data-testid={format!("pick-{}", label.to_lowercase())}
            onchange={Callback::from(move |_| on_pick.emit((side, id)))} />
    }
}

#[function_component(TraceList)]
pub fn trace_list(props: &Props) -> Html {
    let (a, b) = props.pair.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let can_compare = props.pair.is_some_and(|(a, b)| a != b) && !props.comparing;
    let on_compare = props.on_compare.clone();
    html! {
        <section class="panel trace-list" aria-labelledby="trace-list-h" data-testid="trace-list">
            <h2 id="trace-list-h">{ "Opened traces" }</h2>
            <table>
                <caption class="hint">{ "Pick any two as A and B to compare them; the summary of each is a click away." }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ "File" }</th>
                        <th scope="col">{ "Vendor, devices" }</th>
                        <th scope="col" class="num">{ "Kernels" }</th>
                        <th scope="col">{ "A" }</th>
                        <th scope="col">{ "B" }</th>
                        <th scope="col"><span class="visually-hidden">{ "Actions" }</span></th>
                    </tr>
                </thead>
                <tbody>
                    { for props.opened.iter().map(|t| {
                        let (platform, kernels) = platform(t);
                        let (show, remove, id) = (props.on_show.clone(), props.on_remove.clone(), t.id);
                        html! {
                            <tr key={t.id} data-testid="trace-row">
                                <th scope="row" data-testid="trace-file">{ t.file_name.clone() }</th>
                                <td data-testid="trace-platform">{ platform }</td>
                                <td class="num" data-testid="trace-kernels">{ kernels }</td>
                                <td>{ radio(PairSide::A, t, a == Some(t.id), &props.on_pick) }</td>
                                <td>{ radio(PairSide::B, t, b == Some(t.id), &props.on_pick) }</td>
                                <td class="row-actions">
                                    <button type="button" data-testid="show-trace" aria-label={format!("Show the summary of {}", t.file_name)}
                                        onclick={move |_| show.emit(id)}>{ "Summary" }</button>
                                    <button type="button" data-testid="remove-trace" aria-label={format!("Remove {}", t.file_name)}
                                        onclick={move |_| remove.emit(id)}>{ "Remove" }</button>
                                </td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            <button type="button" data-testid="compare-pair" disabled={!can_compare} onclick={move |_| on_compare.emit(())}>
                { if props.comparing { "Comparing…" } else { "Compare A with B" } }
            </button>
            if props.opened.len() < 2 {
                <span class="hint">{ " Open another trace to compare it with this one." }</span>
            }
        </section>
    }
}
