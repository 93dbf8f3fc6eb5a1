//! The processing order: Kahn's algorithm, always taking the ready op that comes first in the
//! file. When the file order is already topological this returns it unchanged.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::error::GraphError;
use super::graph::{Op, OpId, Tensor};

/// Topological order of `ops`, or the ops on one cycle.
pub(crate) fn processing_order(ops: &[Op], tensors: &[Tensor]) -> Result<Vec<OpId>, GraphError> {
    let n = ops.len();
    // consumers[t] lists the ops reading tensor t once per reading (an op reading t twice is
    // listed twice and counted twice in its in-degree, which keeps the two consistent).
    let mut in_degree = vec![0u32; n];
    let mut consumers: Vec<Vec<OpId>> = vec![Vec::new(); tensors.len()];
    for (i, op) in ops.iter().enumerate() {
        for &t in &op.inputs {
            if tensors[t.index()].producer.is_some() {
                in_degree[i] += 1;
                consumers[t.index()].push(OpId(i as u32));
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<u32>> =
        (0..n as u32).filter(|&i| in_degree[i as usize] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(OpId(i));
        for &c in &consumers[ops[i as usize].output.index()] {
            let d = &mut in_degree[c.index()];
            *d -= 1;
            if *d == 0 {
                ready.push(Reverse(c.0));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    Err(GraphError::Cycle { ops: find_cycle(ops, tensors, &in_degree) })
}

/// Names the ops of one cycle among the ops Kahn's algorithm could not order (those with a
/// remaining in-degree). Walking backwards from such an op along unprocessed producers must
/// revisit an op; the revisited stretch is a cycle.
fn find_cycle(ops: &[Op], tensors: &[Tensor], in_degree: &[u32]) -> Vec<String> {
    let stuck = |id: OpId| in_degree[id.index()] > 0;
    let start = (0..ops.len()).map(|i| OpId(i as u32)).find(|&i| stuck(i)).expect("a cycle leaves an op unordered");
    let mut seen_at = vec![usize::MAX; ops.len()];
    let mut path: Vec<OpId> = Vec::new();
    let mut cur = start;
    loop {
        if seen_at[cur.index()] != usize::MAX {
            let mut cycle: Vec<OpId> = path[seen_at[cur.index()]..].to_vec();
            // We walked against the data flow; report it along the data flow.
            cycle.reverse();
            // Start at the op that comes first in the file, so the message is stable.
            let first = cycle.iter().enumerate().min_by_key(|(_, id)| id.0).map(|(k, _)| k).unwrap_or(0);
            cycle.rotate_left(first);
            return cycle.into_iter().map(|id| ops[id.index()].name.clone()).collect();
        }
        seen_at[cur.index()] = path.len();
        path.push(cur);
        // An unordered op has at least one input produced by another unordered op.
        cur = ops[cur.index()]
            .inputs
            .iter()
            .filter_map(|&t| tensors[t.index()].producer)
            .find(|&p| stuck(p))
            .expect("an unordered op reads an unordered producer");
    }
}
