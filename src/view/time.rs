//! Where the time goes, as tables (the page, its exports and the command line draw the same
//! ones): the GPU timeline, the per-op table and the gap between two traces.

use table::{Cell, DataTable};
use units::{format_duration_us, format_pct, group_digits, plural};

use analysis::capture::CaptureReport;
use analysis::pipeline::TraceTime;
use analysis::time::gap::Gap;
use analysis::time::op_table::{Bound, OpRow, ShapesFrom};
use analysis::time::timeline::Timeline;
use trace::{Processor, TraceFormat};

/// Widest input-dims text shown in a cell (the exact value keeps it whole).
const DIMS_WIDTH: usize = 48;
/// Op rows and gap rows the command line prints (`--json` has them all).
pub const TEXT_ROWS: usize = 25;

/// Every window of a report with its label: the whole trace, each step, then the other devices'
/// whole traces (labelled with their device).
fn windows(r: &TraceTime) -> impl Iterator<Item = (String, &Timeline)> {
    windows_of(r.timeline.as_ref(), &r.steps, &r.other_devices)
}

fn windows_of<'a>(
    timeline: Option<&'a Timeline>,
    steps: &'a [Timeline],
    other_devices: &'a [Timeline],
) -> impl Iterator<Item = (String, &'a Timeline)> {
    let own = timeline.into_iter().chain(steps).map(|w| (w.window.clone(), w));
    own.chain(other_devices.iter().map(|w| (format!("{} ({})", w.window, w.device), w)))
}

/// One row per window: the whole trace, then each step.
pub fn timeline_table(r: &TraceTime) -> DataTable {
    timeline_table_of(r.timeline.as_ref(), &r.steps, &r.other_devices)
}

/// What ran a trace's kernels, as its time report's words say it ("Ops by CPU time").
pub fn processor(r: &TraceTime) -> Processor {
    r.timeline.as_ref().map_or(Processor::Gpu, Timeline::processor)
}

/// [`timeline_table`] from its windows (the summary-only mode has no steps).
pub fn timeline_table_of(timeline: Option<&Timeline>, steps: &[Timeline], other_devices: &[Timeline]) -> DataTable {
    let mut t = DataTable::new(
        "timeline",
        match timeline {
            Some(w) if w.processor() == Processor::Cpu => "CPU timeline".to_string(),
            Some(w) => format!("GPU timeline ({})", w.device),
            None => "GPU timeline".to_string(),
        },
        &[
            ("window", false),
            ("total", true),
            ("busy", true),
            ("idle", true),
            ("computation", true),
            ("communication", true),
            ("exposed comm.", true),
            ("memcpy", true),
            ("exposed memcpy", true),
            ("busy share", true),
        ],
    );
    for (window, w) in windows_of(timeline, steps, other_devices) {
        t.rows.push(vec![
            Cell::text(window),
            Cell::micros(w.total_us),
            Cell::micros(w.busy_us),
            Cell::micros(w.idle_us),
            Cell::micros(w.computation_us),
            Cell::micros(w.communication_us),
            Cell::micros(w.exposed_communication_us),
            Cell::micros(w.memcpy_us),
            Cell::micros(w.exposed_memcpy_us),
            Cell::pct(if w.total_us > 0.0 { 100.0 * w.busy_us / w.total_us } else { 0.0 }),
        ]);
    }
    t
}

/// The dims as the trace recorded them, compact.
pub fn dims_text(r: &serde_json::Value) -> String {
    if r.is_null() {
        "—".to_string()
    } else {
        r.to_string()
    }
}

fn bound_text(b: Option<Bound>) -> &'static str {
    match b {
        Some(Bound::Compute) => "compute",
        Some(Bound::Memory) => "memory",
        None => "—",
    }
}

/// The model's family, `(estimate)` when its FLOPs are one, or why there is none.
fn model_text(r: &OpRow) -> String {
    match (&r.model, &r.no_model) {
        (Some(m), _) if r.estimate => format!("{m} (estimate)"),
        (Some(m), _) => m.clone(),
        (None, Some(why)) => format!("no model: {why}"),
        (None, None) => "no model".to_string(),
    }
}

