//! The overview, first in a trace's or a pair's results: the verdict naming the devices, each
//! side's busy and idle time, and the findings ranked by the time they explain, each with a
//! button that brings its evidence into view.

use analysis::findings::{busy_lines, Evidence, Overview};
use page::ByAddress;
use units::format_duration_us;
use view::findings::evidence_label;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub overview: ByAddress<Overview>,
    /// A finding's evidence button: open the view that holds it.
    pub on_evidence: Callback<Evidence>,
}

/// Where each kind of evidence is drawn: the first of these present on the page.
fn evidence_selector(e: Evidence) -> &'static str {
    match e {
        Evidence::Time => "[data-testid=\"table-gap\"], [data-testid=\"table-ops\"]",
        Evidence::Kernels => "[data-testid=\"table-categories\"]",
        Evidence::Fusion => {
            "[data-testid=\"table-fusion-differences\"], [data-testid^=\"table-opportunities\"], [data-testid=\"table-fusion-groups\"], [data-testid=\"groups-table\"]"
        }
        Evidence::Ranks => "[data-testid=\"table-stragglers\"], [data-testid=\"table-ranks\"]",
    }
}

/// Scrolls the evidence into view and moves the keyboard focus to its heading, so that a
/// keyboard user lands where a mouse user looks.
pub fn show_evidence(e: Evidence) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Ok(Some(el)) = doc.query_selector(evidence_selector(e)) {
        el.scroll_into_view();
        if let Ok(Some(h)) = el.query_selector("h3") {
            let _ = h.set_attribute("tabindex", "-1");
            if let Ok(h) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(h) {
                let _ = h.focus();
            }
        }
    }
}

#[function_component(OverviewView)]
pub fn overview_view(props: &Props) -> Html {
    let o = &props.overview;
    html! {
        <section class="overview" aria-labelledby="overview-h" data-testid="overview">
            <h3 id="overview-h" class="visually-hidden">{ "Overview" }</h3>
            <p class="verdict" data-testid="verdict">{ o.verdict.text.clone() }</p>
            { for busy_lines(&o.verdict).into_iter().map(|l| html! { <p class="busy" data-testid="busy">{ l }</p> }) }
            if !o.findings.is_empty() {
                <ol class="findings" aria-label="Findings, ranked by the time they explain">
                    { for o.findings.iter().map(|f| {
                        let evidence = f.evidence;
                        let on_evidence = props.on_evidence.clone();
                        let onclick = Callback::from(move |_| on_evidence.emit(evidence));
                        html! {
                            <li data-testid="finding" data-time-us={f.time_us.to_string()}>
                                <span class="finding-time">{ format_duration_us(f.time_us) }</span>
                                <span class="finding-text">{ f.text.clone() }</span>
                                <button type="button" class="link finding-evidence" {onclick}>
                                    { format!("{} →", evidence_label(evidence)) }
                                </button>
                            </li>
                        }
                    }) }
                </ol>
            }
        </section>
    }
}
