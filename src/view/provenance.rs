//! Inductor's compile log as the command line and the page show it ([`CompiledKernels`]):
//! every generated kernel with its exact post-grad nodes, bytes and the model ops they came
//! from, and, joined to a trace of the same run, its calls and time.

use table::{Cell, DataTable};

use units::format_bytes;

use analysis::provenance::{CompiledKernels, Inferred, Unjoined};
use trace::compiled::Estimate;

/// Widest list of nodes or model ops shown in a cell (the JSON has them whole).
const LIST_WIDTH: usize = 90;

/// One row per kernel of the log, in launch order per graph.
pub fn kernels_table(c: &CompiledKernels) -> DataTable {
    let mut columns = vec![("graph", false), ("kernel", false), ("kind", false)];
    if c.joined {
        columns.extend([("calls", true), ("time", true)]);
    }
    columns.extend([
        ("nodes", true),
        ("fused bytes", true),
        ("unfused bytes", true),
        ("saved", true),
        ("post-grad nodes", false),
        ("model ops", false),
    ]);
    let estimated = c.kernels.iter().any(|k| k.inductor_estimate.is_some());
    if estimated {
        columns.push(("Inductor's estimate", true));
    }
    let inferred = c.kernels.iter().any(|k| k.inferred.is_some());
    if inferred {
        columns.push(("inferred from its name", false));
    }
    let mut t = DataTable::new(
        "compiled-kernels",
        "Kernels Inductor generated, with the post-grad nodes its provenance gives (exact) and the bytes their shapes give",
        &columns,
    );
    for k in &c.kernels {
        let mut row = vec![Cell::text(k.graph.clone()), Cell::long_text(&k.kernel, 70), Cell::text(k.kind.clone())];
        if c.joined {
            match (k.calls, k.time_us) {
                (Some(calls), Some(us)) if calls > 0 => row.extend([Cell::count(calls), Cell::micros(us)]),
                _ => row.extend([Cell::count(0), Cell::text("not in the trace")]),
            }
        }
        let bytes = |b: Option<u64>| b.map_or_else(|| Cell::text("unknown (symbolic shape)"), Cell::bytes);
        let saved = match (k.fused_bytes, k.unfused_bytes) {
            (Some(f), Some(u)) => Cell::bytes(u.saturating_sub(f)),
            _ => Cell::text("—"),
        };
        row.extend([
            Cell::count(k.nodes.len() as u64),
            bytes(k.fused_bytes),
            bytes(k.unfused_bytes),
            saved,
            Cell::long_text(&k.nodes.join("; "), LIST_WIDTH),
            Cell::long_text(&k.model_ops.join(", "), LIST_WIDTH),
        ]);
        if estimated {
            row.push(Cell::text(k.inductor_estimate.map_or_else(String::new, |e| estimate_text(&e, k.fused_bytes))));
        }
        if inferred {
            row.push(Cell::long_text(
                &k.inferred.as_ref().map_or_else(String::new, |i| inferred_text(i, k.fused_bytes)),
                LIST_WIDTH,
            ));
        }
        t.rows.push(row);
    }
    t
}

/// The kernels of the trace that look generated but that the log does not name.
pub fn unjoined_table(unjoined: &[Unjoined]) -> DataTable {
    let mut t = DataTable::new(
        "compiled-unjoined",
        "Generated kernels in the trace that the compile log does not name (their groups stay inferred)",
        &[("kernel", false), ("calls", true), ("why", false)],
    );
    for u in unjoined {
        t.rows.push(vec![Cell::long_text(&u.name, 70), Cell::count(u.calls), Cell::text(u.why.clone())]);
    }
    t
}

/// Bytes known another way beside the exact ones: "16.50 KiB, the exact bytes", or how far
/// from them ("16.75 KiB (−16.00 KiB against the exact)"), or `unknown` where there are none.
fn against_exact(bytes: Option<u64>, exact: Option<u64>, unknown: &str) -> String {
    match (bytes, exact) {
        (Some(b), Some(x)) if b == x => format!("{}, the exact bytes", format_bytes(b)),
        (Some(b), Some(x)) => {
            let sign = if b > x { "+" } else { "−" };
            format!("{} ({sign}{} against the exact)", format_bytes(b), format_bytes(b.abs_diff(x)))
        }
        (Some(b), None) => format_bytes(b),
        (None, _) => unknown.to_string(),
    }
}

/// Inductor's estimate of one call beside the exact bytes, and its FLOPs where it counted any
/// (it writes 0 for the kernels it does not count).
fn estimate_text(e: &Estimate, exact: Option<u64>) -> String {
    let mut text = against_exact(e.bytes, exact, "bytes not estimated");
    if let Some(f) = e.flops.filter(|&f| f > 0) {
        text += &format!("; {}", units::format_flops(f as f64));
    }
    text
}

/// A name-inferred group beside the exact one: how, its parts, its bytes and how far they are
/// from the exact bytes.
fn inferred_text(i: &Inferred, exact: Option<u64>) -> String {
    let bytes = against_exact(i.fused_bytes, exact, "bytes unknown");
    format!("{}: {}; {bytes}", i.how, i.parts.join(" + "))
}
