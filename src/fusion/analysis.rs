//! The whole analysis of one graph, and its machine-readable form (the JSON object of
//! `docs/fusion-rules.md`).

use serde::{Deserialize, Serialize};

use super::graph::{OpGraph, OpType};
use super::group::{group, Decision, GroupId, Grouping};
use super::traffic::{traffic, Traffic, TrafficReport};

/// Grouping and traffic of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub grouping: Grouping,
    pub traffic: TrafficReport,
}

/// Groups the graph and computes its traffic.
pub fn analyze(graph: &OpGraph) -> Analysis {
    let grouping = group(graph);
    let traffic = traffic(graph, &grouping);
    Analysis { grouping, traffic }
}

impl Analysis {
    /// `unfused.total − fused.total`. Fusion never adds traffic (a group's fused figure is part
    /// of its unfused one; `tests/fusion_props.rs` checks it), so the subtraction never saturates.
    pub fn saved_bytes(&self) -> u64 {
        self.traffic.unfused.total().saturating_sub(self.traffic.fused.total())
    }

    /// `100 * saved / unfused.total`, 0 for an empty graph.
    pub fn savings_pct(&self) -> f64 {
        savings_pct(self.traffic.unfused.total(), self.traffic.fused.total())
    }

    /// The documented object plus per-group and per-op details.
    pub fn report(&self, graph: &OpGraph) -> AnalysisReport {
        let names = |g: &super::group::Group| g.ops.iter().map(|&o| graph.op(o).name.clone()).collect::<Vec<_>>();
        let group_name = |g: GroupId| format!("group {}", g.0 + 1);
        let saved = self.saved_bytes();
        AnalysisReport {
            groups: self.grouping.groups.iter().map(names).collect(),
            unfused: TrafficFigures::new(self.traffic.unfused, 0),
            fused: TrafficFigures::new(self.traffic.fused, saved),
            savings_pct: self.savings_pct(),
            assumed_tensors: graph.assumed_tensors().into_iter().map(String::from).collect(),
            group_details: self
                .grouping
                .groups
                .iter()
                .zip(&self.traffic.per_group)
                .map(|(g, t)| GroupDetail {
                    ops: names(g),
                    kind: if g.has_matmul {
                        GroupKind::Matmul
                    } else if g.has_reduction {
                        GroupKind::Reduction
                    } else {
                        GroupKind::Elementwise
                    },
                    unfused: TrafficFigures::new(t.unfused, 0),
                    fused: TrafficFigures::new(t.fused, t.unfused.total().saturating_sub(t.fused.total())),
                })
                .collect(),
            op_details: graph
                .ops()
                .iter()
                .enumerate()
                .map(|(i, op)| OpDetail {
                    name: op.name.clone(),
                    op_type: op.op_type,
                    group: self.grouping.op_group[i].0 as usize,
                    reason: self.grouping.decisions[i].explain(group_name),
                    decision: self.grouping.decisions[i].clone(),
                })
                .collect(),
            processing_order: graph.order().iter().map(|&o| graph.op(o).name.clone()).collect(),
        }
    }
}

pub fn savings_pct(unfused_total: u64, fused_total: u64) -> f64 {
    if unfused_total == 0 {
        0.0
    } else {
        100.0 * unfused_total.saturating_sub(fused_total) as f64 / unfused_total as f64
    }
}

/// Bytes read and written with their total and what fusion saved (0 on the unfused side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrafficFigures {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub total: u64,
    pub saved_by_fusion: u64,
}

impl TrafficFigures {
    pub fn new(t: Traffic, saved_by_fusion: u64) -> Self {
        TrafficFigures { bytes_read: t.bytes_read, bytes_written: t.bytes_written, total: t.total(), saved_by_fusion }
    }
}

/// What kind of kernel a group becomes, by its heaviest op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    Matmul,
    Reduction,
    Elementwise,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupDetail {
    pub ops: Vec<String>,
    pub kind: GroupKind,
    pub unfused: TrafficFigures,
    pub fused: TrafficFigures,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpDetail {
    pub name: String,
    pub op_type: OpType,
    /// 0-based index into `groups`.
    pub group: usize,
    /// Why the op is in its group, in words.
    pub reason: String,
    pub decision: Decision,
}

/// The machine-readable result: the keys `docs/fusion-rules.md` fixes first, then details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    pub groups: Vec<Vec<String>>,
    pub unfused: TrafficFigures,
    pub fused: TrafficFigures,
    pub savings_pct: f64,
    pub assumed_tensors: Vec<String>,
    pub group_details: Vec<GroupDetail>,
    pub op_details: Vec<OpDetail>,
    pub processing_order: Vec<String>,
}
