//! The Ranks view: the ranks of one distributed job opened together (`fusionscope ranks`) — a
//! strip per rank of where its time went, the ranks, the collectives matched across ranks
//! (sortable, virtualised), what could not be matched and the stragglers. Clicking a rank (its
//! strip or its row) opens that rank's trace view. Everything drawn comes from the core
//! (`trace::view::ranks`); this only lays it out.

use yew::prelude::*;

use crate::page::Shared;
use crate::table::DataTable;
use crate::trace::ranks::JobReport;
use crate::trace::view::ranks::{rank_strips, ranks_headline, ranks_tables, RANKS_TABLE};
use crate::web::browser;

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Shared<JobReport>,
    /// A rank clicked: open its trace view.
    pub on_rank: Callback<u32>,
    pub on_close: Callback<()>,
    pub on_error: Callback<String>,
}

struct Drawn {
    headline: String,
    strips: AttrValue,
    tables: Vec<Shared<DataTable>>,
}

fn drawn(report: &Shared<JobReport>) -> Drawn {
    Drawn {
        headline: ranks_headline(report),
        strips: rank_strips(report).into(),
        tables: ranks_tables(report).into_iter().map(Shared::new).collect(),
    }
}

#[function_component(RanksPanel)]
pub fn ranks_panel(props: &Props) -> Html {
    let d = use_memo(props.report.clone(), drawn);
    let report = props.report.clone();
    let on_strip = {
        let on_rank = props.on_rank.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(target) = e.target_dyn_into::<web_sys::Element>() else { return };
            let rank = target.closest("[data-rank]").ok().flatten().and_then(|g| g.get_attribute("data-rank"));
            if let Some(rank) = rank.and_then(|r| r.parse().ok()) {
                on_rank.emit(rank);
            }
        })
    };
    let table_view = |t: &Shared<DataTable>| {
        let on_activate = (t.id == RANKS_TABLE).then(|| {
            let (report, on_rank) = (report.clone(), props.on_rank.clone());
            Callback::from(move |row: usize| {
                if let Some(e) = report.ranks.get(row) {
                    on_rank.emit(e.rank);
                }
            })
        });
        html! { <DataTableView key={t.id} table={t.clone()} {on_activate} /> }
    };
    let on_close = props.on_close.clone();
    let export = {
        let (report, on_error) = (props.report.clone(), props.on_error.clone());
        Callback::from(move |_: MouseEvent| {
            let json = serde_json::to_string_pretty(&*report).map(|s| s + "\n").unwrap_or_default();
            if let Err(e) = browser::download("ranks.json", "application/json", &json) {
                on_error.emit(format!("The JSON export failed: {e}."));
            }
        })
    };
    let notes = props.report.ranks.iter().flat_map(|e| e.notes.iter().map(move |n| format!("rank {}: {n}", e.rank)));
    let notes: Vec<String> = notes.chain(props.report.notes.iter().cloned()).collect();
    html! {
        <section class="panel results trace ranks" aria-labelledby="ranks-h" data-testid="ranks-panel">
            <div class="results-head">
                <h2 id="ranks-h" data-testid="results-title">{ format!("Ranks of one job ({})", props.report.ranks.len()) }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the Ranks view" }</button>
                </div>
            </div>
            <p class="headline" data-testid="ranks-headline">{ d.headline.clone() }</p>
            <p class="hint">{ "Click a rank's strip or row to open its trace." }</p>
            <figure class="chart rank-strips" data-testid="chart-ranks" onclick={on_strip}>
                { Html::from_html_unchecked(d.strips.clone()) }
            </figure>
            { for d.tables.iter().map(table_view) }
            if !notes.is_empty() {
                <ul class="notes" data-testid="ranks-notes">
                    { for notes.into_iter().map(|n| html! { <li>{ n }</li> }) }
                </ul>
            }
            <div class="exports" role="group" aria-label="Export">
                <span class="exports-label">{ "Export:" }</span>
                <button type="button" onclick={export} data-export=".json">{ "JSON" }</button>
            </div>
        </section>
    }
}
