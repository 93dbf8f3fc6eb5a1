//! Why the GPU waits, as the page, the report and the command line show it: each stream's idle
//! time between kernels by cause ([`analysis::time::waits`]).

use table::{Cell, DataTable};

use analysis::time::waits::{WaitTimes, Waits, LAUNCH_GAP_US};

/// One row per stream, the streams with the most idle time first, and the sum.
pub fn waits_table(w: &Waits) -> DataTable {
    let mut t = DataTable::new(
        "waits",
        format!(
            "Idle time between kernels on each stream, by cause (host wait: launched after the stream went idle; \
             kernel wait: back-to-back launch gaps under {LAUNCH_GAP_US:.0} µs; other: waiting on another stream or a sync)"
        ),
        &[
            ("device", true),
            ("stream", true),
            ("events", true),
            ("idle", true),
            ("host wait", true),
            ("kernel wait", true),
            ("other", true),
            ("host wait share", true),
        ],
    );
    let mut streams: Vec<_> = w.streams.iter().collect();
    streams.sort_by(|a, b| b.times().total_us().total_cmp(&a.times().total_us()));
    let row = |device: Cell, stream: Cell, events: Cell, times: &WaitTimes| {
        vec![
            device,
            stream,
            events,
            Cell::micros(times.total_us()),
            Cell::micros(times.host_wait_us),
            Cell::micros(times.kernel_wait_us),
            Cell::micros(times.other_us),
            times.host_share().map_or_else(|| Cell::text("—"), Cell::pct),
        ]
    };
    for s in streams {
        t.rows.push(row(
            Cell::text(s.device.to_string()),
            Cell::text(s.stream.to_string()),
            Cell::count(s.events),
            &s.times(),
        ));
    }
    if w.streams.len() > 1 {
        let events = w.streams.iter().map(|s| s.events).sum();
        t.rows.push(row(Cell::text("all"), Cell::text(""), Cell::count(events), &w.total()));
    }
    t
}
