//! The time model beside the traffic: the chip picker, unfused vs fused time and the speedup,
//! per-group time, FLOPs, bytes, intensity, bound and launch overhead, and the roofline chart
//! (the core draws the SVG, so what is exported is what is seen). While a calibration profile
//! is loaded, groups that match a measured pattern take its speedup and are listed.

use yew::prelude::*;

use calib::CalibrationProfile;
use fusion::{Analysis, OpGraph};
use hardware::{
    apply_calibration, estimate_repeated, group_time_table, roofline_chart, CalibrationSummary, Chip, ChipChoice,
    TimeReport,
};
use table::Table;
use units::format_flops;
use units::{format_duration_us, group_digits};
use workload::Workload;

use crate::browser;
use crate::components::chip_picker::ChipPicker;
use crate::components::plain_table::PlainTable;
use page::time_inputs::TimeInputs;
use page::ByAddress;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub graph: ByAddress<OpGraph>,
    pub analysis: ByAddress<Analysis>,
    /// For a generated model: the runs of each op (totals cover the whole phase).
    pub workload: Option<ByAddress<Workload>>,
    pub time: TimeInputs,
    pub on_chip: Callback<ChipChoice>,
    pub on_error: Callback<String>,
    /// Export file names start with this.
    pub base_name: AttrValue,
}

/// Everything the view shows, computed once per input change.
#[derive(PartialEq)]
struct Timed {
    chip: Chip,
    report: TimeReport,
    calibration: Option<CalibrationSummary>,
    table: Table,
    svg: AttrValue,
}

fn timed(
    graph: &OpGraph,
    analysis: &Analysis,
    workload: Option<&Workload>,
    chip: Result<Chip, String>,
    profile: Option<&CalibrationProfile>,
) -> Result<Timed, String> {
    let chip = chip?;
    let repeat = workload.map(|w| w.op_repeat.as_slice()).unwrap_or(&[]);
    let mut report = estimate_repeated(graph, analysis, &chip, repeat)
        .map_err(|e| format!("The time model cannot count this graph: {e}."))?;
    let calibration = profile.map(|p| apply_calibration(&mut report, p));
    let table = group_time_table(&report, chip.launch_overhead_us);
    let svg = roofline_chart(&report, &chip).to_svg(&format!("Roofline on {}: fusion groups, fused", chip.name));
    Ok(Timed { chip, report, calibration, table, svg: svg.into() })
}

fn figure(id: &'static str, label: &'static str, main: String, detail: String) -> Html {
    html! {
        <div class="figure">
            <dt>{ label }</dt>
            <dd data-testid={id}><span class="exact">{ main }</span><span class="unit">{ detail }</span></dd>
        </div>
    }
}

fn calibration_note(c: &CalibrationSummary, file_name: &str) -> Html {
    let slower: Vec<String> =
        c.calibrated_groups.iter().filter(|g| g.fusion_slower).map(|g| format!("group {}", g.group + 1)).collect();
    let listed: Vec<String> = c
        .calibrated_groups
        .iter()
        .map(|g| format!("group {} ↔ {} ({:.2}×)", g.group + 1, g.pattern, g.speedup))
        .collect();
    html! {
        <div class="calibration-note" data-testid="calibration-note" role="status">
            <p>{ format!("Calibrated with {file_name} ({}, {} measured pattern{}): ", c.hardware, c.patterns, if c.patterns == 1 { "" } else { "s" }) }
            if listed.is_empty() {
                { "no group's op sequence matches a measured pattern, so every time is the roofline's." }
            } else {
                { format!("{} take the measured speedup instead of the roofline: {}.", if listed.len() == 1 { "1 group" .to_string() } else { format!("{} groups", listed.len()) }, listed.join("; ")) }
            }
            </p>
            if !slower.is_empty() {
                <p class="error-text" data-testid="calibration-slower">{ format!("Fusing here is slower on this hardware: {}.", slower.join(", ")) }</p>
            }
        </div>
    }
}

