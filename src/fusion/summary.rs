//! The analysis as tables for people: one row per group, then the totals. The command line
//! prints them as text; the page exports them as Markdown and CSV.

use crate::table::{markdown_text, Table};
use crate::units::{format_bytes, format_pct, group_digits};

use super::analysis::{AnalysisReport, TrafficFigures};

fn bytes_cell(b: u64) -> String {
    format!("{} ({})", group_digits(b), format_bytes(b))
}

/// One row per group: its ops and its traffic as separate kernels and as one.
pub fn groups_table(r: &AnalysisReport) -> Table {
    let mut t = Table::new(&[
        "#",
        "kind",
        "ops",
        ">read (fused)",
        ">written (fused)",
        ">fused total",
        ">unfused total",
        ">saved",
    ]);
    for (i, g) in r.group_details.iter().enumerate() {
        t.row([
            (i + 1).to_string(),
            format!("{:?}", g.kind).to_lowercase(),
            g.ops.join(", "),
            format_bytes(g.fused.bytes_read),
            format_bytes(g.fused.bytes_written),
            format_bytes(g.fused.total),
            format_bytes(g.unfused.total),
            format_bytes(g.fused.saved_by_fusion),
        ]);
    }
    t
}

/// Unfused and fused totals, exact and with units.
pub fn totals_table(r: &AnalysisReport) -> Table {
    let mut t = Table::new(&["", ">bytes read", ">bytes written", ">total"]);
    let row = |name: &str, f: &TrafficFigures| {
        vec![name.to_string(), bytes_cell(f.bytes_read), bytes_cell(f.bytes_written), bytes_cell(f.total)]
    };
    t.row(row("unfused", &r.unfused));
    t.row(row("fused", &r.fused));
    t
}

/// The whole report as text: groups, totals, savings, assumed tensors.
pub fn text_report(r: &AnalysisReport) -> String {
    let mut out = format!("{} ops in {} fusion groups\n\n", r.op_details.len(), r.groups.len());
    out.push_str(&groups_table(r).to_text());
    out.push('\n');
    out.push_str(&totals_table(r).to_text());
    out.push_str(&format!(
        "\nsaved by fusion: {} ({})\n",
        bytes_cell(r.fused.saved_by_fusion),
        format_pct(r.savings_pct)
    ));
    if r.assumed_tensors.is_empty() {
        out.push_str("assumed tensors: none (every tensor is produced or declared)\n");
    } else {
        out.push_str(&format!(
            "assumed tensors (not produced, not declared; sized like the output of their first reader): {}\n",
            r.assumed_tensors.join(", ")
        ));
    }
    out
}

/// The report as Markdown, for pasting into a design review.
pub fn markdown_report(r: &AnalysisReport) -> String {
    let mut out = format!("**{} ops in {} fusion groups**\n\n", r.op_details.len(), r.groups.len());
    out.push_str(&groups_table(r).to_markdown());
    out.push('\n');
    out.push_str(&totals_table(r).to_markdown());
    out.push_str(&format!(
        "\nSaved by fusion: **{}** ({})\n",
        format_bytes(r.fused.saved_by_fusion),
        format_pct(r.savings_pct)
    ));
    if !r.assumed_tensors.is_empty() {
        let names: Vec<String> = r.assumed_tensors.iter().map(|t| markdown_text(t)).collect();
        out.push_str(&format!("\nAssumed tensor sizes: {}\n", names.join(", ")));
    }
    out
}