/// The per-op table, longest kernel time first.
pub fn op_table_view(r: &TraceTime) -> DataTable {
    let mut t = DataTable::new(
        "ops",
        if r.ops.is_empty() && !r.format.records_ops() {
            format!("Ops by {} time (none: {} records no framework ops)", processor(r), r.format.describe())
        } else {
            format!("Ops by {} time ({} rows)", processor(r), group_digits(r.ops.len() as u64))
        },
        &[
            ("op", false),
            ("input dims", false),
            ("calls", true),
            ("kernel time", true),
            ("TFLOP/s", true),
            ("TB/s", true),
            ("FLOP/B", true),
            ("% of roofline", true),
            ("bound", false),
            ("model", false),
        ],
    )
    // Too wide for its panel, the table keeps its times, TFLOP/s and % of roofline.
    .with_details(|h| matches!(h, "model" | "FLOP/B" | "TB/s" | "calls"));
    for o in &r.ops {
        t.rows.push(vec![
            Cell::text(&o.op),
            Cell::long_text(&dims_text(&o.input_dims), DIMS_WIDTH),
            Cell::count(o.calls),
            Cell::micros(o.kernel_time_us),
            Cell::decimal(o.tflops_per_s, 1),
            Cell::decimal(o.tb_per_s, 2),
            Cell::decimal(o.flop_per_byte, 1),
            Cell::decimal(o.roofline_pct, 1),
            Cell::text(bound_text(o.bound)),
            Cell::text(model_text(o)),
        ]);
    }
    t
}

/// The gap rows, largest difference first; `keys` are the sides in the comparison's order.
pub fn gap_table(g: &Gap, keys: [&str; 2]) -> DataTable {
    let mut cols: Vec<(String, bool)> = vec![("op".into(), false), ("input dims".into(), false)];
    for k in keys {
        cols.push((format!("{k} time"), true));
    }
    cols.push((format!("difference ({} − {})", keys[0], keys[1]), true));
    for k in keys {
        cols.extend([
            (format!("{k} calls"), true),
            (format!("{k} TFLOP/s"), true),
            (format!("{k} % of roofline"), true),
        ]);
    }
    let headers: Vec<(&str, bool)> = cols.iter().map(|(h, n)| (h.as_str(), *n)).collect();
    let mut t = DataTable::new("gap", "Where the time goes", &headers)
        // Too wide for its panel, the table keeps both sides' times and % of roofline.
        .with_details(|h| h.ends_with(" calls") || h.ends_with(" TFLOP/s"));
    for r in &g.rows {
        let side = |k: &str| r.sides.get(k).and_then(|s| s.as_ref());
        let mut row = vec![Cell::text(&r.op), Cell::long_text(&dims_text(&r.input_dims), DIMS_WIDTH)];
        for k in keys {
            row.push(side(k).map_or_else(|| Cell::decimal(None, 0), |s| Cell::micros(s.kernel_time_us)));
        }
        row.push(Cell::micros(r.difference_us));
        for k in keys {
            let s = side(k);
            row.extend([
                s.map_or_else(|| Cell::decimal(None, 0), |s| Cell::count(s.calls)),
                Cell::decimal(s.and_then(|s| s.tflops_per_s), 1),
                Cell::decimal(s.and_then(|s| s.roofline_pct), 1),
            ]);
        }
        t.rows.push(row);
    }
    // The time not attributed to any op, per side, so the column sums are the GPU times; and
    // since a row counts each call's overlapping events once, GPU time each, the rest of the sum.
    // Each is said where some side has any: a row of zeros would say nothing.
    for (label, by_side) in
        [("(unattributed: no CPU op)", &g.unattributed_us), ("(overlap within an op call)", &g.overlap_us)]
    {
        let us = |i: usize| by_side.get(keys[i]).copied().unwrap_or(0.0);
        if us(0) > 0.0 || us(1) > 0.0 {
            let mut row = vec![Cell::text(label), Cell::text("")];
            row.extend([Cell::micros(us(0)), Cell::micros(us(1)), Cell::micros(us(0) - us(1))]);
            for _ in keys {
                row.extend([Cell::decimal(None, 0), Cell::decimal(None, 0), Cell::decimal(None, 0)]);
            }
            t.rows.push(row);
        }
    }
    // Counted last: the rows of unattributed time and overlap are rows too.
    t.title = format!("Where the time goes ({} rows)", group_digits(t.rows.len() as u64));
    t
}

