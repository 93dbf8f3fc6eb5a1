//! The analysis as tables for people: one row per group, then the totals. The command line
//! prints them as text; the page exports them as Markdown and CSV.
//!
//! The tables read a report through [`Tables`]: the page's [`AnalysisReport`], or the command
//! line's [`BorrowedReport`], which borrows the names from the graph so that a million-op graph
//! is written as it is read ([`write_text_report`]).

use std::fmt;
use std::io;

use table::{markdown_text, Table, TextLayout};
use units::{format_bytes, format_pct, group_digits, Bytes};

use super::analysis::{AnalysisReport, BorrowedReport, GroupKind, TrafficFigures};

/// What the tables read of a report.
pub trait Tables {
    fn op_count(&self) -> usize;
    fn group_count(&self) -> usize;
    fn group_kind(&self, g: usize) -> GroupKind;
    /// Names of group `g`'s ops, in processing order.
    fn group_ops(&self, g: usize) -> impl Iterator<Item = &str> + Clone;
    fn group_unfused(&self, g: usize) -> TrafficFigures;
    fn group_fused(&self, g: usize) -> TrafficFigures;
    fn unfused(&self) -> TrafficFigures;
    fn fused(&self) -> TrafficFigures;
    fn savings_pct(&self) -> f64;
    /// Sorted by name.
    fn assumed_tensors(&self) -> Vec<&str>;
}

impl Tables for AnalysisReport {
    fn op_count(&self) -> usize {
        self.op_details.len()
    }
    fn group_count(&self) -> usize {
        self.group_details.len()
    }
    fn group_kind(&self, g: usize) -> GroupKind {
        self.group_details[g].kind
    }
    fn group_ops(&self, g: usize) -> impl Iterator<Item = &str> + Clone {
        self.group_details[g].ops.iter().map(String::as_str)
    }
    fn group_unfused(&self, g: usize) -> TrafficFigures {
        self.group_details[g].unfused
    }
    fn group_fused(&self, g: usize) -> TrafficFigures {
        self.group_details[g].fused
    }
    fn unfused(&self) -> TrafficFigures {
        self.unfused
    }
    fn fused(&self) -> TrafficFigures {
        self.fused
    }
    fn savings_pct(&self) -> f64 {
        self.savings_pct
    }
    fn assumed_tensors(&self) -> Vec<&str> {
        self.assumed_tensors.iter().map(String::as_str).collect()
    }
}

impl Tables for BorrowedReport<'_> {
    fn op_count(&self) -> usize {
        self.graph().len()
    }
    fn group_count(&self) -> usize {
        self.analysis().grouping.groups.len()
    }
    fn group_kind(&self, g: usize) -> GroupKind {
        BorrowedReport::group_kind(self, g)
    }
    fn group_ops(&self, g: usize) -> impl Iterator<Item = &str> + Clone {
        self.names(&self.analysis().grouping.groups[g].ops)
    }
    fn group_unfused(&self, g: usize) -> TrafficFigures {
        BorrowedReport::group_unfused(self, g)
    }
    fn group_fused(&self, g: usize) -> TrafficFigures {
        BorrowedReport::group_fused(self, g)
    }
    fn unfused(&self) -> TrafficFigures {
        BorrowedReport::unfused(self)
    }
    fn fused(&self) -> TrafficFigures {
        BorrowedReport::fused(self)
    }
    fn savings_pct(&self) -> f64 {
        self.analysis().savings_pct()
    }
    fn assumed_tensors(&self) -> Vec<&str> {
        self.graph().assumed_tensors()
    }
}

fn bytes_cell(b: u64) -> String {
    format!("{} ({})", group_digits(b), format_bytes(b))
}

/// Names joined by `, `, written where displayed.
struct Joined<I>(I);

impl<'s, I: Iterator<Item = &'s str> + Clone> fmt::Display for Joined<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.clone().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

