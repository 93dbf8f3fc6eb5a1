//! Snapshots of the tables people read: the transformer block's report and why each op is
//! in its group.

use fusionscope::fusion::transformer::{transformer_block, TransformerConfig};
use fusionscope::fusion::{analyse, parse_graph, summary};
use fusionscope::table::Table;

fn reasons_table(report: &fusionscope::fusion::AnalysisReport) -> String {
    let mut t = Table::new(&["op", "type", ">group", "why"]);
    for op in &report.op_details {
        t.row([op.name.clone(), op.op_type.to_string(), (op.group + 1).to_string(), op.reason.clone()]);
    }
    t.to_text()
}

#[test]
fn transformer_report() {
    let g = transformer_block(TransformerConfig::default()).unwrap();
    let r = analyse(&g).report(&g);
    insta::assert_snapshot!("transformer_report", summary::text_report(&r));
    insta::assert_snapshot!("transformer_reasons", reasons_table(&r));
    insta::assert_snapshot!("transformer_markdown", summary::markdown_report(&r));
}

/// `c` reads `a`'s group (G1) and `b`'s group (G2), and G2 reads G1's output, so joining
/// G1 would put G1 -> G2 -> G1 on a cycle: the rule must pass over G1 and join G2.
#[test]
fn cycle_rule_is_explained() {
    let g = parse_graph(
        r#"[
        {"name": "a", "op_type": "matmul", "inputs": ["x", "w"], "output": "ya", "shape": [8, 8], "bytes_per_element": 2},
        {"name": "b", "op_type": "matmul", "inputs": ["ya", "w2"], "output": "yb", "shape": [8, 8], "bytes_per_element": 2},
        {"name": "c", "op_type": "elementwise", "inputs": ["ya", "yb"], "output": "yc", "shape": [8, 8], "bytes_per_element": 2}
    ]"#,
    )
    .unwrap();
    let r = analyse(&g).report(&g);
    assert_eq!(r.groups, vec![vec!["a".to_string()], vec!["b".to_string(), "c".to_string()]]);
    insta::assert_snapshot!("cycle_reasons", reasons_table(&r));
}