/// "H100 SXM (NVIDIA) is faster: MI300X (AMD) 551.0 ms vs H100 SXM (NVIDIA) 327.1 ms of GPU
/// time (223.9 ms less, 1.68×)", each side by its name in `names` (key, name), else its key.
pub fn gap_headline(g: &Gap, names: &[(&str, &str)], processor: Processor) -> String {
    let h = &g.headline;
    let name = |k: &str| names.iter().find(|(key, _)| *key == k).map_or(k, |(_, n)| n).to_string();
    let times: Vec<String> =
        h.gpu_time_us.iter().map(|(k, t)| format!("{} {}", name(k), format_duration_us(*t))).collect();
    match (h.faster.as_deref().map(name), h.ratio) {
        (Some(f), Some(r)) => format!(
            "{f} is faster: {} of {processor} time ({} less, {r:.2}×)",
            times.join(" vs "),
            format_duration_us(h.difference_us)
        ),
        (Some(f), None) => format!("{f} is faster: {}", times.join(" vs ")),
        (None, _) => format!("both sides take the same {processor} time: {}", times.join(" vs ")),
    }
}

/// The report as the command line prints it after the summary.
pub fn time_text(r: &TraceTime) -> String {
    let mut out = String::new();
    match (&r.chip, &r.chip_note) {
        (Some(c), _) => out += &format!("\nChip: {} (from {})\n", c.name, c.detected_from),
        (None, Some(note)) => out += &format!("\nChip: none — {note} (--chip NAME|FILE)\n"),
        (None, None) => {}
    }
    if let Some(c) = &r.capture {
        out += &format!("{}\n", capture_line(c));
    }
    let t = timeline_table(r);
    out += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    if let Some(w) = &r.waits {
        let t = super::waits::waits_table(w);
        out += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    }
    if let Some(l) = &r.launch_cost {
        let t = super::launch_cost::launch_cost_table(l);
        out += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
        if let Some(line) = super::launch_cost::longest_stretch_line(&l.whole) {
            out += &format!("({line})\n");
        }
    }
    if !r.critical_path.is_empty() {
        let t = super::critical_path::critical_path_table(&r.critical_path, processor(r));
        out += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    }
    let mut ops = op_table_view(r);
    let total = ops.rows.len();
    ops.rows.truncate(TEXT_ROWS);
    if total == 0 && !r.format.records_ops() {
        // Said where the table would be; the coverage line below says what else is missing.
        out += &format!("\n{}\n", ops.title);
    } else {
        let shown = if total > TEXT_ROWS { format!("top {TEXT_ROWS} of {total}") } else { format!("all {total}") };
        out += &format!(
            "\nOps by {} time ({shown}; --json lists every one)\n{}",
            processor(r),
            ops.shown_table().to_text()
        );
    }
    out += &coverage_line(r);
    out.push('\n');
    out
}

/// "Capture: 1 of 1 graph replays matched to 1 captured graphs; …": how a graph-capture trace
/// was joined to this trace's replays (`docs/trace-analysis.md`, "Capture traces").
pub fn capture_line(r: &CaptureReport) -> String {
    let by_count = if r.matched_by_count > 0 {
        format!(
            " ({} matched by their number of launches only: the capture names no kernels)",
            group_digits(r.matched_by_count as u64)
        )
    } else {
        String::new()
    };
    format!(
        "Capture: {} of {} graph replays matched to {} captured graphs; {} of {} replayed kernels attributed to captured ops{by_count}.",
        group_digits(r.replays_matched as u64),
        group_digits(r.replays as u64),
        group_digits(r.graphs_captured as u64),
        group_digits(r.kernels_attributed as u64),
        group_digits(r.replay_kernels as u64),
    )
}

