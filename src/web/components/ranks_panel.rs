//! The Ranks view: the ranks of one distributed job opened together (`fusionscope ranks`) — a
//! strip per rank of where its time went, the ranks, the collectives matched across ranks
//! (sortable, virtualised), what could not be matched and the stragglers. Clicking a rank (its
//! strip or its row) opens that rank's trace view. The worker draws all of it
//! (`view::ranks::RanksDrawn`); this only lays it out.

use yew::prelude::*;

use page::ByAddress;
use table::DataTable;
use view::ranks::{strips_svg, RanksDrawn, RANKS_TABLE};

use super::overview::{show_evidence, OverviewView};
use super::share_link::ShareLink;
use crate::browser;

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub drawn: ByAddress<RanksDrawn>,
    /// A rank clicked: open its trace view.
    pub on_rank: Callback<u32>,
    pub on_close: Callback<()>,
    pub on_error: Callback<String>,
    /// The share link's fragment for this view, or why there is none.
    pub make_fragment: Callback<(), Result<String, String>>,
}

#[function_component(RanksPanel)]
pub fn ranks_panel(props: &Props) -> Html {
    let d = &props.drawn;
    let tables = use_memo(d.clone(), |d| d.tables.iter().map(|t| ByAddress::new(t.table())).collect::<Vec<_>>());
    let strips = use_memo(d.clone(), |d| AttrValue::from(strips_svg(&d.strips)));
    let overview = (*use_memo(d.clone(), |d| ByAddress::new(d.overview.clone()))).clone();
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
    let table_view = |t: &ByAddress<DataTable>| {
        let on_activate = (t.id == RANKS_TABLE).then(|| {
            let (d, on_rank) = (d.clone(), props.on_rank.clone());
            Callback::from(move |row: usize| {
                if let Some((rank, _)) = d.ranks.get(row) {
                    on_rank.emit(*rank);
                }
            })
        });
        html! { <DataTableView key={t.id} table={t.clone()} {on_activate} /> }
    };
    let on_close = props.on_close.clone();
    let export = {
        let (d, on_error) = (d.clone(), props.on_error.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = browser::download("ranks.json", "application/json", &format!("{}\n", d.report_json)) {
                on_error.emit(format!("The JSON export failed: {e}."));
            }
        })
    };
    html! {
        <section class="panel results trace ranks" aria-labelledby="ranks-h" data-testid="ranks-panel">
            <div class="results-head">
                <h2 id="ranks-h" data-testid="results-title">{ format!("Ranks of one job ({})", d.ranks.len()) }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the Ranks view" }</button>
                </div>
                <ShareLink make_fragment={props.make_fragment.clone()} />
            </div>
            if d.trimmed {
                <p class="hint" data-testid="trimmed-note">{ format!(
                    "Opened from a share link, which carries the figures without the traces: the collectives table keeps the {} with the largest start skew. Open the rank files for every collective and to open a rank's trace.",
                    share::SHARED_COLLECTIVE_ROWS) }</p>
            }
            <OverviewView overview={overview} on_evidence={Callback::from(show_evidence)} />
            <p class="headline" data-testid="ranks-headline">{ d.headline.clone() }</p>
            <p class="hint">{ "Click a rank's strip or row to open its trace." }</p>
            <figure class="chart rank-strips" data-testid="chart-ranks" onclick={on_strip}>
                { Html::from_html_unchecked((*strips).clone()) }
            </figure>
            { for tables.iter().map(table_view) }
            if !d.notes.is_empty() {
                <ul class="notes" data-testid="ranks-notes">
                    { for d.notes.iter().map(|n| html! { <li>{ n.clone() }</li> }) }
                </ul>
            }
            if !d.report_json.is_empty() {
                <div class="exports" role="group" aria-label="Export">
                    <span class="exports-label">{ "Export:" }</span>
                    <button type="button" onclick={export} data-export=".json">{ "JSON" }</button>
                </div>
            }
        </section>
    }
}
