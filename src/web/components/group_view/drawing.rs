//! What the group view draws, computed once per analysis: the graph of groups, each group's
//! ops, the layout (none above [`MAX_DRAWN_OPS`] ops) and the op table; and the zoom steps.

use std::collections::HashMap;

use draw::group_graph::{group_drawing, group_graph, GroupGraph, MAX_DRAWN_OPS};
use draw::layout::Layout;
use fusion::tables::ops_table;
use fusion::{AnalysisReport, OpGraph};
use page::ByAddress;
use table::DataTable;

/// What the drawing needs, computed once per analysis.
pub(super) struct Drawing {
    pub groups: GroupGraph,
    /// Op indices (file order) of each group, in the group's order.
    pub members: Vec<Vec<usize>>,
    /// None above [`MAX_DRAWN_OPS`].
    pub layout: Option<Layout>,
    pub ops: ByAddress<DataTable>,
}

pub(super) fn drawing(graph: &OpGraph, report: &AnalysisReport) -> Drawing {
    let op_group: Vec<usize> = report.op_details.iter().map(|d| d.group).collect();
    let index: HashMap<&str, usize> = report.op_details.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    let members: Vec<Vec<usize>> = report
        .group_details
        .iter()
        .map(|g| g.ops.iter().filter_map(|name| index.get(name.as_str()).copied()).collect())
        .collect();
    let groups = group_graph(graph, &op_group);
    let layout = (graph.len() <= MAX_DRAWN_OPS).then(|| {
        let sizes: Vec<usize> = members.iter().map(Vec::len).collect();
        group_drawing(&groups, &sizes)
    });
    Drawing { groups, members, layout, ops: ByAddress::new(ops_table(report)) }
}

/// Zoom steps of the drawing.
pub(super) const ZOOMS: [f64; 7] = [0.4, 0.55, 0.7, 0.85, 1.0, 1.25, 1.5];
pub(super) const DEFAULT_ZOOM: usize = 4;
