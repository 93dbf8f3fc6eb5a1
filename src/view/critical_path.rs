//! The critical path of each step, as the page, the report and the command line show it
//! ([`analysis::time::critical_path`]).

use table::{Cell, DataTable};
use units::format_duration_us;

use analysis::time::critical_path::{CriticalPath, Lane};
use trace::Processor;

/// What the path's two sides are called, in its items and its columns (the time on each, the
/// kernels' share): a GPU run's kernels and CPU calls are "GPU" and "CPU"; a CPU run's kernels
/// ran on the CPU too, so there they are kernels and calls.
struct Sides {
    items: [&'static str; 2],
    columns: [&'static str; 3],
}

fn sides(processor: Processor) -> Sides {
    match processor {
        Processor::Gpu => Sides { items: ["GPU", "CPU"], columns: ["GPU", "CPU", "GPU share"] },
        Processor::Cpu => Sides { items: ["kernel", "call"], columns: ["in kernels", "in calls", "kernel share"] },
    }
}

/// One row per step: the path's length, its shares, and the names it spends longest on.
pub fn critical_path_table(paths: &[CriticalPath], processor: Processor) -> DataTable {
    let Sides { items: [kernels, calls], columns: [in_kernels, in_calls, share] } = sides(processor);
    let mut t = DataTable::new(
        "critical_path",
        "Critical path of each step: the chain of kernels and CPU calls that decided when its last work ended",
        &[
            ("window", false),
            ("length", true),
            (in_kernels, true),
            (in_calls, true),
            ("launch delay", true),
            ("other waits", true),
            (share, true),
            ("kernels", true),
            ("calls", true),
            ("longest on it", false),
        ],
    );
    for p in paths {
        let top: Vec<String> = p
            .top
            .iter()
            .map(|i| {
                // Kernels read out as every table reads them (library, tile, epilogue).
                let (name, side) = match i.side {
                    "gpu" => (super::kernel_cell(&i.name).text, kernels),
                    _ => (i.name.clone(), calls),
                };
                format!("{name} ({side}, {})", format_duration_us(i.time_us))
            })
            .collect();
        t.rows.push(vec![
            Cell::text(&p.window),
            Cell::micros(p.length_us),
            Cell::micros(p.gpu_us),
            Cell::micros(p.cpu_us),
            Cell::micros(p.launch_us),
            Cell::micros(p.other_us),
            if p.length_us > 0.0 { Cell::pct(100.0 * p.gpu_us / p.length_us) } else { Cell::text("—") },
            Cell::count(p.kernels),
            Cell::count(p.calls),
            Cell::text(top.join("; ")),
        ]);
    }
    t
}

/// Width of the drawing, its lane labels' column, and one lane's height (SVG units).
const WIDTH: f64 = 760.0;
const LABELS: f64 = 136.0;
const LANE: f64 = 24.0;
const TOP: f64 = 48.0;
/// Lanes drawn at most: a path crosses few threads and streams.
const LANES: usize = 16;

/// The step whose path is longest drawn with its path marked: one lane per CPU thread and GPU
/// stream the path crosses, each event of the path a bar (kernels blue, calls orange) over its
/// part on the path, and what each waited for drawn as a dashed line from the event that
/// released it. `None` when no path kept its events.
pub fn path_svg(paths: &[CriticalPath], processor: Processor) -> Option<String> {
    use draw::chart::{escape_xml, svg_start};
    use draw::roofline::{BLUE, ORANGE};
    use std::fmt::Write;
    let p = paths.iter().find(|p| !p.drawn.is_empty())?;
    let mut lanes: Vec<Lane> = p.drawn.iter().map(|e| e.lane).collect();
    lanes.sort();
    lanes.dedup();
    lanes.truncate(LANES);
    let row = |l: Lane| lanes.iter().position(|&x| x == l);
    let length = p.drawn.iter().map(|e| e.end_us).fold(p.length_us, f64::max).max(1e-3);
    let plot = WIDTH - LABELS - 10.0;
    let x = |t: f64| LABELS + (t / length).clamp(0.0, 1.0) * plot;
    let height = TOP + lanes.len() as f64 * LANE + 34.0;
    let share = 100.0 * p.gpu_us / p.length_us.max(1e-9);
    let on = match processor {
        Processor::Gpu => "on the GPU",
        Processor::Cpu => "in kernels",
    };
    let title = format!("Critical path of {}: {} ({share:.0} % {on})", p.window, format_duration_us(p.length_us));
    let mut s = svg_start(WIDTH as u32, height.ceil() as u32, &title);
    for (color, opacity, label, at) in
        [(BLUE, 1.0, "kernel", 0.0), (ORANGE, 1.0, "CPU call", 80.0), (ORANGE, 0.4, "host work between calls", 170.0)]
    {
        let _ = write!(
            s,
            r#"<rect x="{}" y="26" width="12" height="12" fill="{color}" fill-opacity="{opacity}"/><text x="{}" y="36" fill="currentColor">{label}</text>"#,
            LABELS + at,
            LABELS + at + 16.0
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{}" y1="32" x2="{}" y2="32" stroke="#8b949e" stroke-dasharray="4 3"/><text x="{}" y="36" fill="currentColor">waiting (launch delay, another stream)</text>"##,
        LABELS + 350.0,
        LABELS + 374.0,
        LABELS + 380.0
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = TOP + i as f64 * LANE;
        let label = match lane {
            Lane::Cpu { tid } => format!("CPU thread {tid}"),
            Lane::Gpu { device, stream } => format!("{processor} {device} stream {stream}"),
        };
        let _ = write!(
            s,
            r##"<text x="0" y="{:.1}" fill="currentColor">{}</text><line x1="{LABELS}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#8b949e" stroke-opacity="0.3"/>"##,
            y + 15.0,
            escape_xml(&label),
            y + LANE / 2.0,
            WIDTH - 10.0,
            y + LANE / 2.0
        );
    }
    let mut before: Option<(f64, f64)> = None;
    for e in &p.drawn {
        let Some(r) = row(e.lane) else { continue };
        let y = TOP + r as f64 * LANE;
        let color = if matches!(e.lane, Lane::Gpu { .. }) { BLUE } else { ORANGE };
        if let Some((end, from_y)) = before {
            let same_lane = (from_y - y).abs() < 0.5;
            if same_lane && e.start_us > end && matches!(e.lane, Lane::Cpu { .. }) {
                // Between two calls of one thread: the host's own work, on the path too.
                let _ = write!(
                    s,
                    r#"<rect class="path-host" x="{:.1}" y="{:.1}" width="{:.1}" height="6" fill="{ORANGE}" fill-opacity="0.4"/>"#,
                    x(end),
                    y + 9.0,
                    (x(e.start_us) - x(end)).max(0.5)
                );
            } else if e.start_us > end || !same_lane {
                let _ = write!(
                    s,
                    r##"<line class="path-wait" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#8b949e" stroke-dasharray="4 3"/>"##,
                    x(end),
                    from_y + LANE / 2.0,
                    x(e.start_us),
                    y + LANE / 2.0
                );
            }
        }
        let _ = write!(
            s,
            r#"<rect class="path-event" x="{:.1}" y="{:.1}" width="{:.1}" height="14" rx="2" fill="{color}"><title>{} ({})</title></rect>"#,
            x(e.start_us),
            y + 5.0,
            (x(e.end_us) - x(e.start_us)).max(1.0),
            escape_xml(&e.name),
            format_duration_us(e.end_us - e.start_us)
        );
        before = Some((e.end_us, y));
    }
    let axis = TOP + lanes.len() as f64 * LANE + 16.0;
    for k in 0..=4 {
        let t = length * f64::from(k) / 4.0;
        let anchor = match k {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{axis:.1}" text-anchor="{anchor}" fill="currentColor" fill-opacity="0.8">{}</text>"#,
            x(t),
            format_duration_us(t)
        );
    }
    s += "</svg>";
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::time::critical_path::PathEvent;

    fn event(lane: Lane, start_us: f64, end_us: f64, name: &str) -> PathEvent {
        PathEvent { lane, start_us, end_us, name: name.to_string() }
    }

    #[test]
    fn the_path_is_drawn_lane_by_lane_with_its_waits() {
        let (cpu, gpu) = (Lane::Cpu { tid: 7 }, Lane::Gpu { device: 0, stream: 7 });
        let p = CriticalPath {
            window: "ProfilerStep#3".into(),
            length_us: 100.0,
            gpu_us: 60.0,
            cpu_us: 30.0,
            launch_us: 10.0,
            other_us: 0.0,
            kernels: 2,
            calls: 1,
            top: Vec::new(),
            drawn: vec![
                event(cpu, 0.0, 10.0, "cudaLaunchKernel"),
                event(cpu, 20.0, 30.0, "cudaLaunchKernel"),
                event(gpu, 40.0, 70.0, "<script>gemm</script>"),
                event(gpu, 70.0, 100.0, "softmax"),
            ],
        };
        let svg = path_svg(std::slice::from_ref(&p), Processor::Gpu).unwrap();
        assert!(svg.contains("Critical path of ProfilerStep#3: 100.00 µs (60 % on the GPU)"), "{svg}");
        assert!(svg.contains(">CPU thread 7<") && svg.contains(">GPU 0 stream 7<"));
        assert_eq!(svg.matches(r#"class="path-event""#).count(), 4);
        // The host's work between the two calls (10 → 20 µs) is on the path; the launch delay
        // (30 → 40 µs, CPU to GPU) is a wait; back to back on one stream is neither.
        assert_eq!(svg.matches(r#"class="path-host""#).count(), 1);
        assert_eq!(svg.matches(r#"class="path-wait""#).count(), 1);
        assert!(svg.contains("&lt;script&gt;gemm&lt;/script&gt; (30.00 µs)") && !svg.contains("<script>"));
        // A path that kept no events draws nothing.
        assert!(path_svg(&[CriticalPath { drawn: Vec::new(), ..p }], Processor::Gpu).is_none());
    }
}
