//! The simulator-table view: the table's fusion-index groups with times, bound, FLOPs and
//! bytes, and beside it our analysis of the same model and chip (the workload read from the
//! file name, editable), role by role with ours/simulator ratios, and where the docs explain
//! the differences.

use yew::prelude::*;

use crate::components::number_input::{number_inputs, NumberInputs};
use hardware::{preset, preset_names};
use page::form::sim::SetupForm;
use page::form::{NumberField, WorkloadField};
use page::ByAddress;
use page::SimView;
use simcsv::view::{comparison_table, groups_table, headline, DOCS_NOTE};
use simcsv::{side_by_side, SideBySide};
use table::DataTable;
use units::group_digits;
use workload::{model_names, Phase};

use super::data_table::DataTableView;
use super::download_button::DownloadButton;
use super::share_link::ShareLink;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub view: SimView,
    pub on_form: Callback<SetupForm>,
    pub on_close: Callback<()>,
    pub on_error: Callback<String>,
    /// The share link's fragment, or why there is none.
    pub make_fragment: Callback<(), Result<String, String>>,
}

/// The side-by-side of a form, or why there is none.
fn compared(table: &simcsv::SimTable, form: &SetupForm) -> Result<(SideBySide, ByAddress<DataTable>), String> {
    let setup = form.setup()?;
    let s = side_by_side(table, &setup).map_err(|e| format!("Our side cannot be built: {e}."))?;
    let t = ByAddress::new(comparison_table(&s));
    Ok((s, t))
}

fn select(
    id: &'static str,
    label: &'static str,
    options: Vec<(String, String)>,
    current: &str,
    on: Callback<String>,
) -> Html {
    let onchange = Callback::from(move |e: Event| {
        let s: web_sys::HtmlSelectElement = e.target_unchecked_into();
        on.emit(s.value());
    });
    html! {
        <label class="field" for={id}>
            <span>{ label }</span>
            <select {id} {onchange}>
                { for options.into_iter().map(|(value, text)| {
                    let selected = value == current;
                    html! { <option {value} {selected}>{ text }</option> }
                }) }
            </select>
        </label>
    }
}

fn setup_form(form: &SetupForm, error: Option<&str>, on_form: &Callback<SetupForm>) -> Html {
    let with = |change: fn(&mut SetupForm, String)| {
        let (form, on_form) = (form.clone(), on_form.clone());
        Callback::from(move |v: String| {
            let mut f = form.clone();
            change(&mut f, v);
            on_form.emit(f);
        })
    };
    let models = model_names().into_iter().map(|m| (m.to_string(), m.to_string())).collect();
    let chips = preset_names()
        .into_iter()
        .map(|c| (c.to_string(), preset(c).map(|p| p.name).unwrap_or_else(|_| c.to_string())))
        .collect();
    let phases =
        [Phase::Prefill, Phase::Decode].iter().map(|p| (p.as_str().to_string(), p.as_str().to_string())).collect();
    let on_size = {
        let (form, on_form) = (form.clone(), on_form.clone());
        Callback::from(move |(field, text): (WorkloadField, String)| {
            on_form.emit(SetupForm { numbers: form.numbers.with(field, text), ..form.clone() })
        })
    };
    html! {
        <form class="transformer-form sim-form" aria-label="Workload compared with the simulator"
            onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { select("sim-model", "Model", models, &form.model, with(|f, v| f.model = v)) }
            { select("sim-chip", "Chip", chips, &form.chip, with(|f, v| f.chip = v)) }
            { select("sim-phase", "Phase", phases, form.phase.as_str(), with(|f, v| f.phase = v.parse().unwrap_or(f.phase))) }
            { number_inputs(NumberInputs { numbers: form.numbers.clone(), fields: WorkloadField::ALL.to_vec(),
                id_prefix: "sim-", placeholder: Some("model default"), error: error.map(str::to_string),
                described_by: "sim-error", on_change: on_size }) }
        </form>
    }
}

