//! An op trace's case view as tables for the page and its CSV export: one row per instruction
//! (line, op, kind, case type and shape, dtype, operands and results with their shapes, the
//! bump-allocator addresses in decimal and in hex), the unmapped instructions, and the
//! headline sentence. Kept in the core so that what the page shows is tested natively.
//!
//! Collectives are their own kind (`collective`), never folded into the op types of the
//! fusion graph, where they become a standalone head and result pair.

use table::{Cell, DataTable};
use units::group_digits;

use super::{hex, Case, OptraceReport, Role};

/// The kind an instruction is shown as: its conversion role (`matmul`, `gather`,
/// `collective`, `opaque` …).
pub fn kind_of(op: &str) -> &'static str {
    Role::of_op(op).as_str()
}

/// `%1 [1, 128]; %2 [50257, 768]`: ids with the shape written at this use.
fn tensors_text(ids: &[u64], shapes: &[Vec<u64>]) -> String {
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let shape = shapes.get(i).map(|s| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "));
            format!("%{id} [{}]", shape.unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A list of addresses, one formatting per address, `; `-separated.
fn addresses(addrs: &[u64], format: fn(u64) -> String) -> Cell {
    let text = addrs.iter().map(|&a| format(a)).collect::<Vec<_>>().join("; ");
    // Sorted by the first address (the allocation order of the first operand).
    Cell { exact: text.clone(), text, sort: addrs.first().map_or(f64::NEG_INFINITY, |&a| a as f64) }
}

fn case_row(c: &Case) -> Vec<Cell> {
    vec![
        Cell::count(c.line as u64),
        Cell::text(&c.op),
        Cell::text(kind_of(&c.op)),
        Cell::text(c.case_type.as_str()),
        Cell::text(c.case_shape.to_string()),
        Cell::text(c.dtype.to_string()),
        Cell::text(tensors_text(&c.input_ids, &c.input_shapes)),
        Cell::text(tensors_text(&c.output_ids, &c.output_shapes)),
        addresses(&c.input_addrs, |a| a.to_string()),
        addresses(&c.input_addrs, hex),
        addresses(&c.output_addrs, |a| a.to_string()),
        addresses(&c.output_addrs, hex),
    ]
}

/// Nova's case view: one row per instruction that has a case, in file order.
pub fn case_table(r: &OptraceReport) -> DataTable {
    let mut t = DataTable::new(
        "cases",
        "Case view (Nova)",
        &[
            ("line", true),
            ("op", false),
            ("kind", false),
            ("case type", false),
            ("case shape", false),
            ("dtype", false),
            ("inputs", false),
            ("outputs", false),
            ("input addresses", true),
            ("input addresses (hex)", true),
            ("output addresses", true),
            ("output addresses (hex)", true),
        ],
    );
    t.rows = r.cases.iter().map(case_row).collect();
    t
}

/// The instructions with no case (Nova would raise), with the reason.
pub fn unmapped_table(r: &OptraceReport) -> DataTable {
    let mut t = DataTable::new(
        "unmapped",
        "Unmapped instructions (no case; shown in the fusion groups as standalone ops)",
        &[("line", true), ("op", false), ("kind", false), ("why it has no case", false)],
    );
    t.rows = r
        .unmapped_cases
        .iter()
        .map(|u| vec![Cell::count(u.line as u64), Cell::text(&u.op), Cell::text(kind_of(&u.op)), Cell::text(&u.reason)])
        .collect();
    t
}

/// The headline: records, cases, unmapped ops and skipped lines.
pub fn headline(r: &OptraceReport) -> String {
    let collectives = r.cases.iter().filter(|c| Role::of_op(&c.op) == Role::Collective).count();
    let mut s = format!(
        "{} record{}: {} with a case ({} collective{}), {} unmapped; {} line{} skipped (not records).",
        group_digits(r.records as u64),
        if r.records == 1 { "" } else { "s" },
        group_digits(r.cases.len() as u64),
        collectives,
        if collectives == 1 { "" } else { "s" },
        group_digits(r.unmapped_cases.len() as u64),
        group_digits(r.skipped_lines as u64),
        if r.skipped_lines == 1 { "" } else { "s" },
    );
    if !r.unmapped.is_empty() {
        s += &format!(" Unmapped ops: {}.", r.unmapped.join(", "));
    }
    s
}

/// The report as the command line's `optrace --json` prints it (pretty, newline-terminated).
pub fn report_json(r: &OptraceReport) -> String {
    serde_json::to_string_pretty(r).map(|s| s + "\n").unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze_optrace;

    const SPEC: &str = include_str!("../../tests/data/optrace/spec_example.optrace");

    #[test]
    fn case_rows_follow_the_report() {
        let r = analyze_optrace(SPEC).unwrap();
        let t = case_table(&r);
        assert_eq!(t.rows.len(), r.cases.len());
        assert!(t.rows.iter().all(|row| row.len() == t.columns.len()));
        // Line 1: the embedding's table sits right after its 1x128 i32 indices (512 bytes).
        let first = &t.rows[0];
        assert_eq!(first[1].text, "embedding");
        assert_eq!(first[2].text, "gather");
        assert_eq!(first[4].text, "[1, 128, 30522, 768]");
        assert_eq!(first[6].text, "%0 [1, 128]; %1 [30522, 768]");
        assert_eq!(first[8].text, "5497558138880; 5497558139392");
        assert_eq!(first[9].text, "0x50000000000; 0x50000000200");
        // The all-reduce is a collective, not one of the fusion op types.
        let last = t.rows.last().unwrap();
        assert_eq!((last[1].text.as_str(), last[2].text.as_str()), ("allreduce", "collective"));
        assert!(headline(&r).contains("7 records: 7 with a case (1 collective), 0 unmapped; 0 lines skipped"));
    }

    #[test]
    fn csv_has_one_line_per_case_and_exact_addresses() {
        let r = analyze_optrace(SPEC).unwrap();
        let csv = case_table(&r).exact_table().to_csv();
        assert_eq!(csv.lines().count(), 1 + r.cases.len());
        assert!(csv.lines().next().unwrap().starts_with("line,op,kind,case type,case shape"));
        assert!(csv.contains(&r.cases[3].output_addrs[0].to_string()));
    }

    #[test]
    fn unmapped_ops_are_listed_with_their_line() {
        let text = include_str!("../../tests/data/optrace/gpt2_block_tp_rank1.optrace");
        let r = analyze_optrace(text).unwrap();
        let t = unmapped_table(&r);
        let ops: Vec<&str> = t.rows.iter().map(|row| row[1].text.as_str()).collect();
        assert_eq!(ops, ["split", "dropout", "slice", "sum"]);
        assert!(t.rows.iter().all(|row| row[2].text == "opaque"));
        let h = headline(&r);
        assert!(h.contains("7 lines skipped") && h.contains("Unmapped ops: split, dropout, slice, sum."), "{h}");
    }

    #[test]
    fn json_is_the_command_lines() {
        let r = analyze_optrace(SPEC).unwrap();
        let v: serde_json::Value = serde_json::from_str(&report_json(&r)).unwrap();
        assert_eq!(v["cases"].as_array().unwrap().len(), 7);
        assert_eq!(v["analysis"], serde_json::to_value(&r.analysis).unwrap());
    }
}
