//! "Model × chip" inputs: the model (built-in or loaded from a file), the phase, batch, input
//! and output length and tensor parallelism (empty = the config's value), then what the
//! generated graph is: layers, steps, FLOPs per layer and in total, what is not modelled, and
//! the op table as CSV (the columns of `fusionscope model --csv`).

use yew::prelude::*;

use hardware::{Chip, ChipChoice};
use page::form::model::ModelForm;
use page::form::{NumberField, WorkloadField};
use units::format_flops;
use units::group_digits;
use workload::report::{model_report, op_table};
use workload::{model_names, ModelChoice, Phase, Workload};

use crate::browser;
use crate::components::chip_picker::ChipPicker;
use crate::components::number_input::{number_inputs, NumberInputs};
use page::ByAddress;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub form: ModelForm,
    /// Model configs loaded from files, offered after the built-in ones.
    pub model_files: Vec<ModelChoice>,
    /// Why the inputs give no graph, shown under them.
    pub error: Option<String>,
    /// The workload shown (the last valid one while the inputs are invalid).
    pub workload: Option<ByAddress<Workload>>,
    /// The time view's chip, for the op table's times; `None` if it cannot be used.
    pub chip: Option<Chip>,
    /// The chips offered (the time view's picker shows the same choice).
    pub chip_options: Vec<(ChipChoice, String)>,
    pub chip_choice: ChipChoice,
    pub on_chip: Callback<ChipChoice>,
    pub on_field: Callback<(WorkloadField, String)>,
    pub on_model: Callback<ModelChoice>,
    pub on_phase: Callback<Phase>,
    pub on_error: Callback<String>,
}

fn figure(id: &'static str, label: &'static str, flops: u64) -> Html {
    html! {
        <div class="figure">
            <dt>{ label }</dt>
            <dd data-testid={id}><span class="exact">{ format_flops(flops as f64) }</span>
                <span class="unit">{ format!("{} FLOP", group_digits(flops)) }</span></dd>
        </div>
    }
}

#[function_component(ModelFormView)]
pub fn model_form(props: &Props) -> Html {
    let choices: Vec<ModelChoice> = model_names()
        .into_iter()
        .map(|n| ModelChoice::Preset(n.to_string()))
        .chain(props.model_files.iter().cloned())
        .chain(Some(props.form.model.clone()))
        .fold(Vec::new(), |mut acc, c| {
            if !acc.contains(&c) {
                acc.push(c);
            }
            acc
        });
    let on_model = {
        let choices = choices.clone();
        let cb = props.on_model.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(c) = select.value().parse::<usize>().ok().and_then(|i| choices.get(i)) {
                cb.emit(c.clone());
            }
        })
    };
    let on_phase = {
        let cb = props.on_phase.clone();
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(p) = select.value().parse::<Phase>() {
                cb.emit(p);
            }
        })
    };
    let on_csv = {
        let workload = props.workload.clone();
        let chip = props.chip.clone();
        let on_error = props.on_error.clone();
        Callback::from(move |_| {
            let (Some(w), Some(chip)) = (&workload, &chip) else {
                on_error.emit("The op table export needs a valid model and chip.".into());
                return;
            };
            let csv = match model_report(w, chip) {
                Ok(report) => op_table(&report).to_csv(),
                Err(e) => {
                    on_error.emit(format!("The op table cannot be made: {e}."));
                    return;
                }
            };
            let file = format!("{}-{}-{}-ops.csv", w.model, chip.name.replace(' ', "_").to_lowercase(), w.phase);
            if let Err(e) = browser::download(&file, "text/csv", &csv) {
                on_error.emit(format!("The op table export failed: {e}."));
            }
        })
    };
    let figures = props.workload.as_ref().map(|w| {
        let p = &w.params;
        html! { <>
            <p class="hint" data-testid="model-line">
                { format!("{}, {}: batch {}, {} input tokens, {} output tokens, tensor parallelism {} (one chip's share), {} bytes per element; {} layers × {} step{}. The graph holds one layer of each kind; totals weight each op by its runs.",
                    w.model, w.phase, p.batch, p.seq_len, p.output_len, p.tp, p.dtype_bytes, w.layers, w.steps, if w.steps == 1 { "" } else { "s" }) }
            </p>
            <dl class="summary" aria-label="Model FLOPs">
                { figure("model-layer-flops", "FLOPs per layer", w.per_layer_flops()) }
                { figure("model-total-flops", "FLOPs in total", w.total_flops()) }
            </dl>
            if !w.not_modelled.is_empty() {
                <ul class="hint" data-testid="not-modelled">
                    { for w.not_modelled.iter().map(|n| html! { <li>{ format!("Not modelled: {n}") }</li> }) }
                </ul>
            }
            <div class="exports" role="group" aria-label="Export the op table">
                <span class="exports-label">{ "Export:" }</span>
                <button type="button" onclick={on_csv} data-export="-ops.csv">{ "CSV (op table)" }</button>
            </div>
        </> }
    });
    html! {
        <>
        <form class="transformer-form" aria-label="Model × chip inputs" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            <label class="field" for="in-model">
                <span>{ "Model" }</span>
                <select id="in-model" data-testid="model-picker" onchange={on_model}>
                    { for choices.iter().enumerate().map(|(i, c)| html! {
                        <option value={i.to_string()} selected={*c == props.form.model}>{
                            match c { ModelChoice::Preset(n) => n.clone(), ModelChoice::File { file_name, .. } => format!("{file_name} (from file)") }
                        }</option>
                    }) }
                </select>
            </label>
            <ChipPicker options={props.chip_options.clone()} chosen={props.chip_choice.clone()} on_change={props.on_chip.clone()}
                id="in-model-chip" testid="model-chip-picker" />
            <label class="field" for="in-phase">
                <span>{ "Phase" }</span>
                <select id="in-phase" data-testid="phase-picker" onchange={on_phase}>
                    { for [Phase::Prefill, Phase::Decode].into_iter().map(|p| html! {
                        <option value={p.as_str()} selected={p == props.form.phase}>{ p.as_str() }</option>
                    }) }
                </select>
            </label>
            { number_inputs(NumberInputs { numbers: props.form.numbers.clone(), fields: WorkloadField::ALL.to_vec(),
                id_prefix: "in-model-", placeholder: Some("config's value"), error: props.error.clone(),
                described_by: "model-error", on_change: props.on_field.clone() }) }
            <p id="model-error" class="form-error" role="status" aria-live="polite" data-testid="model-error">
                { props.error.clone().unwrap_or_default() }
            </p>
        </form>
        { for figures }
        </>
    }
}
