//! The processing order: Kahn's algorithm, always taking the ready op that comes first in the
//! file. When the file order is already topological this returns it unchanged.
//!
//! It works on plain indices ([`Dependencies`]) rather than on the graph's types, so that the
//! graph builds on it without the two depending on each other.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Which ops each op reads from, in compressed rows: op `i` reads the outputs of
/// `producers[starts[i]..starts[i + 1]]` (an op reading a tensor twice is listed twice).
pub(crate) struct Dependencies {
    pub starts: Vec<usize>,
    pub producers: Vec<u32>,
}

impl Dependencies {
    fn of(&self, op: usize) -> &[u32] {
        &self.producers[self.starts[op]..self.starts[op + 1]]
    }

    fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
}

/// Topological order of the ops (indices in file order), or the indices of the ops on one
/// cycle, along the data flow, starting at the one that comes first in the file.
pub(crate) fn processing_order(deps: &Dependencies) -> Result<Vec<u32>, Vec<u32>> {
    let n = deps.len();
    // Files are mostly written in a topological order already; then Kahn's algorithm (which
    // would take each op in turn, the first ready one) can be skipped.
    if (0..n).all(|i| deps.of(i).iter().all(|&p| (p as usize) < i)) {
        return Ok((0..n as u32).collect());
    }
    // Consumers of each op in compressed rows, built by counting (linear in the reads).
    let mut in_degree = vec![0u32; n];
    let mut consumer_starts = vec![0usize; n + 1];
    for &p in &deps.producers {
        consumer_starts[p as usize + 1] += 1;
    }
    for i in 0..n {
        consumer_starts[i + 1] += consumer_starts[i];
    }
    let mut fill = consumer_starts.clone();
    let mut consumers = vec![0u32; deps.producers.len()];
    for (i, degree) in in_degree.iter_mut().enumerate() {
        for &p in deps.of(i) {
            *degree += 1;
            consumers[fill[p as usize]] = i as u32;
            fill[p as usize] += 1;
        }
    }
    let mut ready: BinaryHeap<Reverse<u32>> =
        (0..n as u32).filter(|&i| in_degree[i as usize] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &consumers[consumer_starts[i as usize]..consumer_starts[i as usize + 1]] {
            let d = &mut in_degree[c as usize];
            *d -= 1;
            if *d == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    Err(find_cycle(deps, &in_degree))
}

/// One cycle among the ops Kahn's algorithm could not order (those with a remaining
/// in-degree). Walking backwards from such an op along unordered producers must revisit an
/// op; the revisited stretch is a cycle.
fn find_cycle(deps: &Dependencies, in_degree: &[u32]) -> Vec<u32> {
    let stuck = |op: u32| in_degree[op as usize] > 0;
    let start = (0..deps.len() as u32).find(|&i| stuck(i)).expect("a cycle leaves an op unordered");
    let mut seen_at = vec![usize::MAX; deps.len()];
    let mut path: Vec<u32> = Vec::new();
    let mut cur = start;
    loop {
        if seen_at[cur as usize] != usize::MAX {
            let mut cycle: Vec<u32> = path[seen_at[cur as usize]..].to_vec();
            // We walked against the data flow; report it along the data flow.
            cycle.reverse();
            // Start at the op that comes first in the file, so the message is stable.
            let first = cycle.iter().enumerate().min_by_key(|(_, &id)| id).map(|(k, _)| k).unwrap_or(0);
            cycle.rotate_left(first);
            return cycle;
        }
        seen_at[cur as usize] = path.len();
        path.push(cur);
        // An unordered op has at least one input produced by another unordered op.
        cur = deps
            .of(cur as usize)
            .iter()
            .copied()
            .find(|&p| stuck(p))
            .expect("an unordered op reads an unordered producer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(rows: &[&[u32]]) -> Dependencies {
        let mut starts = vec![0];
        let mut producers = Vec::new();
        for r in rows {
            producers.extend_from_slice(r);
            starts.push(producers.len());
        }
        Dependencies { starts, producers }
    }

    #[test]
    fn file_order_is_kept_when_it_is_topological_and_fixed_otherwise() {
        assert_eq!(processing_order(&deps(&[&[], &[0], &[0, 1]])), Ok(vec![0, 1, 2]));
        // Op 0 reads op 2's output: 1 and 2 come first (the earliest ready op each time).
        assert_eq!(processing_order(&deps(&[&[2], &[], &[1]])), Ok(vec![1, 2, 0]));
    }

    #[test]
    fn a_cycle_is_named_along_the_data_flow_from_its_first_op() {
        // 0 is a source; 1 -> 3 -> 2 -> 1 is a cycle.
        assert_eq!(processing_order(&deps(&[&[], &[0, 2], &[3], &[1]])), Err(vec![1, 3, 2]));
    }
}
