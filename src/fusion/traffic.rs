//! Global-memory traffic, unfused and fused, as `docs/fusion-rules.md` ("Memory traffic")
//! defines it.
//!
//! Sums here are plain additions: every figure is at most the graph's unfused total, which
//! [`crate::GraphBuilder::build`] has checked fits in 64 bits (a graph whose traffic
//! does not is refused there, naming the op), so none can wrap.

use serde::Serialize;

use super::graph::{OpGraph, TensorId};
use super::group::{GroupId, Grouping};

/// Bytes read and written. `total` and `saved_by_fusion` are derived, never stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Traffic {
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl Traffic {
    pub fn total(self) -> u64 {
        self.bytes_read + self.bytes_written
    }

    fn add(&mut self, other: Traffic) {
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
    }
}

/// Traffic of one group, both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupTraffic {
    /// What the group's ops cost one kernel each.
    pub unfused: Traffic,
    /// What the group costs as one kernel.
    pub fused: Traffic,
}

/// Traffic of a grouped graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficReport {
    pub unfused: Traffic,
    pub fused: Traffic,
    pub per_group: Vec<GroupTraffic>,
    /// Per tensor produced by an op: whether the fused graph writes it to memory.
    pub materialized: Vec<bool>,
}

/// Computes unfused and fused traffic. Linear in the number of op inputs.
pub fn traffic(graph: &OpGraph, grouping: &Grouping) -> TrafficReport {
    let nt = graph.tensors().len();
    // Distinct consumer ops per tensor, and whether one of them sits in another group than
    // the producer. `seen` remembers the last op that counted a tensor, so an op reading the
    // same tensor twice counts once.
    let mut consumers = vec![0u32; nt];
    let mut read_elsewhere = vec![false; nt];
    let mut seen = vec![u32::MAX; nt];
    let mut per_group = vec![GroupTraffic::default(); grouping.groups.len()];
    for (i, op) in graph.ops().iter().enumerate() {
        let g = grouping.op_group[i];
        let mut read = 0u64;
        for &t in &op.inputs {
            if seen[t.index()] == i as u32 {
                continue;
            }
            seen[t.index()] = i as u32;
            consumers[t.index()] += 1;
            read += graph.size(t);
            if let Some(p) = graph.producer(t) {
                if grouping.op_group[p.index()] != g {
                    read_elsewhere[t.index()] = true;
                }
            }
        }
        per_group[g.index()].unfused.add(Traffic { bytes_read: read, bytes_written: graph.size(op.output) });
    }

    let mut materialized = vec![false; nt];
    let mut group_seen = vec![u32::MAX; nt];
    for (gi, group) in grouping.groups.iter().enumerate() {
        let g = GroupId(gi as u32);
        let mut fused = Traffic::default();
        for &id in &group.ops {
            let op = graph.op(id);
            for &t in &op.inputs {
                if group_seen[t.index()] == gi as u32 || produced_in(graph, grouping, t, g) {
                    continue;
                }
                group_seen[t.index()] = gi as u32;
                fused.bytes_read += graph.size(t);
            }
            let out = op.output.index();
            if read_elsewhere[out] || consumers[out] != 1 {
                materialized[out] = true;
                fused.bytes_written += graph.size(op.output);
            }
        }
        per_group[gi].fused = fused;
    }

    let mut unfused = Traffic::default();
    let mut fused = Traffic::default();
    for g in &per_group {
        unfused.add(g.unfused);
        fused.add(g.fused);
    }
    TrafficReport { unfused, fused, per_group, materialized }
}

fn produced_in(graph: &OpGraph, grouping: &Grouping, t: TensorId, g: GroupId) -> bool {
    graph.producer(t).is_some_and(|p| grouping.op_group[p.index()] == g)
}
