//! A traffic bar chart: the core draws the SVG ([`fusionscope::chart`]) and the page shows
//! exactly that document, so what is exported is what is seen.

use yew::prelude::*;

use crate::chart::BarChart;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub chart: BarChart,
    /// `data-testid` of the figure, for tests and export links.
    pub id: AttrValue,
}

#[function_component(TrafficChart)]
pub fn traffic_chart(props: &Props) -> Html {
    let svg = props.chart.to_svg();
    html! {
        <figure class="chart" data-testid={props.id.clone()}>
            { Html::from_html_unchecked(AttrValue::from(svg)) }
        </figure>
    }
}
