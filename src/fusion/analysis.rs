//! The whole analysis of one graph, and its machine-readable form (the JSON object of
//! `docs/fusion-rules.md`).

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use super::graph::{OpGraph, OpId, OpType};
use super::group::{group, Decision, Grouping};
use super::traffic::{traffic, Traffic, TrafficReport};

/// Grouping and traffic of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub grouping: Grouping,
    pub traffic: TrafficReport,
}

/// Groups the graph and computes its traffic.
pub fn analyse(graph: &OpGraph) -> Analysis {
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

    /// The documented object plus per-group and per-op details, as owned data (the page
    /// keeps it and sends it between threads; the command line writes [`BorrowedReport`] instead).
    pub fn report(&self, graph: &OpGraph) -> AnalysisReport {
        let view = self.view(graph);
        let names = |ops: &[OpId]| view.names(ops).map(String::from).collect::<Vec<_>>();
        AnalysisReport {
            groups: self.grouping.groups.iter().map(|g| names(&g.ops)).collect(),
            unfused: view.unfused(),
            fused: view.fused(),
            savings_pct: self.savings_pct(),
            assumed_tensors: graph.assumed_tensors().into_iter().map(String::from).collect(),
            group_details: (0..self.grouping.groups.len())
                .map(|g| GroupDetail {
                    ops: names(&self.grouping.groups[g].ops),
                    kind: view.group_kind(g),
                    unfused: view.group_unfused(g),
                    fused: view.group_fused(g),
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
                    reason: self.grouping.decisions[i].explain().to_string(),
                    decision: self.grouping.decisions[i].clone(),
                })
                .collect(),
            processing_order: names(graph.order()),
        }
    }

    /// The report read in place from the graph and this analysis.
    pub fn view<'a>(&'a self, graph: &'a OpGraph) -> BorrowedReport<'a> {
        BorrowedReport { graph, analysis: self }
    }
}

/// The report of [`Analysis::report`] without copying it out: the figures are computed and
/// the names borrowed as they are read, so that a million-op graph can be written (as JSON,
/// [`BorrowedReport::json`], or as tables) as fast as it is read.
#[derive(Clone, Copy)]
pub struct BorrowedReport<'a> {
    graph: &'a OpGraph,
    analysis: &'a Analysis,
}

impl<'a> BorrowedReport<'a> {
    pub fn graph(&self) -> &'a OpGraph {
        self.graph
    }

    pub fn analysis(&self) -> &'a Analysis {
        self.analysis
    }

    /// Names of `ops`.
    pub fn names<'b>(&self, ops: &'b [OpId]) -> impl Iterator<Item = &'a str> + Clone + 'b
    where
        'a: 'b,
    {
        let graph = self.graph;
        ops.iter().map(move |&o| graph.op(o).name.as_str())
    }

    pub fn unfused(&self) -> TrafficFigures {
        TrafficFigures::new(self.analysis.traffic.unfused, 0)
    }

    pub fn fused(&self) -> TrafficFigures {
        TrafficFigures::new(self.analysis.traffic.fused, self.analysis.saved_bytes())
    }

    pub fn group_kind(&self, g: usize) -> GroupKind {
        let group = &self.analysis.grouping.groups[g];
        if group.has_matmul {
            GroupKind::Matmul
        } else if group.has_reduction {
            GroupKind::Reduction
        } else {
            GroupKind::Elementwise
        }
    }

    pub fn group_unfused(&self, g: usize) -> TrafficFigures {
        TrafficFigures::new(self.analysis.traffic.per_group[g].unfused, 0)
    }

    pub fn group_fused(&self, g: usize) -> TrafficFigures {
        let t = self.analysis.traffic.per_group[g];
        TrafficFigures::new(t.fused, t.unfused.total().saturating_sub(t.fused.total()))
    }

    /// The JSON object of `docs/fusion-rules.md`: the contract's keys, and with `details` the
    /// keys that extend it (`group_details`, `op_details`, `processing_order`). With details it
    /// serialises exactly as the [`AnalysisReport`] of the same analysis.
    pub fn json(self, details: bool) -> ReportJson<'a> {
        ReportJson { view: self, details }
    }
}

/// [`BorrowedReport::json`].
pub struct ReportJson<'a> {
    view: BorrowedReport<'a>,
    details: bool,
}

/// Graphs of up to this many ops are written as indented JSON, larger ones compactly: people
/// read small results, and programs (jq, Python) read them all; indentation would double a
/// large result for no reader.
pub const PRETTY_JSON_MAX_OPS: usize = 10_000;

/// Writes `value`, the result for a graph of `ops` ops, and a newline: indented up to
/// [`PRETTY_JSON_MAX_OPS`] ops, compact above. The command line and the page's JSON export
/// both write this way, so that they give the same bytes.
pub fn write_json<W: std::io::Write>(mut out: W, value: &impl Serialize, ops: usize) -> serde_json::Result<()> {
    if ops <= PRETTY_JSON_MAX_OPS {
        serde_json::to_writer_pretty(&mut out, value)?;
    } else {
        serde_json::to_writer(&mut out, value)?;
    }
    out.write_all(b"\n").map_err(serde_json::Error::io)
}

