//! Export buttons: the analysis as JSON (the command line's `--json --details` object, byte
//! for byte), the groups and totals as CSV, the summary as Markdown, and each chart as SVG.

use yew::prelude::*;

use page::ByAddress;

use draw::chart::{group_traffic_chart, total_traffic_chart};
use fusion::analysis::report_json_text;
use fusion::summary::{groups_table, markdown_report, totals_table};
use fusion::AnalysisReport;

use crate::browser;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: ByAddress<AnalysisReport>,
    /// File names start with this (e.g. the graph file's name without extension).
    pub base_name: AttrValue,
    /// Where an export that fails says why.
    pub on_error: Callback<String>,
}

/// One export: its button label, file suffix, MIME type and content.
type Export = (&'static str, &'static str, &'static str, fn(&AnalysisReport) -> String);

const EXPORTS: [Export; 6] = [
    ("JSON", ".json", "application/json", report_json_text),
    ("CSV (groups)", "-groups.csv", "text/csv", |r| groups_table(r).to_csv()),
    ("CSV (totals)", "-totals.csv", "text/csv", |r| totals_table(r).to_csv()),
    ("Markdown", ".md", "text/markdown", |r| markdown_report(r)),
    ("SVG (groups chart)", "-groups.svg", "image/svg+xml", |r| group_traffic_chart(r).to_svg()),
    ("SVG (total chart)", "-total.svg", "image/svg+xml", |r| total_traffic_chart(r).to_svg()),
];

#[function_component(Exports)]
pub fn exports(props: &Props) -> Html {
    let buttons = EXPORTS.iter().map(|&(label, suffix, mime, make)| {
        let report = props.report.clone();
        let file_name = format!("{}{suffix}", props.base_name);
        let on_error = props.on_error.clone();
        let onclick = Callback::from(move |_| {
            if let Err(e) = browser::download(&file_name, mime, &make(&report)) {
                on_error.emit(format!("The {label} export failed: {e}."));
            }
        });
        html! { <button type="button" {onclick} data-export={suffix}>{ label }</button> }
    });
    html! {
        <div class="exports" role="group" aria-label="Export">
            <span class="exports-label">{ "Export:" }</span>
            { for buttons }
        </div>
    }
}