#[function_component(TimePanel)]
pub fn time_panel(props: &Props) -> Html {
    let profile = props.time.calibration.as_ref().and_then(|c| c.active_profile().cloned());
    let result = use_memo(
        (props.graph.clone(), props.analysis.clone(), props.workload.clone(), props.time.chip.clone(), profile),
        |(graph, analysis, workload, _, profile)| {
            timed(graph, analysis, workload.as_deref(), props.time.chip(), profile.as_deref())
        },
    );
    let picker = html! { <ChipPicker options={props.time.chip_options()} chosen={props.time.chip.clone()} on_change={props.on_chip.clone()} /> };
    let t = match &*result {
        Ok(t) => t,
        Err(e) => {
            return html! {
                <section class="panel" aria-labelledby="time-h" data-testid="time-panel">
                    <h2 id="time-h">{ "Time model" }</h2>
                    { picker }
                    <p class="error-text" role="alert">{ e.clone() }</p>
                </section>
            }
        }
    };
    let c = &t.chip;
    let r = &t.report;
    let whole = props.workload.as_ref().map(|w| {
        format!("whole {}: {} layers × {} step{}", w.phase, w.layers, w.steps, if w.steps == 1 { "" } else { "s" })
    });
    let runs = whole.clone().unwrap_or_else(|| "each op once".into());
    let unknown_k = r.ops.iter().filter(|o| !o.k_known).count();
    let row_classes: Vec<Option<&'static str>> = r
        .groups
        .iter()
        .map(|g| match &g.calibration {
            Some(cal) if cal.fusion_slower => Some("slower"),
            Some(_) => Some("calibrated"),
            None => None,
        })
        .collect();
    let exports = {
        let svg = t.svg.to_string();
        let csv = t.table.to_csv();
        let base = props.base_name.clone();
        let on_error = props.on_error.clone();
        [
            ("SVG (roofline)", "-roofline.svg", "image/svg+xml", svg),
            ("CSV (group times)", "-times.csv", "text/csv", csv),
        ]
        .into_iter()
        .map(move |(label, suffix, mime, content)| {
            let file = format!("{base}{suffix}");
            let on_error = on_error.clone();
            let onclick = Callback::from(move |_| {
                if let Err(e) = browser::download(&file, mime, &content) {
                    on_error.emit(format!("The {label} export failed: {e}."));
                }
            });
            html! { <button type="button" {onclick} data-export={suffix}>{ label }</button> }
        })
        .collect::<Html>()
    };
    html! {
        <section class="panel" aria-labelledby="time-h" data-testid="time-panel">
            <div class="results-head">
                <h2 id="time-h">{ format!("Time model on {}", c.name) }</h2>
                { picker }
            </div>
            <p class="hint" data-testid="chip-line">
                { format!("Roofline: max(FLOPs / {}/s, bytes / {:.0} GB/s) + {} launch overhead per kernel; ridge at {:.1} FLOP/byte. Source: {}.",
                    format_flops(c.peak_flops), c.hbm_bandwidth / 1e9, format_duration_us(c.launch_overhead_us), c.ridge_intensity(), c.source) }
            </p>
            <dl class="summary" aria-label="Time totals">
                { figure("time-unfused", "Unfused time", format_duration_us(r.unfused_us), format!("{:.3} µs, {runs}", r.unfused_us)) }
                { figure("time-fused", "Fused time", format_duration_us(r.fused_us), format!("{:.3} µs", r.fused_us)) }
                { figure("time-speedup", "Speedup from fusion", format!("{:.2}×", r.speedup), "unfused / fused".to_string()) }
                { figure("time-flops", "FLOPs", format_flops(r.total_flops as f64), format!("{} FLOP", group_digits(r.total_flops))) }
            </dl>
            if unknown_k > 0 {
                <p class="hint" data-testid="unknown-k">{ format!(
                    "{unknown_k} matmul{} no declared shape for either input, so K is unknown and taken as 1: {} FLOPs and times are lower bounds. Declare the input tensors' shapes in the graph file.",
                    if unknown_k == 1 { " has" } else { "s have" }, if unknown_k == 1 { "its" } else { "their" }) }</p>
            }
            if let (Some(cal), Some(loaded)) = (&t.calibration, &props.time.calibration) {
                { calibration_note(cal, &loaded.file_name) }
            }
            if props.time.calibration.as_ref().is_some_and(|c| c.active_profile().is_none()) {
                <p class="hint" data-testid="calibration-unused">{ "The loaded calibration file has no measured fusion patterns, so the times are the roofline's." }</p>
            }
            <figure class="chart" data-testid="roofline-chart">
                { Html::from_html_unchecked(t.svg.clone()) }
            </figure>
            <PlainTable table={t.table.clone()} id="time-table" {row_classes}
                caption={AttrValue::from(format!("Time per fusion group on {} (one run; “runs” is how often the group runs{})", c.name,
                    whole.map(|w| format!(" in the {w}")).unwrap_or_default()))} />
            <div class="exports" role="group" aria-label="Export the time model">
                <span class="exports-label">{ "Export:" }</span>
                { exports }
            </div>
        </section>
    }
}
