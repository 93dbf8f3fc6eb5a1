//! vLLM's MoE op (`vllm::moe_forward`) as one row of the op table: its recorded arguments are
//! the hidden states and the router logits, and its cost is in what its subtree and kernels
//! record, as the fusion groups read them ([`super::vllm_ops`]).
//!
//! - **FLOPs**: the two expert GEMMs over the routed rows (T tokens × k experts): gate/up
//!   `2·T·k·H·W` (W = 2N gated, N not) and down `2·T·k·N·H`: TraceLens's
//!   `moe_triton_unfused_up` and `_down` FLOPs, but with the N the expert weights record where
//!   TraceLens, not seeing it, takes N = H (the tests check both).
//! - **Bytes**: the call's GEMMs and its finalize (the sum over experts) as the fusion groups
//!   count them: activations in and out, the expected active experts' weights.
//! - **Peak**: the matrix units at the activations' precision. The kernels
//!   (`matmul_ogs_…bf16xbf16xmxfp4`) widen the 4-bit weights to bf16 for the multiply, so the
//!   4-bit rate a chip has for two 4-bit operands is out of their reach (TraceLens counts them
//!   against it).
//!
//! A call whose subtree does not say its expert weights, or whose kernels are not the two
//! GEMMs the model knows, keeps the reason in the row.

use rustc_hash::FxHashMap;

use hardware::{PeakKey, Unit};
use trace::intern::NameId;
use trace::Trace;
use units::plural;

use perf::OpArgs;

use super::serving_ops::why_unknown;
use super::unknown::Unknown;
use super::vllm_ops::{moe_kernel, moe_shapes, MoeKernel, MoeShapes, ThreadOps};
use crate::summary::ClassifiedTrace;
use crate::time::recorded_cost::{precision, Cost, ShapeText};

/// The op the model prices.
const MOE_OP: &str = "vllm::moe_forward";

/// Each `vllm::moe_forward` call's kernels, and the trace's ops by thread for its subtree.
pub struct MoeCalls<'t> {
    trace: &'t Trace,
    threads: ThreadOps,
    /// By CPU op: its kernels' names in start order.
    kernels: FxHashMap<usize, Vec<NameId>>,
}

