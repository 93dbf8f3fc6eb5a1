//! One row per fusion group: its kind, its ops and its traffic unfused and fused, as a
//! virtualised table ([`super::data_table::DataTableView`]) sortable and filterable over every
//! group; the totals are the line under it.

use yew::prelude::*;

use fusion::tables::groups_table;
use fusion::AnalysisReport;
use page::ByAddress;
use units::{format_bytes, format_pct};

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: ByAddress<AnalysisReport>,
}

#[function_component(GroupsTable)]
pub fn groups_table_view(props: &Props) -> Html {
    let table = use_memo(props.report.clone(), |r| ByAddress::new(groups_table(r)));
    let r = &props.report;
    let footer = format!(
        "Total: unfused {}, fused {} (read {}, written {}), saved {} ({}).",
        format_bytes(r.unfused.total),
        format_bytes(r.fused.total),
        format_bytes(r.fused.bytes_read),
        format_bytes(r.fused.bytes_written),
        format_bytes(r.fused.saved_by_fusion),
        format_pct(r.savings_pct)
    );
    html! {
        <div class="groups" data-testid="groups-table">
            <DataTableView table={(*table).clone()} footer={AttrValue::from(footer)} />
        </div>
    }
}