const GROUP_HEADERS: [&str; 8] =
    ["#", "kind", "ops", ">read (fused)", ">written (fused)", ">fused total", ">unfused total", ">saved"];

/// Group `g`'s row of the groups table, as `Display` cells.
fn group_row<R: Tables>(r: &R, g: usize, cells: impl FnOnce(&[&dyn fmt::Display; 8])) {
    let (fused, unfused) = (r.group_fused(g), r.group_unfused(g));
    cells(&[
        &(g + 1),
        &r.group_kind(g).as_str(),
        &Joined(r.group_ops(g)),
        &Bytes(fused.bytes_read),
        &Bytes(fused.bytes_written),
        &Bytes(fused.total),
        &Bytes(unfused.total),
        &Bytes(fused.saved_by_fusion),
    ])
}

/// One row per group: its ops and its traffic as separate kernels and as one.
pub fn groups_table(r: &impl Tables) -> Table {
    let mut t = Table::new(&GROUP_HEADERS);
    for g in 0..r.group_count() {
        group_row(r, g, |cells| t.row(cells.iter().map(|c| c.to_string())));
    }
    t
}

/// Unfused and fused totals, exact and with units.
pub fn totals_table(r: &impl Tables) -> Table {
    let mut t = Table::new(&["", ">bytes read", ">bytes written", ">total"]);
    let row = |name: &str, f: &TrafficFigures| {
        vec![name.to_string(), bytes_cell(f.bytes_read), bytes_cell(f.bytes_written), bytes_cell(f.total)]
    };
    t.row(row("unfused", &r.unfused()));
    t.row(row("fused", &r.fused()));
    t
}

/// The whole report as text: groups, totals, savings, assumed tensors.
pub fn text_report(r: &impl Tables) -> String {
    let mut out = Vec::new();
    write_text_report(&mut out, r).expect("writing to memory");
    String::from_utf8(out).expect("the report is text")
}

/// [`text_report`], written as it is made: the groups table is measured in one pass over the
/// groups and written in a second, so no row is held.
pub fn write_text_report(out: &mut impl io::Write, r: &impl Tables) -> io::Result<()> {
    writeln!(out, "{} ops in {} fusion groups\n", r.op_count(), r.group_count())?;
    let mut groups = TextLayout::new(&GROUP_HEADERS);
    for g in 0..r.group_count() {
        group_row(r, g, |cells| groups.measure(cells));
    }
    groups.write_header(out)?;
    for g in 0..r.group_count() {
        let mut written = Ok(());
        group_row(r, g, |cells| written = groups.write_row(out, cells));
        written?;
    }
    out.write_all(b"\n")?;
    out.write_all(totals_table(r).to_text().as_bytes())?;
    writeln!(out, "\nsaved by fusion: {} ({})", bytes_cell(r.fused().saved_by_fusion), format_pct(r.savings_pct()))?;
    let assumed = r.assumed_tensors();
    if assumed.is_empty() {
        writeln!(out, "assumed tensors: none (every tensor is produced or declared)")
    } else {
        writeln!(
            out,
            "assumed tensors (not produced, not declared; sized like the output of their first reader): {}",
            assumed.join(", ")
        )
    }
}

/// The report as Markdown, for pasting into a design review.
pub fn markdown_report(r: &impl Tables) -> String {
    let mut out = format!("**{} ops in {} fusion groups**\n\n", r.op_count(), r.group_count());
    out.push_str(&groups_table(r).to_markdown());
    out.push('\n');
    out.push_str(&totals_table(r).to_markdown());
    out.push_str(&format!(
        "\nSaved by fusion: **{}** ({})\n",
        format_bytes(r.fused().saved_by_fusion),
        format_pct(r.savings_pct())
    ));
    let assumed = r.assumed_tensors();
    if !assumed.is_empty() {
        let names: Vec<String> = assumed.iter().map(|t| markdown_text(t)).collect();
        out.push_str(&format!("\nAssumed tensor sizes: {}\n", names.join(", ")));
    }
    out
}
