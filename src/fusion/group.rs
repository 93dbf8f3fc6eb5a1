//! Fusion groups, formed as `docs/fusion-rules.md` ("Groups") states.
//!
//! The no-cycle test asks whether another candidate group is reachable from the candidate
//! through the data edges between groups. A plain graph search per op would make grouping
//! quadratic on long graphs, so the group graph keeps a topological numbering up to date
//! (Pearce–Kelly dynamic topological order): a group can only reach groups numbered after it,
//! searches never leave the numbered window between source and target, and most tests end at
//! once because the target is numbered before the source.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::graph::{OpGraph, OpId, OpType};

/// Index of a group, in the order groups were started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GroupId(pub u32);

impl GroupId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Why a candidate group was not joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rejection {
    /// The group holds a reduction, which closes it.
    ClosedByReduction { group: GroupId },
    /// A reduction may not join a group that holds a matmul.
    ReductionAfterMatmul { group: GroupId },
    /// Joining would make a cycle: the other candidate `reachable` is reachable from `group`.
    WouldCycle { group: GroupId, reachable: GroupId },
}

/// How an op came to be in its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A matmul always starts a new group.
    StartedMatmul,
    /// No input is produced by an op, so there was no candidate group.
    StartedNoCandidate,
    /// Every candidate was rejected (see the rejections).
    StartedAllRejected,
    /// Joined this candidate group.
    Joined { group: GroupId },
}

/// The grouping decision for one op: its outcome and every candidate it passed over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub outcome: Outcome,
    pub rejected: Vec<Rejection>,
}

impl Decision {
    /// One sentence saying why the op is where it is, naming groups as people count them
    /// (`group 1` is the first); written where it is displayed, without a `String` per op.
    pub fn explain(&self) -> Explanation<'_> {
        Explanation(self)
    }
}

/// [`Decision::explain`]'s sentence.
pub struct Explanation<'a>(&'a Decision);

/// A group as the sentence names it.
struct Named(GroupId);

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group {}", self.0 .0 as u64 + 1)
    }
}

impl fmt::Display for Explanation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let passed_over = |f: &mut fmt::Formatter<'_>| {
            for (i, r) in d.rejected.iter().enumerate() {
                if i > 0 {
                    f.write_str("; ")?;
                }
                match *r {
                    Rejection::ClosedByReduction { group } => {
                        write!(f, "{} holds a reduction, which closes its group", Named(group))?
                    }
                    Rejection::ReductionAfterMatmul { group } => {
                        write!(f, "{} holds a matmul, and a reduction may not join one", Named(group))?
                    }
                    Rejection::WouldCycle { group, reachable } => write!(
                        f,
                        "joining {} would make a cycle ({} is reachable from it)",
                        Named(group),
                        Named(reachable)
                    )?,
                }
            }
            Ok(())
        };
        match d.outcome {
            Outcome::StartedMatmul => f.write_str("a matmul always starts a new group"),
            Outcome::StartedNoCandidate => f.write_str("started a new group: none of its inputs is produced by an op"),
            Outcome::StartedAllRejected => {
                f.write_str("started a new group: ")?;
                passed_over(f)
            }
            Outcome::Joined { group } if d.rejected.is_empty() => {
                write!(f, "joined {}, the first group that produces one of its inputs", Named(group))
            }
            Outcome::Joined { group } => {
                write!(f, "joined {}: ", Named(group))?;
                passed_over(f)
            }
        }
    }
}

/// One fusion group: its ops in processing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub ops: Vec<OpId>,
    pub has_matmul: bool,
    pub has_reduction: bool,
}

/// The grouping of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouping {
    pub groups: Vec<Group>,
    /// Group of each op, indexed by [`OpId`].
    pub op_group: Vec<GroupId>,
    /// Decision for each op, indexed by [`OpId`].
    pub decisions: Vec<Decision>,
}

