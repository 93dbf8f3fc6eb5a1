//! A loaded calibration file: its hardware summary and, per measured fusion pattern, speedup,
//! memory reduction, GFLOP/s change and verdict (the rows of `fusionscope calib`), with a
//! button to unload it (the time view then goes back to the roofline alone).

use yew::prelude::*;

use crate::components::plain_table::PlainTable;
use page::time_inputs::LoadedCalibration;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub calibration: LoadedCalibration,
    pub on_unload: Callback<()>,
}

#[function_component(CalibrationPanel)]
pub fn calibration_panel(props: &Props) -> Html {
    let c = &props.calibration;
    let r = &c.report;
    let onclick = {
        let cb = props.on_unload.clone();
        Callback::from(move |_| cb.emit(()))
    };
    let verdicts: Vec<Option<&'static str>> = r.patterns.iter().map(|p| Some(p.verdict.id())).collect();
    html! {
        <section class="panel" aria-labelledby="calib-h" data-testid="calibration-panel">
            <div class="results-head">
                <h2 id="calib-h">{ format!("Calibration profile: {} ({})", r.hardware, c.file_name) }</h2>
                <button type="button" {onclick} data-testid="unload-calibration">{ "Unload the profile" }</button>
            </div>
            <PlainTable table={r.summary_table()} id="calibration-summary" caption="Hardware summary" />
            if !r.subgraphs.is_empty() {
                <p class="hint">{ "A measured-subgraph file: it has no unfused baseline, so no speedups, and it does not calibrate the time model." }</p>
                <PlainTable table={r.subgraph_table()} id="calibration-subgraphs" caption="Measured subgraphs" />
            } else if r.patterns.is_empty() {
                <p class="hint" data-testid="no-patterns">{ "This profile has no fusion_profiles: no fusion pattern was measured, so it does not change the time model." }</p>
            } else {
                <PlainTable table={r.pattern_table()} id="calibration-patterns" row_classes={verdicts}
                    caption="Measured fusion patterns: strong ≥ 1.5×, moderate ≥ 1.1×, minimal ≥ 0.95×, else fusion is slower" />
                <PlainTable table={r.mapping_table()} id="calibration-mapping"
                    caption="How patterns match fusion groups (the group's op types in order, reshapes aside)" />
            }
        </section>
    }
}
