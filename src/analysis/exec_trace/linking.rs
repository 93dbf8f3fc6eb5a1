//! An execution trace's nodes linked to a trace's CPU ops: by record-function id and name, or,
//! where the two share no ids, by op order in the same process ([`super::by_order`]).

use rustc_hash::FxHashMap;

use super::by_order;
use super::ExecTrace;
use trace::Trace;

/// How an ET's nodes link to a Kineto trace's CPU ops.
#[derive(Debug, Clone, PartialEq)]
pub struct EtLink {
    /// Per `trace.cpu_ops` index, the linked node's index.
    pub by_cpu_op: Vec<Option<usize>>,
    /// The ET's op nodes, and how many of them a CPU op links to.
    pub ops: u64,
    pub linked_ops: u64,
    /// Linked by op order ([`by_order`]): the two share no record-function ids.
    pub by_order: bool,
}

/// Links `et`'s nodes to `trace`'s CPU ops by `rf_id` = `External id` and the same name; when
/// the two share no ids (PyTorch before 2.1), by op order if the ET is of the trace's process
/// ([`by_order`]).
pub fn link(trace: &Trace, et: &ExecTrace) -> EtLink {
    let by_id = link_by_id(trace, et);
    if by_id.linked_ops > 0 {
        return by_id;
    }
    match by_order::link_by_order(trace, et) {
        Some(by_cpu_op) => {
            let linked: rustc_hash::FxHashSet<usize> = by_cpu_op.iter().flatten().copied().collect();
            EtLink { by_cpu_op, ops: by_id.ops, linked_ops: linked.len() as u64, by_order: !linked.is_empty() }
        }
        None => by_id,
    }
}

fn link_by_id(trace: &Trace, et: &ExecTrace) -> EtLink {
    let mut by_rf: FxHashMap<u64, usize> = FxHashMap::default();
    let mut ops = 0u64;
    for (i, n) in et.nodes.iter().enumerate() {
        if n.is_op() {
            ops += 1;
            if let Some(rf) = n.rf_id {
                by_rf.entry(rf).or_insert(i);
            }
        }
    }
    // An ET of another run still shares small ids with the trace: when fewer than one in ten
    // of the ids found name the same op, nothing is linked.
    let (mut found, mut agree) = (0usize, 0usize);
    for op in &trace.cpu_ops {
        if let Some(&i) = by_rf.get(&op.external_id) {
            found += 1;
            agree += usize::from(et.nodes[i].name == trace.name(op.name));
        }
    }
    if agree.saturating_mul(10) < found {
        return EtLink { by_cpu_op: vec![None; trace.cpu_ops.len()], ops, linked_ops: 0, by_order: false };
    }
    let mut linked_nodes = rustc_hash::FxHashSet::default();
    let by_cpu_op: Vec<Option<usize>> = trace
        .cpu_ops
        .iter()
        .map(|op| {
            let i = *by_rf.get(&op.external_id)?;
            (et.nodes[i].name == trace.name(op.name)).then(|| {
                linked_nodes.insert(i);
                i
            })
        })
        .collect();
    EtLink { by_cpu_op, ops, linked_ops: linked_nodes.len() as u64, by_order: false }
}
