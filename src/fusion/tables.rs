//! An analysis as page tables ([`DataTable`]): one row per fusion group, and one row per op
//! with the rule that placed it. The page draws them virtualised, sorted and filtered over
//! every row by [`DataTable::view`], so they stay usable at 100,000 ops.

use table::{Cell, DataTable};
use units::{format_pct, group_digits};

use super::AnalysisReport;

/// Op name lists and reasons are shortened to this many characters in cells (whole in the
/// tooltip, the filter and the CSV).
pub const TEXT_WIDTH: usize = 60;

/// Lower-case name of a group kind (`matmul`, `reduction`, `elementwise`), as the page's
/// colour classes and the CLI's tables write it.
pub fn kind_name(kind: super::analysis::GroupKind) -> String {
    format!("{kind:?}").to_lowercase()
}

/// One row per group, in the order groups were started: its kind, ops, and traffic unfused
/// and fused (the table's `#` is 1-based, as the page names groups).
pub fn groups_table(r: &AnalysisReport) -> DataTable {
    let mut t = DataTable::new(
        "groups",
        format!("{} fusion groups, in the order they were started", group_digits(r.group_details.len() as u64)),
        &[
            ("#", true),
            ("kind", false),
            ("op count", true),
            ("ops", false),
            ("unfused bytes", true),
            ("fused read", true),
            ("fused written", true),
            ("fused bytes", true),
            ("saved", true),
            ("saved %", true),
        ],
    );
    for (i, g) in r.group_details.iter().enumerate() {
        let saved_pct =
            if g.unfused.total == 0 { 0.0 } else { 100.0 * g.fused.saved_by_fusion as f64 / g.unfused.total as f64 };
        t.rows.push(vec![
            Cell::count(i as u64 + 1),
            Cell::text(kind_name(g.kind)),
            Cell::count(g.ops.len() as u64),
            Cell::long_text(&g.ops.join(", "), TEXT_WIDTH),
            Cell::bytes(g.unfused.total),
            Cell::bytes(g.fused.bytes_read),
            Cell::bytes(g.fused.bytes_written),
            Cell::bytes(g.fused.total),
            Cell::bytes(g.fused.saved_by_fusion),
            Cell { text: format_pct(saved_pct), exact: format!("{saved_pct}"), sort: saved_pct },
        ]);
    }
    t
}

/// One row per op, in file order: its type, group and why it is there (the deciding rule).
pub fn ops_table(r: &AnalysisReport) -> DataTable {
    let mut t = DataTable::new(
        "ops",
        format!("{} ops, in file order", group_digits(r.op_details.len() as u64)),
        &[("#", true), ("op", false), ("type", false), ("group", true), ("why in this group", false)],
    );
    for (i, d) in r.op_details.iter().enumerate() {
        t.rows.push(vec![
            Cell::count(i as u64 + 1),
            Cell::long_text(&d.name, TEXT_WIDTH),
            Cell::text(d.op_type.as_str()),
            Cell::count(d.group as u64 + 1),
            Cell::long_text(&d.reason, 2 * TEXT_WIDTH),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse;
    use crate::random::random_graph;
    use crate::transformer::{transformer_block, TransformerConfig};
    use table::SortBy;

    #[test]
    fn transformer_tables_match_the_report() {
        let g = transformer_block(TransformerConfig::default()).unwrap();
        let r = analyse(&g).report(&g);
        let groups = groups_table(&r);
        assert_eq!(groups.rows.len(), r.group_details.len());
        for (row, d) in groups.rows.iter().zip(&r.group_details) {
            assert_eq!(row[2].sort as usize, d.ops.len());
            assert_eq!(row[3].exact, d.ops.join(", "));
            assert_eq!(row[4].exact, d.unfused.total.to_string());
            assert_eq!(row[7].exact, d.fused.total.to_string());
        }
        // The groups' fused bytes add up to the report's total.
        let fused: u64 = groups.rows.iter().map(|row| row[7].exact.parse::<u64>().unwrap()).sum();
        assert_eq!(fused, r.fused.total);
        let ops = ops_table(&r);
        assert_eq!(ops.rows.len(), g.len());
        let softmax = ops.rows.iter().find(|row| row[1].text == "softmax").unwrap();
        assert_eq!(softmax[2].text, "reduction");
        assert_eq!(softmax[4].exact, r.op_details.iter().find(|d| d.name == "softmax").unwrap().reason);
    }

    #[test]
    fn a_100k_op_table_sorts_and_filters_every_row() {
        let g = random_graph(100_000, 3);
        let r = analyse(&g).report(&g);
        let ops = ops_table(&r);
        assert_eq!(ops.rows.len(), 100_000);
        // Largest group number first: the last op's group leads, every row is kept.
        let by_group = ops.view(Some(SortBy { column: 3, descending: true }), "");
        assert_eq!(by_group.len(), 100_000);
        assert!(by_group.windows(2).all(|w| ops.rows[w[0]][3].sort >= ops.rows[w[1]][3].sort));
        assert_eq!(ops.rows[by_group[0]][3].sort as usize, r.group_details.len());
        // A filter on a name finds that op (and those whose names contain it).
        let hits = ops.view(None, "op99999");
        assert_eq!(hits, vec![99_999]);
        let matmuls = ops.view(None, "a matmul always starts");
        assert!(!matmuls.is_empty() && matmuls.iter().all(|&i| ops.rows[i][2].text == "matmul"));
    }
}
