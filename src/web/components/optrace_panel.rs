//! The op-trace view: Nova's case view of every instruction, the unmapped instructions, what
//! had to be assumed, and the exports (the command line's `optrace --json`, the tables as CSV).
//! The fusion groups and traffic of the converted op graph are the page's usual panels below.

use yew::prelude::*;

use optrace::view::{case_table, headline, report_json, unmapped_table};
use optrace::OptraceReport;
use page::ByAddress;
use table::DataTable;

use super::data_table::DataTableView;
use super::download_button::DownloadButton;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub file_name: AttrValue,
    pub report: ByAddress<OptraceReport>,
    pub on_close: Callback<()>,
    pub on_error: Callback<String>,
}

/// `trace.optrace` → `trace`.
fn stem(file: &str) -> &str {
    file.strip_suffix(".optrace").or_else(|| file.strip_suffix(".txt")).unwrap_or(file)
}

#[function_component(OptracePanel)]
pub fn optrace_panel(props: &Props) -> Html {
    let tables = use_memo(props.report.clone(), |r| [ByAddress::new(case_table(r)), ByAddress::new(unmapped_table(r))]);
    let r = &props.report;
    let base = stem(&props.file_name).to_string();
    let json = {
        let report = props.report.clone();
        Callback::from(move |()| report_json(&report))
    };
    let csv = |t: &ByAddress<DataTable>| {
        let t = t.clone();
        Callback::from(move |()| t.exact_table().to_csv())
    };
    let on_close = props.on_close.clone();
    html! {
        <section class="panel optrace" aria-labelledby="optrace-h" data-testid="optrace-panel">
            <div class="results-head">
                <h2 id="optrace-h">{ format!("Op trace {}", props.file_name) }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the op trace" }</button>
                </div>
            </div>
            <p data-testid="optrace-headline">{ headline(r) }</p>
            <p class="hint">
                { "Each instruction with Nova's case type and shape, operand and result ids with the shape written at that use, \
                   and the addresses Nova's bump allocator gives them from 5 TiB (decimal and hex). Below: the trace as an op graph \
                   (dot, allgather_gemm, flash attention → matmul; layer_norm → reduction; add, gelu, embedding → elementwise; \
                   transpose → reshape; collectives and unknown ops stand alone), its fusion groups and traffic." }
            </p>
            if !r.warnings.is_empty() {
                <ul class="warnings" data-testid="optrace-warnings">
                    { for r.warnings.iter().map(|w| html! { <li>{ format!("Line {}: {}", w.line, w.message) }</li> }) }
                </ul>
            }
            { for tables.iter().map(|t| html! { <DataTableView key={format!("{base}-{}", t.id)} table={t.clone()} /> }) }
            <div class="exports" role="group" aria-label="Export the case view">
                <span class="exports-label">{ "Export:" }</span>
                <DownloadButton label="JSON (as optrace --json)" file_name={format!("{base}-optrace.json")} mime="application/json"
                    make={json} on_error={props.on_error.clone()} suffix="-optrace.json" />
                <DownloadButton label="CSV (cases)" file_name={format!("{base}-cases.csv")} mime="text/csv"
                    make={csv(&tables[0])} on_error={props.on_error.clone()} suffix="-cases.csv" />
                <DownloadButton label="CSV (unmapped)" file_name={format!("{base}-unmapped.csv")} mime="text/csv"
                    make={csv(&tables[1])} on_error={props.on_error.clone()} suffix="-unmapped.csv" />
            </div>
        </section>
    }
}