/// Groups the ops of `graph` in its processing order.
pub fn group(graph: &OpGraph) -> Grouping {
    let n = graph.len();
    let unset = GroupId(u32::MAX);
    let mut op_group = vec![unset; n];
    let placeholder = Decision { outcome: Outcome::StartedNoCandidate, rejected: Vec::new() };
    let mut decisions: Vec<Decision> = vec![placeholder; n];
    let mut groups: Vec<Group> = Vec::new();
    let mut dag = GroupDag::default();
    let mut candidates: Vec<GroupId> = Vec::new();
    // The last op that listed each group as a candidate: an op may read 100,000 tensors of as
    // many groups, and searching the candidates so far for each would be quadratic.
    let mut listed_by: Vec<OpId> = Vec::new();

    for &id in graph.order() {
        let op = graph.op(id);
        candidates.clear();
        for &t in &op.inputs {
            if let Some(p) = graph.producer(t) {
                let g = op_group[p.index()];
                if listed_by[g.index()] != id {
                    listed_by[g.index()] = id;
                    candidates.push(g);
                }
            }
        }
        if op.op_type != OpType::Matmul {
            dag.set_targets(&candidates);
        }
        let mut rejected = Vec::new();
        let mut outcome = if op.op_type == OpType::Matmul {
            Outcome::StartedMatmul
        } else if candidates.is_empty() {
            Outcome::StartedNoCandidate
        } else {
            Outcome::StartedAllRejected
        };
        if op.op_type != OpType::Matmul {
            for &g in &candidates {
                let grp = &groups[g.index()];
                let type_rejection = match op.op_type {
                    OpType::Elementwise | OpType::Reshape if grp.has_reduction => {
                        Some(Rejection::ClosedByReduction { group: g })
                    }
                    OpType::Reduction if grp.has_reduction => Some(Rejection::ClosedByReduction { group: g }),
                    OpType::Reduction if grp.has_matmul => Some(Rejection::ReductionAfterMatmul { group: g }),
                    _ => None,
                };
                if let Some(r) = type_rejection {
                    rejected.push(r);
                    continue;
                }
                if let Some(reachable) = dag.reaches_any(g) {
                    rejected.push(Rejection::WouldCycle { group: g, reachable });
                    continue;
                }
                outcome = Outcome::Joined { group: g };
                break;
            }
        }
        let g = match outcome {
            Outcome::Joined { group } => group,
            _ => {
                let g = GroupId(groups.len() as u32);
                groups.push(Group { ops: Vec::new(), has_matmul: false, has_reduction: false });
                listed_by.push(OpId(u32::MAX));
                dag.add_node();
                g
            }
        };
        let grp = &mut groups[g.index()];
        grp.ops.push(id);
        grp.has_matmul |= op.op_type == OpType::Matmul;
        grp.has_reduction |= op.op_type == OpType::Reduction;
        op_group[id.index()] = g;
        for &c in &candidates {
            if c != g {
                dag.add_edge(c, g);
            }
        }
        decisions[id.index()] = Decision { outcome, rejected };
    }
    Grouping { groups, op_group, decisions }
}

/// The data edges between groups, with a topological numbering kept up to date as edges are
/// added (Pearce & Kelly, "A dynamic topological sort algorithm for directed acyclic graphs",
/// JEA 2007). `ord` is always a permutation of `0..len`.
#[derive(Debug, Default)]
struct GroupDag {
    /// Adjacency as singly linked lists in one arena per direction: `out_head[v]` is the
    /// first out-edge of `v` (or `NONE`), `out_edges[e] = (target, next)`. With hundreds of
    /// thousands of groups, one `Vec` per group would make the allocator the bottleneck.
    out_head: Vec<u32>,
    out_edges: Vec<(u32, u32)>,
    in_head: Vec<u32>,
    in_edges: Vec<(u32, u32)>,
    ord: Vec<u32>,
    mark: Vec<u32>,
    epoch: u32,
    /// The current op's candidates ([`GroupDag::set_targets`]): marked with `target_epoch`,
    /// and the highest number among them.
    target: Vec<u32>,
    target_epoch: u32,
    target_upper: u32,
    stack: Vec<u32>,
    forward: Vec<u32>,
    backward: Vec<u32>,
    slots: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// Iterates the targets of one node's edge list.
fn edges(head: u32, arena: &[(u32, u32)]) -> impl Iterator<Item = u32> + '_ {
    let mut e = head;
    std::iter::from_fn(move || {
        (e != NONE).then(|| {
            let (to, next) = arena[e as usize];
            e = next;
            to
        })
    })
}

