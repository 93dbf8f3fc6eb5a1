//! A torch.compile log opened with no trace of its run: each kernel Inductor generated, with
//! its exact post-grad nodes and bytes (`analysis::provenance::CompiledKernels`). Joined to a
//! trace, the same table sits in the trace's Fusion view with calls and times.

use yew::prelude::*;

use analysis::provenance::CompiledKernels;
use page::ByAddress;
use view::provenance::kernels_table;

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub kernels: ByAddress<CompiledKernels>,
    pub on_close: Callback<()>,
}

#[function_component(CompileLogPanel)]
pub fn compile_log_panel(props: &Props) -> Html {
    let table = use_memo(props.kernels.clone(), |k| ByAddress::new(kernels_table(k)));
    let k = &props.kernels;
    let on_close = props.on_close.clone();
    html! {
        <section class="panel compile-log" aria-labelledby="compile-log-h" data-testid="compile-log-panel">
            <div class="results-head">
                <h2 id="compile-log-h">{ format!("Compile log {}", k.file) }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the compile log" }</button>
                </div>
            </div>
            <p data-testid="compile-log-line">{ k.line.clone() }</p>
            if !k.warnings.is_empty() {
                <ul class="warnings">{ for k.warnings.iter().map(|w| html! { <li>{ w.clone() }</li> }) }</ul>
            }
            <DataTableView table={(*table).clone()} />
        </section>
    }
}
