//! The overview of one trace: its device and GPU time, then its costliest ops, the fusion
//! left on the table, its idle time and its largest category, ranked by the time they explain.

use trace::platform::Processor;
use units::{format_duration_us, plural};

use super::{
    busy_clause, cap, device_name, dims, idle, opportunities, rank, verdict_side, Evidence, Finding, FindingKind,
    Overview, Verdict,
};
use crate::pipeline::TraceTime;
use crate::summary::{PlatformEntry, TraceSummary};
use crate::time::op_table::OpRow;

fn top_op(row: &OpRow, gpu_time_us: f64, processor: Processor) -> Finding {
    let rate = match (row.tflops_per_s, row.roofline_pct) {
        (Some(t), Some(p)) if t > 0.0 => format!(" at {t:.1} TFLOP/s, {p:.1} % of its roofline"),
        (_, Some(p)) => format!(", {p:.1} % of its roofline"),
        _ => String::new(),
    };
    let share = if gpu_time_us > 0.0 {
        format!(" ({:.1} % of {processor} time)", 100.0 * row.kernel_time_us / gpu_time_us)
    } else {
        String::new()
    };
    Finding {
        kind: FindingKind::Op,
        time_us: row.kernel_time_us,
        text: format!(
            "{}{} takes {} in {}{share}{rate}",
            row.op,
            dims(&row.input_dims),
            format_duration_us(row.kernel_time_us),
            plural(row.calls, "call", "calls")
        ),
        evidence: Evidence::Time,
    }
}

/// The overview of one trace: its device and GPU time, its costliest ops, the fusion left on
/// the table, its idle time and its largest category.
pub fn trace_overview(summary: &TraceSummary, time: Option<&TraceTime>) -> Overview {
    let platform = summary.platforms.first();
    let chip = time.and_then(|t| t.chip.as_ref().map(|c| c.name.as_str()));
    let name = platform.map_or_else(|| "unknown device".to_string(), |p| device_name(p, chip));
    let gpu = platform.map_or(0.0, |p| p.gpu_time_us);
    let processor = platform.map_or(Processor::Gpu, PlatformEntry::processor);
    let timeline = time.and_then(|t| t.timeline.as_ref());
    let side = verdict_side("trace", &name, gpu, timeline, processor);
    let kernels = platform.map_or(0, |p| p.kernels);
    let busy = busy_clause(&side, processor);
    let text = format!(
        "{name}: {} of {processor} time in {}{}",
        format_duration_us(gpu),
        plural(kernels as u64, "kernel", "kernels"),
        if busy.is_empty() { String::new() } else { format!("; {busy}") }
    );
    let mut candidates: Vec<Finding> = Vec::new();
    if let Some(t) = time {
        candidates.extend(t.ops.iter().take(cap(FindingKind::Op)).map(|r| top_op(r, gpu, processor)));
        candidates.extend(t.fusion.as_ref().map(|f| opportunities(f, None)).unwrap_or_default());
    }
    let launch = time.and_then(|t| t.launch_cost.as_ref()).map(|l| &l.whole);
    candidates.extend(timeline.and_then(|t| idle(t, time.and_then(|t| t.waits.as_ref()), launch, None)));
    candidates.extend(summary.categories.first().map(|row| Finding {
        kind: FindingKind::Category,
        time_us: row.trace.time_us,
        text: format!(
            "{} kernels are {:.1} % of {processor} time: {} in {}",
            row.category,
            row.trace.share_pct,
            format_duration_us(row.trace.time_us),
            plural(row.trace.count, "kernel", "kernels")
        ),
        evidence: Evidence::Kernels,
    }));
    Overview { verdict: Verdict { text, sides: vec![side] }, findings: rank(candidates) }
}
