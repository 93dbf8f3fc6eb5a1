//! An op's GPU time both ways (`docs/trace-fusion.md`, "Op time both ways"): its **own**
//! kernels — the events it launched itself, the attribution of the per-op table, where
//! `aten::linear` has none because `aten::addmm` inside it launched the GEMM — and its whole
//! **subtree** — every event launched by it or any op nested in it, TraceLens's convention, where
//! `aten::linear` holds the GEMM. Listed only where the two differ, so a peer's figure for an op
//! is always findable next to ours.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::summary::round3;
use trace::intern::NameId;
use trace::Trace;

/// How far up the op tree one event's time is carried: real nesting is a few tens deep (module
/// wrappers, `aten::linear` → `aten::addmm`); a deeper chain is cut, its top ops then undercount.
const MAX_DEPTH: usize = 256;

/// One op (name and recorded shapes) whose own and subtree times differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpTime {
    pub op: String,
    /// `Input Dims` as recorded (`null` without `record_shapes`).
    pub input_dims: Value,
    pub calls: u64,
    /// Summed durations of the GPU events it launched itself, µs.
    pub own_us: f64,
    /// Summed durations of the GPU events it or any op nested in it launched, µs.
    pub subtree_us: f64,
}

/// Each CPU op's parent: the innermost op of the same thread whose interval holds it (linear:
/// one stack walk per thread). Annotations (`user_annotation` ranges) are not ops and have none.
fn parents(trace: &Trace) -> Vec<Option<usize>> {
    let mut by_tid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, op) in trace.cpu_ops.iter().enumerate() {
        if !op.annotation {
            by_tid.entry(op.tid).or_default().push(i);
        }
    }
    let mut parent = vec![None; trace.cpu_ops.len()];
    for ops in by_tid.values_mut() {
        // Outer before inner: by start, the longer first.
        ops.sort_by(|&a, &b| {
            let (x, y) = (&trace.cpu_ops[a], &trace.cpu_ops[b]);
            x.ts.total_cmp(&y.ts).then(y.dur.total_cmp(&x.dur))
        });
        let mut stack: Vec<usize> = Vec::new();
        for &i in ops.iter() {
            let op = &trace.cpu_ops[i];
            while let Some(&top) = stack.last() {
                let t = &trace.cpu_ops[top];
                if op.ts + op.dur <= t.ts + t.dur + 1e-3 {
                    break;
                }
                stack.pop();
            }
            parent[i] = stack.last().copied();
            stack.push(i);
        }
    }
    parent
}

/// The ops whose own and subtree times differ, longest subtree first. `event_ops` pairs each GPU
/// event's duration with the op that launched it.
pub(crate) fn op_times(trace: &Trace, event_ops: impl Iterator<Item = (f64, Option<usize>)>) -> Vec<OpTime> {
    let parent = parents(trace);
    let mut own = vec![0.0f64; trace.cpu_ops.len()];
    let mut subtree = vec![0.0f64; trace.cpu_ops.len()];
    for (dur, op) in event_ops {
        let Some(op) = op else { continue };
        own[op] += dur;
        let mut at = Some(op);
        for _ in 0..MAX_DEPTH {
            let Some(i) = at else { break };
            subtree[i] += dur;
            at = parent[i];
        }
    }
    type Key = (NameId, Option<NameId>);
    let mut rows: FxHashMap<Key, (u64, f64, f64)> = FxHashMap::default();
    for (i, op) in trace.cpu_ops.iter().enumerate() {
        if op.annotation || subtree[i] - own[i] <= 1e-6 {
            continue;
        }
        let e = rows.entry((op.name, op.shapes.dims)).or_insert((0, 0.0, 0.0));
        e.0 += 1;
        e.1 += own[i];
        e.2 += subtree[i];
    }
    let mut out: Vec<OpTime> = rows
        .into_iter()
        .map(|((name, dims), (calls, own, sub))| OpTime {
            op: trace.name(name).to_string(),
            input_dims: dims.and_then(|d| serde_json::from_str(trace.name(d)).ok()).unwrap_or(Value::Null),
            calls,
            own_us: round3(own),
            subtree_us: round3(sub),
        })
        .collect();
    out.sort_by(|a, b| b.subtree_us.total_cmp(&a.subtree_us).then_with(|| a.op.cmp(&b.op)));
    out
}
