//! Inductor's compile log as the command line and the page show it: every generated kernel
//! with its exact post-grad nodes, bytes and the model ops they came from, and, joined to a
//! trace of the same run ([`crate::provenance`]), its calls and time.

use inductor::CompileLog;
use table::{Cell, DataTable};
use units::{format_bytes, plural};

use crate::provenance::{kernels, Joined};

/// Widest list of nodes or model ops shown in a cell (the JSON has them whole).
const LIST_WIDTH: usize = 90;

/// One row per kernel of the log, in launch order per graph.
pub fn kernels_table(log: &CompileLog, joined: Option<&Joined>) -> DataTable {
    let timed = joined.is_some();
    let mut columns = vec![("graph", false), ("kernel", false), ("kind", false)];
    if timed {
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
    let mut t = DataTable::new(
        "compiled-kernels",
        "Kernels Inductor generated, with the post-grad nodes its provenance gives (exact) and the bytes their shapes give",
        &columns,
    );
    for (g, k, graph, kernel) in kernels(log) {
        let name = match kernel.handle {
            Some(h) => format!("{}:{h}", kernel.name),
            None => kernel.name.clone(),
        };
        let mut row =
            vec![Cell::text(graph.compile.to_string()), Cell::long_text(&name, 70), Cell::text(kernel.kind.text())];
        if let Some(j) = joined {
            match j.of(g, k) {
                Some(r) => {
                    let us = if r.gpu_us > 0.0 { r.gpu_us } else { r.cpu_us };
                    row.extend([Cell::count(r.calls), Cell::micros(us)]);
                }
                None => row.extend([Cell::count(0), Cell::text("not in the trace")]),
            }
        }
        let bytes = |b: Option<u64>| b.map_or_else(|| Cell::text("unknown (symbolic shape)"), Cell::bytes);
        let saved = match (kernel.fused_bytes, kernel.unfused_bytes) {
            (Some(f), Some(u)) => Cell::bytes(u.saturating_sub(f)),
            _ => Cell::text("—"),
        };
        let nodes: Vec<String> = graph
            .nodes_of(kernel)
            .map(|n| match &n.tensor {
                Some(t) => format!("{} = {} {}", n.name, n.op(), t.text),
                None => format!("{} = {}", n.name, n.op()),
            })
            .collect();
        row.extend([
            Cell::count(kernel.nodes.len() as u64),
            bytes(kernel.fused_bytes),
            bytes(kernel.unfused_bytes),
            saved,
            Cell::long_text(&nodes.join("; "), LIST_WIDTH),
            Cell::long_text(&graph.model_ops_of(kernel).join(", "), LIST_WIDTH),
        ]);
        t.rows.push(row);
    }
    t
}

/// The kernels of the trace that look generated but that the log does not name.
pub fn unjoined_table(joined: &Joined) -> DataTable {
    let mut t = DataTable::new(
        "compiled-unjoined",
        "Generated kernels in the trace that the compile log does not name (their groups stay inferred)",
        &[("kernel", false), ("calls", true), ("why", false)],
    );
    for u in &joined.unjoined {
        t.rows.push(vec![Cell::long_text(&u.name, 70), Cell::count(u.calls), Cell::text(u.why.clone())]);
    }
    t
}

/// One line on the log: graphs, kernels, bytes, and how much of it the trace ran.
pub fn log_line(log: &CompileLog, joined: Option<&Joined>) -> String {
    let kernels = log.kernels().count();
    let (fused, unfused) = log.kernels().fold((0u64, 0u64), |(f, u), (_, k)| {
        (f.saturating_add(k.fused_bytes.unwrap_or(0)), u.saturating_add(k.unfused_bytes.unwrap_or(0)))
    });
    let mut line = format!(
        "{} and {} with their exact post-grad nodes (Inductor provenance): {} fused, {} if every node were its own kernel",
        plural(log.graphs.len() as u64, "compiled graph", "compiled graphs"),
        plural(kernels as u64, "kernel", "kernels"),
        format_bytes(fused),
        format_bytes(unfused),
    );
    if let Some(j) = joined {
        line += &format!(
            "; {} of {kernels} ran in the trace ({}), {} not in the log",
            j.kernels.len(),
            plural(j.regions, "compiled region", "compiled regions"),
            plural(j.unjoined.len() as u64, "generated kernel", "generated kernels"),
        );
    }
    line
}
