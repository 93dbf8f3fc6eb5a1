//! The headline figures: unfused and fused traffic, what fusion saves, and the group count.

use yew::prelude::*;

use page::ByAddress;

use fusion::AnalysisReport;
use units::{format_bytes, format_pct, group_digits};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: ByAddress<AnalysisReport>,
}

fn figure(id: &'static str, label: &'static str, bytes: u64) -> Html {
    html! {
        <div class="figure">
            <dt>{ label }</dt>
            <dd data-testid={id}>
                <span class="exact">{ format!("{} bytes", group_digits(bytes)) }</span>
                <span class="unit">{ format_bytes(bytes) }</span>
            </dd>
        </div>
    }
}

#[function_component(Summary)]
pub fn summary(props: &Props) -> Html {
    let r = &props.report;
    html! {
        <dl class="summary" aria-label="Totals">
            <div class="figure">
                <dt>{ "Fusion groups" }</dt>
                <dd data-testid="group-count">
                    <span class="exact">{ group_digits(r.groups.len() as u64) }</span>
                    <span class="unit">{ format!("from {} ops", group_digits(r.op_details.len() as u64)) }</span>
                </dd>
            </div>
            { figure("unfused-total", "Unfused traffic", r.unfused.total) }
            { figure("fused-total", "Fused traffic", r.fused.total) }
            { figure("saved-total", "Saved by fusion", r.fused.saved_by_fusion) }
            <div class="figure highlight">
                <dt>{ "Savings" }</dt>
                <dd data-testid="savings-pct"><span class="exact">{ format_pct(r.savings_pct) }</span>
                    <span class="unit">{ "of unfused traffic" }</span></dd>
            </div>
        </dl>
    }
}
