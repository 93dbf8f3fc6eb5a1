//! A kernel's group where the compiler recorded it (XLA's HLO, `trace::compiled`): the
//! group as recorded, and which of an op's kernels its bytes are counted at.

use rustc_hash::FxHashMap;

use super::describe::{Described, Flow, GroupOp, How};
use super::unknown::Unknown;
use trace::compiled::{CompiledGroup, Compiler};
use trace::intern::NameId;
use trace::Trace;

/// Per compiled group: the kernel name that takes the most time in all, where the group ran
/// more than one kernel name.
pub(super) fn compiled_main_kernels(trace: &Trace) -> FxHashMap<u32, (NameId, f64)> {
    if trace.compiled.is_empty() {
        return FxHashMap::default();
    }
    let mut time: FxHashMap<(u32, NameId), f64> = FxHashMap::default();
    let op_of: FxHashMap<u64, u32> =
        trace.cpu_ops.iter().filter_map(|o| Some((o.external_id, trace.compiled.of_op(o.external_id)?.0))).collect();
    for k in &trace.kernels {
        if let Some(&index) = k.external_id.and_then(|id| op_of.get(&id)) {
            *time.entry((index, k.name)).or_default() += k.dur;
        }
    }
    let mut names: FxHashMap<u32, (u32, (NameId, f64))> = FxHashMap::default();
    for ((index, name), t) in time {
        let e = names.entry(index).or_insert((0, (name, t)));
        e.0 += 1;
        // The longest, the first name on a tie.
        if t > e.1 .1 || (t == e.1 .1 && name < e.1 .0) {
            e.1 = (name, t);
        }
    }
    names.into_iter().filter(|(_, (n, _))| *n > 1).map(|(i, (_, main))| (i, main)).collect()
}

/// A kernel's group as the compiler recorded it (XLA's HLO, Inductor's provenance): its ops in
/// HLO's text form with their operands' shapes, their opcodes as the parts, and its bytes.
pub(super) fn described(compiled: &CompiledGroup) -> Described {
    let ops = compiled
        .ops
        .iter()
        .map(|o| GroupOp {
            op: format!("{} = {} {}", o.name, o.shape, o.opcode),
            input_dims: o.operands.iter().map(|s| serde_json::Value::String(s.clone())).collect(),
            input_types: serde_json::Value::Null,
        })
        .collect();
    let bytes = compiled.fused_bytes.map(|fused| (fused, compiled.unfused_bytes)).ok_or_else(|| {
        Unknown::not_recorded(match compiled.compiler {
            Compiler::Xla => format!("the HLO shapes of {} hold more bytes than 64 bits count", compiled.op),
            Compiler::Inductor => format!(
                "the post-grad shapes of {} are symbolic (dynamic shapes) or hold more bytes than 64 bits count",
                compiled.op
            ),
        })
    });
    Described {
        ops,
        parts: compiled.ops.iter().map(|o| o.opcode.clone()).collect(),
        kind: None,
        bytes,
        unfused_unknown: None,
        how: match compiled.compiler {
            Compiler::Xla => How::Hlo,
            Compiler::Inductor => How::Inductor,
        },
        flow: Flow::default(),
    }
}
