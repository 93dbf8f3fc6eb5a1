//! A traffic bar chart: the core draws the SVG ([`draw::chart`]) and the page shows exactly
//! that document, so what is exported is what is seen. The SVG is only redrawn when the
//! analysis changes.

use yew::prelude::*;

use draw::chart::{group_traffic_chart, total_traffic_chart};
use fusion::AnalysisReport;
use page::ByAddress;

/// Which chart of an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Unfused vs fused bytes of each group.
    PerGroup,
    /// Unfused vs fused bytes of the whole graph.
    Total,
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: ByAddress<AnalysisReport>,
    pub kind: ChartKind,
    /// `data-testid` of the figure, for tests.
    pub id: AttrValue,
}

#[function_component(TrafficChart)]
pub fn traffic_chart(props: &Props) -> Html {
    let svg = use_memo((props.report.clone(), props.kind), |(report, kind)| {
        AttrValue::from(match kind {
            ChartKind::PerGroup => group_traffic_chart(report).to_svg(),
            ChartKind::Total => total_traffic_chart(report).to_svg(),
        })
    });
    html! {
        <figure class="chart" data-testid={props.id.clone()}>
            { Html::from_html_unchecked((*svg).clone()) }
        </figure>
    }
}
