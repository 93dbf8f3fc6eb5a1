//! One row per fusion group: its kind, its ops and its traffic unfused and fused.

use yew::prelude::*;

use crate::web::shared::Shared;

use crate::fusion::AnalysisReport;
use crate::units::{format_bytes, format_pct, group_digits};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Shared<AnalysisReport>,
}

fn bytes_cell(b: u64) -> Html {
    html! { <td class="num" title={format!("{} bytes", group_digits(b))}>{ format_bytes(b) }</td> }
}

/// Rows drawn at most; the exports carry every group.
pub const MAX_ROWS: usize = 1000;

#[function_component(GroupsTable)]
pub fn groups_table(props: &Props) -> Html {
    let r = &props.report;
    html! {
        <div class="table-wrap">
            <table class="groups" data-testid="groups-table">
                <caption>{ format!("{} fusion groups, in the order they were started", r.group_details.len()) }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ "#" }</th>
                        <th scope="col">{ "kind" }</th>
                        <th scope="col">{ "ops" }</th>
                        <th scope="col" class="num">{ "unfused" }</th>
                        <th scope="col" class="num">{ "fused read" }</th>
                        <th scope="col" class="num">{ "fused written" }</th>
                        <th scope="col" class="num">{ "fused" }</th>
                        <th scope="col" class="num">{ "saved" }</th>
                    </tr>
                </thead>
                <tbody>
                    { for r.group_details.iter().enumerate().take(MAX_ROWS).map(|(i, g)| {
                        let kind = format!("{:?}", g.kind).to_lowercase();
                        let saved_pct = if g.unfused.total == 0 { 0.0 } else {
                            100.0 * g.fused.saved_by_fusion as f64 / g.unfused.total as f64
                        };
                        html! {
                            <tr>
                                <th scope="row">{ i + 1 }</th>
                                <td><span class={classes!("kind", kind.clone())}>{ kind }</span></td>
                                <td class="ops">{ g.ops.join(", ") }</td>
                                { bytes_cell(g.unfused.total) }
                                { bytes_cell(g.fused.bytes_read) }
                                { bytes_cell(g.fused.bytes_written) }
                                { bytes_cell(g.fused.total) }
                                <td class="num" title={format!("{} bytes", group_digits(g.fused.saved_by_fusion))}>
                                    { format!("{} ({})", format_bytes(g.fused.saved_by_fusion), format_pct(saved_pct)) }
                                </td>
                            </tr>
                        }
                    }) }
                </tbody>
                <tfoot>
                    <tr>
                        <th scope="row" colspan="3">{ "total" }</th>
                        { bytes_cell(r.unfused.total) }
                        { bytes_cell(r.fused.bytes_read) }
                        { bytes_cell(r.fused.bytes_written) }
                        { bytes_cell(r.fused.total) }
                        <td class="num">{ format!("{} ({})", format_bytes(r.fused.saved_by_fusion), format_pct(r.savings_pct)) }</td>
                    </tr>
                </tfoot>
            </table>
            if r.group_details.len() > MAX_ROWS {
                <p class="hint">{ format!("The table shows the first {} of {} groups; the CSV and JSON exports have them all.",
                    group_digits(MAX_ROWS as u64), group_digits(r.group_details.len() as u64)) }</p>
            }
        </div>
    }
}
