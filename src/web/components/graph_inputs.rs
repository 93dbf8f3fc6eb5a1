//! What the graph views analyse, chosen by two tabs: the built-in transformer block (its
//! inputs, or a note when a dropped graph is shown) or "Model × chip" (its inputs and what the
//! generated graph is).

use yew::prelude::*;

use super::model_form::ModelFormView;
use super::transformer_form::TransformerFormView;
use hardware::ChipChoice;
use page::form::transformer::TransformerField;
use page::form::WorkloadField;
use page::{Source, State};
use workload::{ModelChoice, Phase};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: page::ByAddress<State>,
    pub on_transformer_field: Callback<(TransformerField, String)>,
    pub on_reset_transformer: Callback<()>,
    pub on_show_model: Callback<()>,
    pub on_model_field: Callback<(WorkloadField, String)>,
    pub on_model: Callback<ModelChoice>,
    pub on_phase: Callback<Phase>,
    pub on_chip: Callback<ChipChoice>,
    pub on_error: Callback<String>,
}

#[function_component(GraphInputs)]
pub fn graph_inputs(props: &Props) -> Html {
    let state = &props.state;
    let error = state.current.as_ref().err().cloned();
    let graph_name = match &state.source {
        Source::Graph { file_name, .. } | Source::OpTrace { file_name, .. } => Some(file_name.clone()),
        Source::Transformer(_) | Source::Model(_) => None,
    };
    let is_model = matches!(state.source, Source::Model(_));
    let reset = props.on_reset_transformer.reform(|_: MouseEvent| ());
    let show_model = props.on_show_model.reform(|_: MouseEvent| ());
    let shown_workload = state.shown().and_then(|c| c.workload.clone());
    html! { <>
        <div class="view-tabs" role="group" aria-label="What to analyse">
            <button type="button" aria-pressed={(!is_model).to_string()} data-testid="tab-transformer" onclick={reset.clone()}>{ "Transformer block" }</button>
            <button type="button" aria-pressed={is_model.to_string()} data-testid="tab-model" onclick={show_model}>{ "Model × chip" }</button>
        </div>
        if is_model {
            <section class="panel" aria-labelledby="inputs-h">
                <h2 id="inputs-h">{ "Model × chip" }</h2>
                <p class="hint">{ "A model config (built in, or drop a NeuSim model JSON) as the op graph of one layer of each kind, timed on the chip (the time model below uses the same one; drop a chip JSON to add a chip)." }</p>
                <ModelFormView form={state.model_form()} model_files={state.time.model_files.clone()} error={error.clone()}
                    workload={shown_workload} chip={state.time.chip().ok()}
                    chip_options={state.time.chip_options()} chip_choice={state.time.chip.clone()} on_chip={props.on_chip.clone()}
                    on_field={props.on_model_field.clone()} on_model={props.on_model.clone()} on_phase={props.on_phase.clone()}
                    on_error={props.on_error.clone()} />
            </section>
        } else {
            <section class="panel" aria-labelledby="inputs-h">
                <h2 id="inputs-h">{ "Transformer block" }</h2>
                if let Some(name) = &graph_name {
                    <p class="hint">
                        { format!("Showing the op graph {name}. Change an input to analyse the transformer block instead, or ") }
                        <button type="button" class="link" onclick={reset}>{ "go back to the default block" }</button>
                        { "." }
                    </p>
                } else {
                    <p class="hint">{ "Attention + MLP block of the fusion spec: QKV projection, attention, output projection, residuals, layer norms and a GELU MLP. H must be a multiple of NH." }</p>
                }
                <TransformerFormView form={state.form()} error={if graph_name.is_none() { error } else { None }}
                    on_change={props.on_transformer_field.clone()} />
            </section>
        }
    </> }
}
