//! vLLM's MoE op (`vllm::moe_forward`) and paged attention op
//! (`vllm::unified_attention_with_output`) as rows of the op table. Their recorded arguments
//! leave out most of what they read (the expert weights, the KV cache); their costs are in what
//! else the trace records, as the fusion groups read it ([`super::vllm_ops`]).
//!
//! **MoE**, from the call's subtree and kernels:
//! - FLOPs: the two expert GEMMs over the routed rows (T tokens × k experts): gate/up
//!   `2·T·k·H·W` (W = 2N gated, N not) and down `2·T·k·N·H`: TraceLens's
//!   `moe_triton_unfused_up` and `_down` FLOPs, but with the N the expert weights record where
//!   TraceLens, not seeing it, takes N = H (the tests check both).
//! - Bytes: the call's GEMMs and its finalize (the sum over experts) as the fusion groups count
//!   them: activations in and out, the expected active experts' weights.
//! - Peak: the matrix units at the activations' precision. The kernels
//!   (`matmul_ogs_…bf16xbf16xmxfp4`) widen the 4-bit weights to bf16 for the multiply, so the
//!   4-bit rate a chip has for two 4-bit operands is out of their reach (TraceLens counts them
//!   against it).
//!
//! **Attention**, from the engine step whose annotation holds the call (its KV lengths):
//! - FLOPs: `2·Hq·P·(Dqk + Dv)`, P the (query, key) pairs the step scores per head (two
//!   matmuls; the softmax's few FLOPs an element left out, as the SDPA model does), a context
//!   chunk's causal triangle counted as area (`Σ sq²/2`), the FlashAttention convention the
//!   SDPA model keeps;
//! - bytes: the fusion groups' (queries, outputs, the new and the cached keys and values);
//! - each step's calls are a row of their own: the same shapes cost what their step attends.
//!
//! A call whose record does not give its cost keeps the reason in the row.

use rustc_hash::FxHashMap;

use hardware::{PeakKey, Unit};
use perf::{DType, OpArgs};
use trace::intern::NameId;
use trace::Trace;
use units::plural;

use super::serving_ops::why_unknown;
use super::unknown::Unknown;
use super::vllm_ops::{
    kv_cache_type, moe_kernel, moe_shapes, unified_attention, MoeKernel, MoeShapes, Steps, ThreadOps,
};
use crate::summary::ClassifiedTrace;
use crate::time::recorded_cost::{precision, CallCosts, Cost, ShapeText};

/// The MoE op the model prices.
const MOE_OP: &str = "vllm::moe_forward";
/// The attention ops (`unified_attention` returns its output rather than being passed one).
const ATTENTION_OPS: [&str; 2] = ["vllm::unified_attention_with_output", "vllm::unified_attention"];

/// What the trace records of its vLLM MoE and attention calls.
pub struct VllmCalls<'t> {
    trace: &'t Trace,
    /// The ops by thread, for a MoE call's subtree (none without MoE calls).
    threads: Option<ThreadOps>,
    /// By MoE call (CPU op): its kernels' names in start order.
    moe_kernels: FxHashMap<usize, Vec<NameId>>,
    attention: Vec<NameId>,
    /// By attention call: when its first kernel was launched (a graph replay's launch for a
    /// captured call), which places it in its step as the fusion groups place its kernels.
    launched: FxHashMap<usize, f64>,
    steps: Steps,
    /// The KV cache's element type, read once where there is attention.
    cache: Option<Result<DType, Unknown>>,
}