#[function_component(SimPanel)]
pub fn sim_panel(props: &Props) -> Html {
    let v = &props.view;
    let groups = use_memo(v.table.clone(), |t| ByAddress::new(groups_table(t)));
    let side = use_memo((v.table.clone(), v.form.clone()), |(t, f)| compared(t, f));
    let base = v.file_name.strip_suffix(".csv").unwrap_or(&v.file_name).to_string();
    let csv = |t: &ByAddress<DataTable>| {
        let t = t.clone();
        Callback::from(move |()| t.exact_table().to_csv())
    };
    let json = {
        let t = v.table.clone();
        Callback::from(move |()| {
            serde_json::to_string_pretty(&*t).map(|s| s + "\n").unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
        })
    };
    let on_close = props.on_close.clone();
    let ours = match &*side {
        Ok((s, table)) => {
            let c = &s.comparison;
            html! { <>
                <p data-testid="sim-setup">
                    { format!("{}. {} simulator rows compared", s.describe(), group_digits(s.rows_compared as u64)) }
                    { if s.rows_other_phase > 0 {
                        format!("; {} rows of the other phase left out.", group_digits(s.rows_other_phase as u64))
                    } else { ".".to_string() } }
                </p>
                <DataTableView key={format!("{base}-side")} table={table.clone()} />
                if !c.sim_only.is_empty() {
                    <p data-testid="sim-only"><strong>{ "Only in the simulator: " }</strong>{ c.sim_only.join(", ") }</p>
                }
                if !c.ours_only.is_empty() {
                    <p data-testid="ours-only"><strong>{ "Only in fusionscope: " }</strong>{ c.ours_only.join(", ") }</p>
                }
                <p class="hint" data-testid="sim-docs">{ DOCS_NOTE }</p>
                <div class="exports" role="group" aria-label="Export the side-by-side">
                    <span class="exports-label">{ "Export:" }</span>
                    <DownloadButton label="CSV (side by side)" file_name={format!("{base}-side-by-side.csv")} mime="text/csv"
                        make={csv(table)} on_error={props.on_error.clone()} suffix="-side-by-side.csv" />
                </div>
            </> }
        }
        Err(e) => html! { <p id="sim-error" class="form-error" role="alert" data-testid="sim-error">{ e.clone() }</p> },
    };
    html! {
        <section class="panel results sim" aria-labelledby="sim-h" data-testid="sim-panel">
            <div class="results-head">
                <h2 id="sim-h" data-testid="results-title">{ format!("Simulator op table {}", v.file_name) }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the simulator table" }</button>
                </div>
                <ShareLink make_fragment={props.make_fragment.clone()} />
            </div>
            <p data-testid="sim-headline">{ headline(&v.table) }</p>
            <DataTableView key={format!("{base}-groups")} table={(*groups).clone()} />
            <div class="exports" role="group" aria-label="Export the simulator table">
                <span class="exports-label">{ "Export:" }</span>
                <DownloadButton label="CSV (groups)" file_name={format!("{base}-sim-groups.csv")} mime="text/csv"
                    make={csv(&groups)} on_error={props.on_error.clone()} suffix="-sim-groups.csv" />
                <DownloadButton label="JSON (as simcsv --json)" file_name={format!("{base}-simcsv.json")} mime="application/json"
                    make={json} on_error={props.on_error.clone()} suffix="-simcsv.json" />
            </div>
            <h3 id="sim-ours-h">{ "Our analysis of the same workload" }</h3>
            <p class="hint">{ "Read from the file name; change any field to compare another workload. Figures are per execution; the simulator's Count is our repeat (layers × steps)." }</p>
            { setup_form(&v.form, side.as_ref().as_ref().err().map(String::as_str), &props.on_form) }
            if !v.notes.is_empty() {
                <ul class="notes" data-testid="sim-notes">{ for v.notes.iter().map(|n| html! { <li>{ n.clone() }</li> }) }</ul>
            }
            { ours }
        </section>
    }
}