impl GroupDag {
    fn add_node(&mut self) {
        let n = self.ord.len() as u32;
        self.out_head.push(NONE);
        self.in_head.push(NONE);
        self.ord.push(n);
        self.mark.push(0);
        self.target.push(0);
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Marks the candidates of the op being grouped, once for all its [`GroupDag::reaches_any`]
    /// tests (no edge is added in between, so the numbering holds): marking them per test would
    /// make an op with many candidates quadratic.
    fn set_targets(&mut self, candidates: &[GroupId]) {
        self.target_epoch = self.target_epoch.wrapping_add(1);
        if self.target_epoch == 0 {
            self.target.iter_mut().for_each(|m| *m = 0);
            self.target_epoch = 1;
        }
        for &c in candidates {
            self.target[c.index()] = self.target_epoch;
        }
        self.target_upper = candidates.iter().map(|c| self.ord[c.index()]).max().unwrap_or(0);
    }

    /// The first of the candidates ([`GroupDag::set_targets`]) other than `from` reachable from
    /// `from`, if any.
    fn reaches_any(&mut self, from: GroupId) -> Option<GroupId> {
        // Only candidates numbered after `from` can be reached from it.
        let upper = self.target_upper;
        if upper <= self.ord[from.index()] {
            return None;
        }
        let epoch = self.next_epoch();
        let target_epoch = self.target_epoch;
        let mut found: Option<u32> = None;
        self.stack.clear();
        self.stack.push(from.0);
        self.mark[from.index()] = epoch;
        while let Some(v) = self.stack.pop() {
            for w in edges(self.out_head[v as usize], &self.out_edges) {
                let wi = w as usize;
                if self.mark[wi] == epoch || self.ord[wi] > upper {
                    continue;
                }
                if self.target[wi] == target_epoch {
                    found = Some(w);
                    break;
                }
                self.mark[wi] = epoch;
                self.stack.push(w);
            }
            if found.is_some() {
                break;
            }
        }
        // Several candidates may be reachable; report the first in candidate order among
        // those we can confirm cheaply (the one found). The decision only needs one.
        found.map(GroupId)
    }

    /// Adds the edge `x -> y`, which the caller guarantees closes no cycle.
    fn add_edge(&mut self, x: GroupId, y: GroupId) {
        let (x, y) = (x.0, y.0);
        let head = self.out_head[x as usize];
        if head != NONE && self.out_edges[head as usize].0 == y {
            return;
        }
        self.out_edges.push((y, head));
        self.out_head[x as usize] = (self.out_edges.len() - 1) as u32;
        self.in_edges.push((x, self.in_head[y as usize]));
        self.in_head[y as usize] = (self.in_edges.len() - 1) as u32;
        let (lb, ub) = (self.ord[y as usize], self.ord[x as usize]);
        if lb > ub {
            return;
        }
        // y is numbered before x: renumber the affected region so that x comes before y.
        let epoch = self.next_epoch();
        self.forward.clear();
        self.stack.clear();
        self.stack.push(y);
        self.mark[y as usize] = epoch;
        while let Some(v) = self.stack.pop() {
            self.forward.push(v);
            for w in edges(self.out_head[v as usize], &self.out_edges) {
                if self.mark[w as usize] != epoch && self.ord[w as usize] < ub {
                    self.mark[w as usize] = epoch;
                    self.stack.push(w);
                }
            }
        }
        self.backward.clear();
        self.stack.push(x);
        self.mark[x as usize] = epoch;
        while let Some(v) = self.stack.pop() {
            self.backward.push(v);
            for w in edges(self.in_head[v as usize], &self.in_edges) {
                if self.mark[w as usize] != epoch && self.ord[w as usize] > lb {
                    self.mark[w as usize] = epoch;
                    self.stack.push(w);
                }
            }
        }
        let ord = &mut self.ord;
        self.forward.sort_unstable_by_key(|&v| ord[v as usize]);
        self.backward.sort_unstable_by_key(|&v| ord[v as usize]);
        self.slots.clear();
        self.slots.extend(self.backward.iter().chain(self.forward.iter()).map(|&v| ord[v as usize]));
        self.slots.sort_unstable();
        for (&v, &slot) in self.backward.iter().chain(self.forward.iter()).zip(&self.slots) {
            ord[v as usize] = slot;
        }
    }
}