/// [`write_json`] of an owned report, as text (the page's JSON export).
pub fn report_json_text(report: &AnalysisReport) -> String {
    let mut out = Vec::new();
    write_json(&mut out, report, report.op_details.len()).expect("a report serialises to memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Serialises the items of an iterator made anew for each use.
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// A `Display` value as a JSON string.
struct Text<D>(D);

impl<D: std::fmt::Display> Serialize for Text<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl Serialize for ReportJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.view;
        let (graph, a) = (v.graph, v.analysis);
        let groups = &a.grouping.groups;
        let mut m = s.serialize_struct("AnalysisReport", if self.details { 8 } else { 5 })?;
        m.serialize_field("groups", &Seq(|| groups.iter().map(|g| Seq(|| v.names(&g.ops)))))?;
        m.serialize_field("unfused", &v.unfused())?;
        m.serialize_field("fused", &v.fused())?;
        m.serialize_field("savings_pct", &a.savings_pct())?;
        m.serialize_field("assumed_tensors", &graph.assumed_tensors())?;
        if self.details {
            m.serialize_field(
                "group_details",
                &Seq(|| {
                    (0..groups.len()).map(move |g| GroupDetailRef {
                        ops: Seq(move || v.names(&groups[g].ops)),
                        kind: v.group_kind(g),
                        unfused: v.group_unfused(g),
                        fused: v.group_fused(g),
                    })
                }),
            )?;
            m.serialize_field(
                "op_details",
                &Seq(|| {
                    graph.ops().iter().enumerate().map(|(i, op)| OpDetailRef {
                        name: &op.name,
                        op_type: op.op_type,
                        group: a.grouping.op_group[i].0 as usize,
                        reason: Text(a.grouping.decisions[i].explain()),
                        decision: &a.grouping.decisions[i],
                    })
                }),
            )?;
            m.serialize_field("processing_order", &Seq(|| v.names(graph.order())))?;
        }
        m.end()
    }
}

/// [`GroupDetail`] borrowed: same fields, same order.
#[derive(Serialize)]
struct GroupDetailRef<O> {
    ops: O,
    kind: GroupKind,
    unfused: TrafficFigures,
    fused: TrafficFigures,
}

/// [`OpDetail`] borrowed: same fields, same order.
#[derive(Serialize)]
struct OpDetailRef<'a, R> {
    name: &'a str,
    op_type: OpType,
    group: usize,
    reason: R,
    decision: &'a Decision,
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

impl GroupKind {
    /// The kind as JSON and the tables write it: `matmul`, `reduction`, `elementwise`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKind::Matmul => "matmul",
            GroupKind::Reduction => "reduction",
            GroupKind::Elementwise => "elementwise",
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::random_graph;
    use crate::summary::{text_report, write_text_report};
    use crate::transformer::{transformer_block, TransformerConfig};

    fn graphs() -> Vec<OpGraph> {
        vec![
            transformer_block(TransformerConfig::default()).unwrap(),
            crate::parse_graph(include_str!("../../tests/data/graphs/worked_example.json")).unwrap(),
            crate::parse_graph("[]").unwrap(),
            random_graph(3_000, 11),
        ]
    }

    /// The command line writes the view; the page keeps the owned report: with details they
    /// must be the same JSON, indented or not, and the same tables.
    #[test]
    fn the_view_writes_what_the_report_holds() {
        for g in graphs() {
            let a = analyse(&g);
            let (report, view) = (a.report(&g), a.view(&g));
            assert_eq!(serde_json::to_string(&view.json(true)).unwrap(), serde_json::to_string(&report).unwrap());
            assert_eq!(
                serde_json::to_string_pretty(&view.json(true)).unwrap(),
                serde_json::to_string_pretty(&report).unwrap()
            );
            let mut brief = serde_json::to_value(&report).unwrap();
            for k in ["group_details", "op_details", "processing_order"] {
                brief.as_object_mut().unwrap().remove(k);
            }
            assert_eq!(serde_json::to_value(view.json(false)).unwrap(), brief);
            let mut streamed = Vec::new();
            write_text_report(&mut streamed, &view).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), text_report(&report));
        }
    }

    /// Some ops of a random graph pass over groups: the sentences name them (1-based).
    #[test]
    fn reasons_name_the_groups_passed_over() {
        let g = random_graph(3_000, 11);
        let r = analyse(&g).report(&g);
        let passed = r.op_details.iter().find(|d| !d.decision.rejected.is_empty()).expect("a rejection");
        let first = match passed.decision.rejected[0] {
            crate::group::Rejection::ClosedByReduction { group }
            | crate::group::Rejection::ReductionAfterMatmul { group }
            | crate::group::Rejection::WouldCycle { group, .. } => group,
        };
        assert!(passed.reason.contains(&format!("group {}", first.0 + 1)), "{}", passed.reason);
    }

    #[test]
    fn json_is_indented_up_to_the_limit() {
        let small = random_graph(PRETTY_JSON_MAX_OPS, 1);
        let a = analyse(&small);
        let mut out = Vec::new();
        write_json(&mut out, &a.view(&small).json(false), small.len()).unwrap();
        assert!(out.ends_with(b"\n}\n"));
        let large = random_graph(PRETTY_JSON_MAX_OPS + 1, 1);
        let a = analyse(&large);
        out.clear();
        write_json(&mut out, &a.view(&large).json(false), large.len()).unwrap();
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(out.starts_with(b"{\"groups\":[[\""));
    }
}
