//! Producer→consumer edges between consecutive kernels, inferred from order and sizes.
//!
//! Kineto records each op's input shapes and types but not which tensor is which, so an edge is
//! inferred (`docs/trace-fusion.md`, "Data flow"): kernel B consumes kernel A's output when B runs
//! right after A on the same device and stream and one of B's tensor inputs has exactly the
//! bytes of A's output (element count × element size; a view between them keeps both). Limits:
//! an unrelated tensor of the same size makes a false edge; a producer whose output is not read
//! by the very next kernel (a residual read much later) gives none; an output read by two
//! consumers is taken as read by one.

use super::describe::Flow;
use super::groups::{Grouping, Instance};

/// The bytes handed from instance `a` to the next one `b`: exactly, by tensor storage, when both
/// launching ops are linked to an execution trace (`None`: `b` reads nothing `a` wrote), else
/// inferred from sizes ([`edge`]). The flag says which.
pub(crate) fn handoff(g: &Grouping, a: &Instance, b: &Instance) -> (Option<u64>, bool) {
    if let (Some(x), Some(y)) = (a.et, b.et) {
        let (out, inp) = (&g.et_io[x], &g.et_io[y]);
        // A foreach op lists thousands of tensors: look them up in a set rather than pairwise.
        let found = if out.outputs.len().saturating_mul(inp.inputs.len()) > 4096 {
            let inputs: rustc_hash::FxHashSet<u64> = inp.inputs.iter().copied().collect();
            out.outputs.iter().find(|(storage, _)| inputs.contains(storage))
        } else {
            out.outputs.iter().find(|(storage, _)| inp.inputs.contains(storage))
        };
        let bytes = found.and_then(|(_, b)| *b);
        return (bytes.filter(|&b| b > 0), true);
    }
    (edge(&g.flow[a.group], &g.flow[b.group]), false)
}

/// The bytes of the tensor `producer` hands to `consumer`, if an edge is inferred.
pub(crate) fn edge(producer: &Flow, consumer: &Flow) -> Option<u64> {
    let out = producer.out_bytes.filter(|&b| b > 0)?;
    consumer.in_bytes.contains(&out).then_some(out)
}

/// Whether two instances are consecutive work of one stream (copies have no stream and never
/// are).
pub(crate) fn same_stream(a: &Instance, b: &Instance) -> bool {
    a.device == b.device && a.stream.is_some() && a.stream == b.stream
}

/// The instances' positions split by (device, stream), each in time order; copies left out.
pub(crate) fn streams(instances: &[Instance]) -> Vec<Vec<usize>> {
    let mut by: rustc_hash::FxHashMap<(i64, i64), usize> = rustc_hash::FxHashMap::default();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, inst) in instances.iter().enumerate() {
        let Some(stream) = inst.stream else { continue };
        let slot = *by.entry((inst.device, stream)).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[slot].push(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_needs_an_input_of_the_output_size() {
        let a = Flow { out_bytes: Some(64), in_bytes: vec![32, 32], space: Some(16) };
        let b = Flow { out_bytes: Some(64), in_bytes: vec![8, 64], space: Some(16) };
        let c = Flow { out_bytes: None, in_bytes: vec![8], space: None };
        assert_eq!(edge(&a, &b), Some(64));
        assert_eq!(edge(&b, &c), None);
        assert_eq!(edge(&c, &a), None);
    }
}
