//! Linking an execution trace to a Kineto trace of the same process by op order, where the two
//! share no record-function ids (PyTorch before 2.1 wrote none into the Kineto trace), as
//! Chakra's approximate linker does.
//!
//! Both traces record every op a thread ran, in the order it started: the ET by node id, the
//! Kineto trace by start time; the ET usually covers only some of the profiled iterations, the
//! first ones, as it starts recording with the profiler. Each ET thread's first [`ANCHOR`] op
//! names are looked for, in a row, along each Kineto thread; from the first place found, each
//! ET op is linked to the next Kineto op of the same name within [`LOOKAHEAD`] ops (an op one
//! trace records and the other does not is stepped over). The pairs of threads that link the
//! most ops are taken, each thread once. Only an ET of the same process is linked so: its `pid` must be the Kineto trace's, or
//! an ET of another run of the same model would link op for op to the wrong events.
//! Linear time: each pair of threads is walked once per thread of the other side, and real
//! processes have a handful of threads ([`THREADS`] at most are tried).

use rustc_hash::FxHashMap;

use super::ExecTrace;
use trace::Trace;

/// Kineto ops looked at for the next ET op before it is taken as one the trace did not record.
pub const LOOKAHEAD: usize = 64;
/// Threads of either side tried against each other; the busiest are kept.
pub const THREADS: usize = 16;
/// ET op names that must follow one another in the Kineto thread where a walk may start.
pub const ANCHOR: usize = 8;

/// One walk of an ET thread beside a Kineto thread: the two threads' indexes and the pairs of
/// ops it linked (ET node, Kineto op).
type Walk = (usize, usize, Vec<(usize, usize)>);

/// Per `trace.cpu_ops` index, the linked ET node's index; `None` when the ET is of another
/// process (or records none), or nothing lines up.
pub fn link_by_order(trace: &Trace, et: &ExecTrace) -> Option<Vec<Option<usize>>> {
    let pid = et.pid?;
    // Operators only (a user's range has no ET node), of the ET's process, per thread in start
    // order.
    let mut kineto: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, op) in trace.cpu_ops.iter().enumerate() {
        if op.pid == pid && !op.annotation {
            kineto.entry(op.tid).or_default().push(i);
        }
    }
    if kineto.is_empty() {
        return None;
    }
    let mut ets: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    for (i, n) in et.nodes.iter().enumerate() {
        if n.is_op() {
            ets.entry(n.tid).or_default().push(i);
        }
    }
    let busiest = |mut v: Vec<Vec<usize>>| {
        v.sort_by_key(|ops| std::cmp::Reverse(ops.len()));
        v.truncate(THREADS);
        v
    };
    let mut kineto = busiest(kineto.into_values().collect());
    for ops in &mut kineto {
        let at = |i: &usize| (trace.cpu_ops[*i].ts, std::cmp::Reverse(ordered(trace.cpu_ops[*i].dur)));
        ops.sort_by(|a, b| at(a).partial_cmp(&at(b)).unwrap_or(std::cmp::Ordering::Equal));
    }
    let mut ets = busiest(ets.into_values().collect());
    for ops in &mut ets {
        ops.sort_by_key(|&i| et.nodes[i].id);
    }
    let name = |k: usize| trace.name(trace.cpu_ops[k].name);
    let mut by_cpu_op = vec![None; trace.cpu_ops.len()];
    let same = |n: usize, k: usize| et.nodes[n].name == name(k);
    // Every pair of threads walked from the first place the ET thread's ops follow one another
    // in the Kineto thread (an ET starts recording with the profiler: its ops are the first such
    // run); then the pairs that link the most ops are taken, each thread once.
    let mut walks: Vec<Walk> = Vec::new();
    for (e, ops) in ets.iter().enumerate() {
        for (t, k) in kineto.iter().enumerate() {
            let start = anchor(ops, k, same);
            let pairs = walk(ops, &k[start..], same);
            if !pairs.is_empty() {
                walks.push((e, t, pairs));
            }
        }
    }
    walks.sort_by(|a, b| b.2.len().cmp(&a.2.len()).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
    let (mut et_taken, mut kineto_taken) = (vec![false; ets.len()], vec![false; kineto.len()]);
    for (e, t, pairs) in walks {
        if et_taken[e] || kineto_taken[t] {
            continue;
        }
        (et_taken[e], kineto_taken[t]) = (true, true);
        for (n, k) in pairs {
            by_cpu_op[k] = Some(n);
        }
    }
    Some(by_cpu_op)
}

/// The first place in `kineto` where the first [`ANCHOR`] ops of `et` follow one another by
/// name; the start when there is none.
fn anchor(et: &[usize], kineto: &[usize], same: impl Fn(usize, usize) -> bool) -> usize {
    let g = ANCHOR.min(et.len());
    if g == 0 || kineto.len() < g {
        return 0;
    }
    (0..=kineto.len() - g).find(|&p| (0..g).all(|j| same(et[j], kineto[p + j]))).unwrap_or(0)
}

/// The pairs (ET node, Kineto op) of an in-order walk: each ET op to the next Kineto op of the
/// same name within [`LOOKAHEAD`].
fn walk(et: &[usize], kineto: &[usize], same: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut at = 0;
    for &n in et {
        let end = (at + LOOKAHEAD).min(kineto.len());
        if let Some(step) = kineto[at..end].iter().position(|&k| same(n, k)) {
            pairs.push((n, kineto[at + step]));
            at += step + 1;
        }
    }
    pairs
}

/// A duration as an orderable integer (ns), for sorting ties by the longer first.
fn ordered(dur: f64) -> i64 {
    (dur * 1000.0) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec_trace::EtNode;
    use trace::{CpuOp, RecordedShapes};

    fn node(id: u64, tid: u64, name: &str) -> EtNode {
        EtNode {
            id,
            parent: 0,
            tid,
            rf_id: None,
            name: name.into(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            input_dims: String::new(),
            input_types: String::new(),
            concrete_inputs: String::new(),
        }
    }

    /// Two threads, the ET's numbered apart from the OS's, each side with an op the other lacks.
    #[test]
    fn each_et_thread_links_in_order_to_the_thread_it_follows() {
        let mut t = Trace::default();
        let ops = [
            (100, "aten::linear", 0.0),
            (100, "aten::addmm", 1.0),
            (100, "aten::relu", 2.0),
            (100, "aten::only_in_kineto", 3.0),
            (100, "aten::linear", 4.0),
            (200, "MmBackward0", 0.5),
            (200, "aten::mm", 1.5),
        ];
        for (tid, name, ts) in ops {
            let name = t.names.intern(name);
            let shapes = RecordedShapes::default();
            t.cpu_ops.push(CpuOp { name, ts, dur: 0.5, tid, pid: 7, external_id: 0, annotation: false, shapes });
        }
        let nodes = vec![
            node(10, 1, "aten::linear"),
            node(11, 1, "aten::addmm"),
            node(12, 1, "aten::only_in_et"),
            node(13, 1, "aten::relu"),
            node(14, 1, "aten::linear"),
            node(20, 2, "MmBackward0"),
            node(21, 2, "aten::mm"),
        ];
        let et = ExecTrace { pid: Some(7), nodes };
        let linked = link_by_order(&t, &et).unwrap();
        assert_eq!(linked, [Some(0), Some(1), Some(3), None, Some(4), Some(5), Some(6)]);
        // Of another process: not linked by order.
        assert_eq!(link_by_order(&t, &ExecTrace { pid: Some(8), ..et.clone() }), None);
        assert_eq!(link_by_order(&t, &ExecTrace { pid: None, ..et }), None);
    }
}
