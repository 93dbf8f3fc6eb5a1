//! What launching kernels costs the host, as the page, the report and the command line show
//! it ([`analysis::time::launch_cost`]): the whole trace, then each step.

use table::{Cell, DataTable};
use units::format_duration_us;

use analysis::time::launch_cost::{LaunchCost, LaunchReport, HOST_BOUND_RUN};

/// One row for the whole trace and one per step.
pub fn launch_cost_table(r: &LaunchReport) -> DataTable {
    let mut t = DataTable::new(
        "launch_cost",
        format!(
            "Launch cost: CPU time per launch call, launch-to-start latency, host-bound stretches (≥ {HOST_BOUND_RUN} \
             kernels in a row, each launched after its stream went idle), kernels that ran for less time than \
             their launch call took, and the host wait a CUDA/HIP graph of the same work would remove"
        ),
        &[
            ("window", false),
            ("calls", true),
            ("CPU per call", true),
            ("CPU in calls", true),
            ("latency median", true),
            ("latency p90", true),
            ("host-bound stretches", true),
            ("their kernels", true),
            ("idle in them", true),
            ("kernels < launch", true),
            ("a graph would remove", true),
        ],
    );
    let row = |window: &str, c: &LaunchCost| {
        vec![
            Cell::text(window),
            Cell::count(c.calls),
            Cell::micros(c.per_launch_us),
            Cell::micros(c.launch_cpu_us),
            Cell::micros(c.latency_median_us),
            Cell::micros(c.latency_p90_us),
            Cell::count(c.host_bound.stretches),
            Cell::count(c.host_bound.kernels),
            Cell::micros(c.host_bound.idle_us),
            Cell::count(c.small.kernels),
            Cell::micros(c.graph_saving_us),
        ]
    };
    t.rows.push(row("whole trace", &r.whole));
    for s in &r.steps {
        t.rows.push(row(&s.window, &s.cost));
    }
    // Counts first out when the panel is narrow: the times say what launching costs.
    t.with_details(|h| matches!(h, "calls" | "their kernels" | "latency median"))
}

/// "the longest host-bound stretch: 41 kernels on device 0 stream 7, 3.10 ms, 2.48 ms of it
/// idle": where to look first; `None` without a stretch.
pub fn longest_stretch_line(c: &LaunchCost) -> Option<String> {
    let l = c.host_bound.longest.as_ref()?;
    Some(format!(
        "the longest host-bound stretch: {} kernels on device {} stream {}, {}, {} of it idle",
        l.kernels,
        l.device,
        l.stream,
        format_duration_us(l.span_us),
        format_duration_us(l.idle_us)
    ))
}
