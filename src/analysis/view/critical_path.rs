//! The critical path of each step, as the page, the report and the command line show it
//! ([`crate::time::critical_path`]).

use table::{Cell, DataTable};
use units::format_duration_us;

use crate::time::critical_path::CriticalPath;

/// One row per step: the path's length, its shares, and the names it spends longest on.
pub fn critical_path_table(paths: &[CriticalPath]) -> DataTable {
    let mut t = DataTable::new(
        "critical_path",
        "Critical path of each step: the chain of kernels and CPU calls that decided when its last work ended",
        &[
            ("window", false),
            ("length", true),
            ("GPU", true),
            ("CPU", true),
            ("launch delay", true),
            ("other waits", true),
            ("GPU share", true),
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
                let name = if i.side == "gpu" { super::kernel_cell(&i.name).text } else { i.name.clone() };
                format!("{name} ({}, {})", i.side.to_uppercase(), format_duration_us(i.time_us))
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