impl<'t> VllmCalls<'t> {
    /// `None` when the trace has neither op.
    pub fn new(side: &ClassifiedTrace<'t>) -> Option<VllmCalls<'t>> {
        let trace = side.trace;
        let moe = trace.names.get(MOE_OP);
        let attention: Vec<NameId> = ATTENTION_OPS.iter().filter_map(|n| trace.names.get(n)).collect();
        if moe.is_none() && attention.is_empty() {
            return None;
        }
        let mut moe_kernels: FxHashMap<usize, Vec<NameId>> = FxHashMap::default();
        let mut launched: FxHashMap<usize, f64> = FxHashMap::default();
        for (k, op) in trace.kernels.iter().zip(&side.event_ops().kernels) {
            let Some(op) = *op else { continue };
            let name = trace.cpu_ops[op].name;
            if Some(name) == moe {
                moe_kernels.entry(op).or_default().push(k.name);
            } else if attention.contains(&name) {
                let at = k.correlation.and_then(|c| trace.launches.get(&c)).map_or(trace.cpu_ops[op].ts, |l| l.ts);
                launched.entry(op).or_insert(at);
            }
        }
        let cache = (!attention.is_empty()).then(|| kv_cache_type(trace));
        let threads = moe.map(|_| ThreadOps::new(trace));
        let steps = Steps::new(trace);
        Some(VllmCalls { trace, threads, moe_kernels, attention, launched, steps, cache })
    }

    fn is_attention(&self, op: usize) -> bool {
        self.attention.contains(&self.trace.cpu_ops[op].name)
    }

    /// The step annotation holding an attention call: its index and lengths.
    fn step(&self, op: usize) -> Option<(usize, super::vllm_ops::StepLengths)> {
        self.steps.at(self.launched.get(&op).copied().unwrap_or(self.trace.cpu_ops[op].ts))
    }

    fn moe_cost(&self, op: usize) -> Option<Result<Cost, String>> {
        let names: Vec<&str> = self.moe_kernels.get(&op)?.iter().map(|&n| self.trace.name(n)).collect();
        let Some(gemm) = names.iter().copied().find(|n| matches!(MoeKernel::of(n), Some(MoeKernel::Gemm(_)))) else {
            // Other kernels (TensorRT-LLM's) are handed weights the subtree does not record: as
            // the fusion groups say of them.
            return Some(Err(self.unknown_reason(op, MOE_OP)));
        };
        let threads = self.threads.as_ref()?;
        let cost = moe_shapes(self.trace, threads, op, gemm).and_then(|s| call_cost(&s, &names));
        Some(cost.map_err(|e| e.to_string()))
    }

    fn attention_cost(&self, op: usize) -> Result<Cost, String> {
        let call = &self.trace.cpu_ops[op];
        let args = OpArgs::parse(ShapeText::recorded(self.trace, call.shapes).raw()).map_err(|e| e.to_string())?;
        let Some((_, step)) = self.step(op) else {
            return Err(self.unknown_reason(op, self.trace.name(call.name)));
        };
        let cache = self.cache.clone().unwrap_or_else(|| Err(Unknown::not_recorded("no KV-cache write recorded")));
        let bytes = unified_attention(&args, Some(step), cache).map_err(|e| e.to_string())?.fused;
        // The shapes passed: [tokens, heads, head dim] each.
        let dim = |i: usize, d: usize| args.tensor(i, "a tensor").ok().and_then(|t| t.dims().get(d).copied());
        let (hq, dqk, dv) = (dim(0, 1), dim(0, 2), dim(2, 2));
        let (Some(hq), Some(dqk), Some(dv)) = (hq, dqk, dv) else {
            return Err("its query and value are not [tokens, heads, head dim]".to_string());
        };
        // Twice the pairs, so that half of Σ sq² stays whole.
        let twice_pairs = step
            .c_sqsk
            .checked_add(step.g_sqsk)
            .and_then(|p| p.checked_mul(2))
            .and_then(|p| p.checked_sub(step.c_sqsq))
            .ok_or_else(|| "its step annotation's sums do not fit in 64 bits".to_string())?;
        let flops = dqk
            .checked_add(dv)
            .and_then(|d| [hq, twice_pairs, d].iter().try_fold(1u64, |p, &t| p.checked_mul(t)))
            .ok_or_else(|| "its FLOPs do not fit in 64 bits".to_string())?;
        let q = args.tensor(0, "the query").map_err(|e| e.to_string())?.dtype();
        Ok(Cost { model: "attention", flops, bytes, peak: PeakKey::new(Unit::Matrix, precision(q)), estimate: false })
    }

    /// Why the fusion groups cannot give `name`'s bytes from what call `op` recorded.
    fn unknown_reason(&self, op: usize, name: &str) -> String {
        let shapes = self.trace.cpu_ops[op].shapes;
        let args = OpArgs::parse(ShapeText::recorded(self.trace, shapes).raw()).ok();
        let why = args.and_then(|a| why_unknown(name, &a)).map(|u| u.why);
        why.unwrap_or_else(|| "its recorded arguments do not parse".to_string())
    }
}

impl CallCosts for VllmCalls<'_> {
    /// An attention call's step (its index + 1): each step's calls are a row.
    fn class(&self, op: usize) -> u32 {
        if !self.is_attention(op) {
            return 0;
        }
        self.step(op).map_or(0, |(n, _)| u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(1)))
    }

    fn cost(&self, op: usize) -> Option<Result<Cost, String>> {
        if self.is_attention(op) {
            Some(self.attention_cost(op))
        } else {
            self.moe_cost(op)
        }
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