/// "Models cover 65.47 % of GPU time (29.88 ms); …": how much of the time the op table
/// explains, (once) that the trace has no shapes when it was recorded without them, and which
/// rows took theirs from an execution trace.
pub fn coverage_line(r: &TraceTime) -> String {
    let c = &r.op_coverage;
    let shapes = match (r.format.lacks(), r.shapes_recorded, exec_trace_rows(r)) {
        (Some(lacks), _, _) => format!(" {lacks}"),
        (None, true, 0) => String::new(),
        (None, true, rows) => format!(" {}", exec_trace_shapes(r, rows)),
        (None, false, 0) => {
            " The trace was recorded without record_shapes: ops have times but no FLOPs or bytes.".to_string()
        }
        (None, false, rows) => {
            format!(" The trace was recorded without record_shapes. {}", exec_trace_shapes(r, rows))
        }
    };
    // Rows count a call's overlapping events once; GPU time counts each: say the difference.
    let overlap = if c.overlap_us > 0.0 {
        format!("; events of one op call overlapping each other {}", format_duration_us(c.overlap_us))
    } else {
        String::new()
    };
    // Work no CPU op launched is said where there is some.
    let unattributed = match r.unattributed.events {
        0 => String::new(),
        n => format!(
            "; unattributed (no CPU op) {} in {}",
            format_duration_us(c.unattributed_us),
            plural(n, "event", "events")
        ),
    };
    format!(
        "Models cover {} of {} time ({}); ops without a model {}{unattributed}{overlap}.{shapes}",
        format_pct(c.modelled_pct),
        processor(r),
        format_duration_us(c.modelled_us),
        format_duration_us(c.unmodelled_us),
    )
}

/// The longest GPU work no CPU op launched (graph replays, work before the profiled window).
pub fn unattributed_table(r: &TraceTime) -> DataTable {
    let mut t = DataTable::new(
        "unattributed",
        format!(
            "Unattributed GPU work: {} events, {} (the longest {} names)",
            group_digits(r.unattributed.events),
            format_duration_us(r.unattributed.time_us),
            r.unattributed.kernels.len()
        ),
        &[("kernel", false), ("count", true), ("total", true)],
    );
    for k in &r.unattributed.kernels {
        t.rows.push(vec![super::kernel_cell(&k.name), Cell::count(k.count), Cell::micros(k.time_us)]);
    }
    t
}

/// The gap as the command line prints it in `compare`, after the overview.
pub fn gap_text(keys: [&str; 2], g: &Gap) -> String {
    let mut t = gap_table(g, keys);
    // The op rows, then the unattributed and overlap rows where there are any: those stay.
    let total = g.rows.len();
    let tail = t.rows.split_off(total);
    t.rows.truncate(TEXT_ROWS);
    t.rows.extend(tail);
    let shown = if total > TEXT_ROWS { format!("top {TEXT_ROWS} of {total}") } else { format!("all {total}") };
    format!(
        "Where the time goes ({shown} ops by time difference; --json lists every one)\n{}",
        t.shown_table().to_text()
    )
}

/// Colours of the timeline's parts: computation, exposed communication, exposed memcpy, idle.
pub(crate) const TIMELINE_PARTS: [(&str, &str); 4] = [
    ("computation", "#2f81f7"),
    ("exposed communication", "#d9822b"),
    ("exposed memcpy", "#3fb950"),
    ("idle", "#8b949e"),
];

