//! Bytes of a collective's kernel (NCCL/RCCL) from the c10d op that holds its launch
//! (`docs/trace-fusion.md`, "Collectives"). The kernel's launching op is often
//! `record_param_comms`, which in older PyTorch records scalars only; the c10d op around it
//! (`c10d::alltoall_base_(output, input, …)`) records both buffers with their shapes and types.

use super::call_bytes::CallBytes;
use super::kind::Kind;
use super::unknown::Unknown;
use crate::time::recorded_cost::ShapeText;
use perf::OpArgs;
use trace::intern::NameId;
use trace::{RecordedShapes, Trace};

/// The c10d ops whose first two inputs are the output and the input buffer of one collective.
const OUTPUT_INPUT: [(&str, &[&str]); 3] = [
    ("c10d::alltoall_base_", &["all_to_all"]),
    ("c10d::_reduce_scatter_base_", &["reduce_scatter"]),
    ("c10d::_allgather_base_", &["all_gather"]),
];

/// Whether `name` is a c10d collective op (`c10d::…`).
pub(crate) fn is_c10d(name: &str) -> bool {
    name.starts_with("c10d::")
}

/// The device-memory bytes of one call of c10d op `name` with `shapes`: its input buffer read
/// once and its output buffer written once, the minimal traffic (a ring algorithm also writes
/// and reads what it receives through its own buffers, more). `Err` says why not: a c10d op
/// whose tensors are not recorded (`allreduce_` records its tensor list without shapes).
pub(crate) fn collective(trace: &Trace, name: NameId, shapes: RecordedShapes) -> Result<CallBytes, Unknown> {
    let op = trace.name(name);
    let raw = ShapeText::recorded(trace, shapes).raw();
    let Some(&(_, parts)) = OUTPUT_INPUT.iter().find(|(n, _)| *n == op) else {
        return Err(Unknown::not_recorded(format!(
            "{op} recorded its tensors as {} (a tensor list's shapes are not recorded): the collective's message size is not in the trace",
            raw.input_dims.unwrap_or("nothing")
        )));
    };
    let bad = Unknown::bad_input;
    let args = OpArgs::parse(raw).map_err(|e| bad(format!("{op}: {e}")))?;
    let buffer = |i: usize, role: &str| -> Result<u64, String> {
        let t = args.tensor(i, "a tensor").map_err(|_| format!("{op}: input {i} ({role}) is not a recorded tensor"))?;
        t.bytes().map_err(|e| format!("{op}: {e}"))
    };
    let (out, input) = (buffer(0, "the output").map_err(bad)?, buffer(1, "the input").map_err(bad)?);
    let fused = out.checked_add(input).ok_or_else(|| bad(format!("{op}: its bytes do not fit in 64 bits")))?;
    Ok(CallBytes {
        fused,
        unfused: Some(fused),
        unfused_unknown: None,
        kind: Kind::Other,
        parts,
        out_bytes: None,
        in_bytes: Vec::new(),
        space: None,
    })
}

/// `symm_mem::multimem_all_reduce_(input, reduce_op, group_name)`: an in-place all-reduce over
/// symmetric memory (NVLink SHARP multicast): each element of this rank's buffer is read once
/// (by the multicast load-reduce of whichever rank reduces its slice) and written once (by the
/// multicast store of the sum): 2 × the tensor.
pub(crate) fn multimem_all_reduce(args: &OpArgs) -> Result<CallBytes, String> {
    let t = args.tensor(0, "a tensor").map_err(|_| "input 0 (the tensor) is not a recorded tensor".to_string())?;
    let b = t.bytes().map_err(|e| e.to_string())?;
    Ok(CallBytes {
        fused: b.checked_mul(2).ok_or("its bytes do not fit in 64 bits")?,
        unfused: b.checked_mul(2),
        unfused_unknown: None,
        kind: Kind::Other,
        parts: &["all_reduce"],
        out_bytes: None,
        in_bytes: Vec::new(),
        space: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf::RawArgs;

    #[test]
    fn an_in_place_all_reduce_reads_and_writes_its_tensor_once() {
        let a = OpArgs::parse(RawArgs {
            input_dims: Some("[[2557440], [], []]"),
            input_type: Some(r#"["c10::BFloat16", "", ""]"#),
            concrete_inputs: None,
            input_strides: None,
        })
        .unwrap();
        let c = multimem_all_reduce(&a).unwrap();
        assert_eq!((c.fused, c.unfused), (4 * 2557440, Some(4 * 2557440)));
        let bad = OpArgs::parse(RawArgs {
            input_dims: Some("[[], []]"),
            input_type: Some(r#"["", ""]"#),
            concrete_inputs: None,
            input_strides: None,
        })
        .unwrap();
        assert!(multimem_all_reduce(&bad).is_err());
    }
}