impl<'t> MoeCalls<'t> {
    /// `None` when the trace has no MoE op.
    pub fn new(side: &ClassifiedTrace<'t>) -> Option<MoeCalls<'t>> {
        let trace = side.trace;
        let moe = trace.names.get(MOE_OP)?;
        let mut kernels: FxHashMap<usize, Vec<NameId>> = FxHashMap::default();
        for (k, op) in trace.kernels.iter().zip(&side.event_ops().kernels) {
            if let Some(op) = op.filter(|&op| trace.cpu_ops[op].name == moe) {
                kernels.entry(op).or_default().push(k.name);
            }
        }
        Some(MoeCalls { trace, threads: ThreadOps::new(trace), kernels })
    }

    /// The cost of CPU op `op`'s call: `None` when it is no MoE call with kernels.
    pub fn cost(&self, op: usize) -> Option<Result<Cost, String>> {
        let names: Vec<&str> = self.kernels.get(&op)?.iter().map(|&n| self.trace.name(n)).collect();
        let Some(gemm) = names.iter().copied().find(|n| matches!(MoeKernel::of(n), Some(MoeKernel::Gemm(_)))) else {
            // Other kernels (TensorRT-LLM's) are handed weights the subtree does not record: as
            // the fusion groups say of them.
            let shapes = self.trace.cpu_ops[op].shapes;
            let args = OpArgs::parse(ShapeText::recorded(self.trace, shapes).raw()).ok();
            let why = args.and_then(|a| why_unknown(MOE_OP, &a)).map(|u| u.why);
            return Some(Err(why.unwrap_or_else(|| "its recorded arguments do not parse".to_string())));
        };
        let cost = moe_shapes(self.trace, &self.threads, op, gemm).and_then(|s| call_cost(&s, &names));
        Some(cost.map_err(|e| e.to_string()))
    }
}

/// One call's cost from its shapes and its kernels' names (start order): the GEMMs numbered as
/// they ran, the finalize where there is one.
fn call_cost(s: &MoeShapes, kernels: &[&str]) -> Result<Cost, Unknown> {
    let scattered = kernels.iter().any(|k| MoeKernel::of(k) == Some(MoeKernel::Finalize));
    let mut gemms = 0u32;
    let mut bytes = 0u64;
    for k in kernels {
        let role = match MoeKernel::of(k) {
            Some(MoeKernel::Gemm(_)) => {
                gemms += 1;
                MoeKernel::Gemm(gemms - 1)
            }
            Some(MoeKernel::Finalize) => MoeKernel::Finalize,
            None => continue,
        };
        let fused = moe_kernel(s, role, k, scattered)?.fused;
        bytes = bytes.checked_add(fused).ok_or_else(overflow)?;
    }
    if gemms != 2 {
        return Err(Unknown::no_model(format!(
            "its call runs {}: the model knows two (gate/up, down)",
            plural(u64::from(gemms), "expert GEMM", "expert GEMMs")
        )));
    }
    let routed = s.tokens.checked_mul(s.topk).ok_or_else(overflow)?;
    let wide = if s.gated { s.inter.checked_mul(2).ok_or_else(overflow)? } else { s.inter };
    let flops = [wide, s.inter]
        .iter()
        .try_fold(0u64, |sum, &w| {
            let f = [2, routed, s.hidden, w].iter().try_fold(1u64, |p, &t| p.checked_mul(t))?;
            sum.checked_add(f)
        })
        .ok_or_else(overflow)?;
    Ok(Cost { model: "MoE", flops, bytes, peak: PeakKey::new(Unit::Matrix, precision(s.act)), estimate: false })
}

fn overflow() -> Unknown {
    Unknown::bad_input("its FLOPs or bytes do not fit in 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf::DType;

    /// 4 tokens, 2 of 8 experts each, H = 64, N = 32, gated, bf16 weights of 8 experts.
    fn shapes(gated: bool) -> MoeShapes {
        let w = if gated { 64 } else { 32 };
        MoeShapes {
            tokens: 4,
            hidden: 64,
            experts: 8,
            topk: 2,
            w13_bytes: 8 * 64 * w * 2,
            w2_bytes: 8 * 32 * 64 * 2,
            inter: 32,
            gated,
            act: DType::BF16,
        }
    }

    #[test]
    fn a_call_s_flops_are_its_two_gemms_and_its_bytes_its_kernels() {
        let kernels = ["_matmul_ogs_NNT_bf16_swiglu", "_matmul_ogs_NNT_bf16", "_finalize_matmul_scatter"];
        let c = call_cost(&shapes(true), &kernels).unwrap();
        // 8 routed rows: 2·8·64·64 (gate/up, 2N = 64 wide) + 2·8·64·32 (down).
        assert_eq!(c.flops, 65_536 + 32_768);
        let s = shapes(true);
        let each: u64 = [MoeKernel::Gemm(0), MoeKernel::Gemm(1), MoeKernel::Finalize]
            .iter()
            .zip(kernels)
            .map(|(&role, k)| moe_kernel(&s, role, k, true).unwrap().fused)
            .sum();
        assert_eq!((c.bytes, c.model), (each, "MoE"));
        assert_eq!(c.peak, PeakKey::new(Unit::Matrix, hardware::Precision::Bf16));
        // Not gated: the gate/up GEMM is N wide.
        assert_eq!(call_cost(&shapes(false), &kernels).unwrap().flops, 2 * 32_768);
    }

    #[test]
    fn a_call_of_other_than_two_gemms_is_refused_saying_how_many() {
        let e = call_cost(&shapes(true), &["_matmul_ogs_NNT_bf16_swiglu", "_finalize_matmul_scatter"]).unwrap_err();
        assert_eq!(e.why, "its call runs 1 expert GEMM: the model knows two (gate/up, down)");
    }
}