/// The timeline as stacked bars, one per window (whole trace, each step, other devices), each
/// split into computation, exposed communication, exposed memcpy and idle time: the four parts
/// add up to the window (busy = computation ∪ communication ∪ memcpy), so each bar is 100 %.
pub fn timeline_chart(r: &TraceTime) -> String {
    use draw::chart::{escape_xml, svg_start};
    const LABEL_W: f64 = 200.0;
    const BAR_W: f64 = 460.0;
    const ROW: f64 = 22.0;
    const TOP: f64 = 50.0;
    let rows: Vec<(String, &Timeline)> = windows(r).collect();
    let height = TOP + ROW * rows.len() as f64 + 10.0;
    let title = format!("{} time by window: computation, exposed communication and memcpy, idle", processor(r));
    let mut s = svg_start(760, height as u32, &title);
    for (i, (name, color)) in TIMELINE_PARTS.iter().enumerate() {
        let x = 10.0 + 180.0 * i as f64;
        s.push_str(&format!(
            "<rect x=\"{x}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"35\" fill=\"currentColor\">{name}</text>",
            x + 14.0
        ));
    }
    for (i, (label, w)) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"currentColor\">{}</text>",
            LABEL_W - 6.0,
            y + 13.0,
            escape_xml(&units::ellipsize(label, 30))
        ));
        let parts = [w.computation_us, w.exposed_communication_us, w.exposed_memcpy_us, w.idle_us];
        let mut x = LABEL_W;
        for ((name, color), us) in TIMELINE_PARTS.iter().zip(parts) {
            if w.total_us <= 0.0 || us <= 0.0 {
                continue;
            }
            let width = (BAR_W * us / w.total_us).clamp(0.0, LABEL_W + BAR_W - x);
            s.push_str(&format!(
                "<rect data-part=\"{name}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"16\" fill=\"{color}\"><title>{}: {name} {} ({})</title></rect>",
                escape_xml(label),
                format_duration_us(us),
                format_pct(100.0 * us / w.total_us)
            ));
            x += width;
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"currentColor\">{}</text>",
            LABEL_W + BAR_W + 6.0,
            y + 13.0,
            format_duration_us(w.total_us)
        ));
    }
    s.push_str("</svg>");
    s
}

/// One side's ops on the roofline: its chip's roof and a point per modelled row.
pub struct RooflineSide<'a> {
    pub label: &'a str,
    pub time: &'a TraceTime,
    pub color: &'static str,
}

/// The op roofline: one roof per side's chip and one point per row with a model and time (x
/// FLOP/byte, y achieved FLOP/s); the tooltip names the op, its dims and figures. `None` when
/// no side has a chip.
pub fn op_roofline(sides: &[RooflineSide<'_>]) -> Option<draw::roofline::RooflinePlot> {
    use draw::roofline::{PlotPoint, Roof, RooflinePlot};
    let mut plot = RooflinePlot { noun: "ops", ..Default::default() };
    let single = sides.len() == 1;
    for side in sides {
        let Some(chip) = &side.time.chip else { continue };
        plot.roofs.push(Roof {
            label: format!("{} roof ({})", chip.name, side.label),
            peak_flops: chip.peak_tflops * 1e12,
            hbm_bandwidth: chip.hbm_tb_per_s * 1e12,
            color: if single { "currentColor" } else { side.color },
        });
        if !single {
            plot.legend.push((format!("{} ({})", side.label, chip.name), side.color));
        }
        for o in &side.time.ops {
            let (Some(intensity), Some(tflops)) = (o.flop_per_byte, o.tflops_per_s) else { continue };
            if intensity <= 0.0 || tflops <= 0.0 {
                continue;
            }
            let pct = o.roofline_pct.map(|p| format!(", {} of roofline", format_pct(p))).unwrap_or_default();
            let from = match o.shapes_from {
                ShapesFrom::ExecutionTrace => " (shapes from the execution trace)",
                ShapesFrom::Trace => "",
            };
            plot.points.push(PlotPoint {
                intensity,
                flops: tflops * 1e12,
                color: if single { bound_color(o.bound) } else { side.color },
                title: format!(
                    "{}{} {}{from} — {}, {}, {intensity:.1} FLOP/byte, {tflops:.1} TFLOP/s{pct}",
                    if single { String::new() } else { format!("{}: ", side.label) },
                    o.op,
                    dims_text(&o.input_dims),
                    plural(o.calls, "call", "calls"),
                    format_duration_us(o.kernel_time_us),
                ),
                attr: ("data-op", o.op.clone()),
            });
        }
    }
    if single {
        plot.legend =
            vec![("memory-bound op".into(), draw::roofline::BLUE), ("compute-bound op".into(), draw::roofline::ORANGE)];
    }
    // Roofs without a point are no chart: `no_roofline_statement` says why instead.
    (!plot.roofs.is_empty() && !plot.points.is_empty()).then_some(plot)
}

/// Rows whose shapes are an execution trace's.
fn exec_trace_rows(r: &TraceTime) -> usize {
    r.ops.iter().filter(|o| o.shapes_from == ShapesFrom::ExecutionTrace).count()
}

/// Where `rows` rows' shapes came from: the execution trace linked (its file from the fusion's
/// link summary, made with the same execution trace), as the fusion groups take them.
fn exec_trace_shapes(r: &TraceTime, rows: usize) -> String {
    let file = r.fusion.as_ref().and_then(|f| f.exec_trace.as_ref()).map(|e| format!(" {}", e.file));
    let (rows_take, their, ops) = if rows == 1 {
        ("op row takes", "its", "op recorded none and links")
    } else {
        ("op rows take", "their", "ops recorded none and link")
    };
    format!(
        "{} {rows_take} {their} shapes from the execution trace{} (`shapes_from`: {their} {ops} to its \
         nodes), as the fusion groups do: {their} FLOPs, bytes and roofline figures are the models' on those \
         shapes.",
        group_digits(rows as u64),
        file.unwrap_or_default()
    )
}

/// Why a trace's ops are not on the roofline (no op has both FLOPs and bytes): in a format that
/// records no shapes its own sentence of what it lacks, else that no op's shapes gave both.
pub fn no_roofline_statement(r: &TraceTime) -> String {
    match r.format.lacks() {
        // An XLA profile records shapes, in its HLO: none of its ops had both FLOPs and bytes.
        Some(lacks) if r.format == TraceFormat::Xplane => {
            format!("No op on the roofline: no HLO op has both FLOPs and bytes. {lacks}")
        }
        Some(lacks) => {
            format!("No shapes recorded in this format: FLOPs and bytes unknown, so no op on the roofline. {lacks}")
        }
        None if !r.shapes_recorded && exec_trace_rows(r) == 0 => {
            "No op on the roofline: the trace was recorded without record_shapes, so ops have no FLOPs or bytes.".into()
        }
        None => "No op on the roofline: no op's recorded shapes gave both FLOPs and bytes.".into(),
    }
}

fn bound_color(b: Option<Bound>) -> &'static str {
    match b {
        Some(Bound::Compute) => draw::roofline::ORANGE,
        _ => draw::roofline::BLUE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use analysis::exec_trace::parse_exec_trace;
    use analysis::pipeline::{report, time_report, Choices};
    use analysis::summary::ClassifiedTrace;
    use formats::read_trace;

    #[test]
    fn the_coverage_line_names_the_execution_trace_that_gave_one_row_its_shapes() {
        // One aten::add without shapes, linked to one ET node of two [4, 4] fp32 tensors.
        let trace = read_trace(
            br#"{"traceEvents":[
              {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":10,"args":{"External id":5}},
              {"ph":"X","cat":"kernel","name":"add_kernel","pid":0,"tid":7,"ts":100,"dur":2,"args":{"External id":5}}
            ]}"#,
        )
        .unwrap();
        let et = parse_exec_trace(
            r#"{"schema": "1.0.1", "pid": 1, "nodes": [{"name": "aten::add", "id": 9, "rf_id": 5, "parent": 1,
                "inputs": [[1, 1, 0, 16, 4, "cuda:0"], [2, 2, 0, 16, 4, "cuda:0"], 1],
                "input_shapes": [[4, 4], [4, 4], []], "input_types": ["Tensor(float)", "Tensor(float)", "Int"],
                "outputs": [[3, 3, 0, 16, 4, "cuda:0"]], "output_shapes": [[4, 4]], "output_types": ["Tensor(float)"]}]}"#,
            "et.json",
        )
        .unwrap();
        let side = ClassifiedTrace::new(&trace);
        let time = report(&side, None, &Choices::with_exec_trace(Some((&et, "et.json"))));
        assert_eq!(time.ops[0].bytes_per_call, Some(3 * 16 * 4));
        assert!(coverage_line(&time).ends_with(
            "The trace was recorded without record_shapes. 1 op row takes its shapes from the execution trace et.json \
             (`shapes_from`: its op recorded none and links to its nodes), as the fusion groups do: its FLOPs, bytes \
             and roofline figures are the models' on those shapes."
        ));
        // Without it, the sentence of a trace without shapes.
        let plain = time_report(&side, &Choices::default());
        assert!(coverage_line(&plain).ends_with("ops have times but no FLOPs or bytes."));
        assert_eq!(
            no_roofline_statement(&plain),
            "No op on the roofline: the trace was recorded without record_shapes, so ops have no FLOPs or bytes."
        );
    }
}
