//! What one launching op says about the kernel it launched: its ops, the parts its unfused
//! form runs as separate kernels, its kind for the rules, its fused and unfused bytes per call
//! (from the op's cost formula, an Inductor kernel's op words or a serving engine's fused
//! op), and the data flow the what-if follows (`docs/trace-fusion.md`, "Groups").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::call_bytes::CallBytes;
use super::kind::{Composite, Kind};
use super::serving_ops::{serving_cost, why_unknown};
use super::unknown::{of_no_cost, Unknown};
use crate::time::recorded_cost::is_list_copy;
use classify::inductor;
use perf::{op_cost, Family, Input, List, NoCost, OpArgs, OpCost, RawArgs};

/// One op a group ran, with the shapes the launch recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupOp {
    pub op: String,
    /// `Input Dims` as the trace wrote them (for an Inductor kernel's op words: the kernel
    /// launch's, which are its buffers); `null` when not recorded.
    pub input_dims: Value,
    pub input_types: Value,
}

/// How a group's ops and bytes were known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum How {
    /// The launching op's recorded shapes and dtypes, through its cost formula.
    #[serde(rename = "recorded shapes")]
    RecordedShapes,
    /// The op words of an Inductor kernel name, with the launch's recorded buffers.
    #[serde(rename = "kernel name")]
    KernelName,
    /// The linked execution-trace node's shapes and types (the Kineto op recorded none).
    #[serde(rename = "execution trace")]
    ExecutionTrace,
    /// The size the trace records for a memcpy or memset.
    #[serde(rename = "transfer size")]
    TransferSize,
    /// The op's recorded shapes with the engine's step annotation around its launch (the KV
    /// lengths vLLM's attention reads).
    #[serde(rename = "step annotation")]
    StepAnnotation,
    /// The shapes the ops inside the launching op recorded (the expert weights a vLLM MoE call
    /// hands its GEMMs, the tensors the routing allocates).
    #[serde(rename = "op subtree")]
    OpSubtree,
    /// The compiler's record of the kernel: XLA's optimized HLO in the profile (the fusion's
    /// instructions, their shapes, the fusion's operands and outputs).
    #[serde(rename = "HLO")]
    Hlo,
    /// The compiler's record of the kernel: Inductor's provenance in the compile log of the
    /// same run (the kernel's post-grad nodes with their shapes).
    #[serde(rename = "Inductor provenance")]
    Inductor,
    /// Not known; `bytes_unknown` says why and `bytes_gap` whose gap it is.
    #[serde(rename = "unknown")]
    Unknown,
}

impl How {
    pub fn text(self) -> &'static str {
        match self {
            How::RecordedShapes => "recorded shapes",
            How::KernelName => "kernel name",
            How::ExecutionTrace => "execution trace",
            How::TransferSize => "transfer size",
            How::StepAnnotation => "step annotation",
            How::OpSubtree => "op subtree",
            How::Hlo => "HLO",
            How::Inductor => "Inductor provenance",
            How::Unknown => "unknown",
        }
    }

    /// Whether the compiler recorded the group (exact) rather than fusionscope inferring it.
    pub fn is_exact(self) -> bool {
        matches!(self, How::Hlo | How::Inductor)
    }
}

/// What the data-flow inference needs of a group (not part of the output).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Flow {
    /// Bytes of the one output tensor, where the model's bytes are reads plus one write.
    pub out_bytes: Option<u64>,
    /// Bytes of each tensor input.
    pub in_bytes: Vec<u64>,
    /// Elements of the iteration space: the largest tensor input (the output of a product).
    pub space: Option<u64>,
}

/// What one launching op says about the kernel it launched.
pub(crate) struct Described {
    pub ops: Vec<GroupOp>,
    pub parts: Vec<String>,
    pub kind: Option<Kind>,
    /// (fused, unfused) bytes per call, or why not.
    pub bytes: Result<(u64, Option<u64>), Unknown>,
    pub unfused_unknown: Option<Unknown>,
    pub how: How,
    pub flow: Flow,
}

impl Described {
    /// A serving op's model in place of what the op's own arguments gave (its parts, kind,
    /// bytes and data flow), or its reason.
    pub(crate) fn take_serving(&mut self, cost: Result<CallBytes, Unknown>) {
        match cost {
            Ok(c) => {
                self.kind = Some(c.kind);
                self.parts = c.parts.iter().map(|p| p.to_string()).collect();
                self.flow = Flow { out_bytes: c.out_bytes, in_bytes: c.in_bytes, space: c.space };
                self.bytes = Ok((c.fused, c.unfused));
                self.unfused_unknown = c.unfused_unknown;
            }
            Err(e) => self.bytes = Err(e),
        }
    }
}

/// The ops, parts, kind and bytes of a call of `op` with these recorded arguments.
pub(crate) fn describe(op: &str, raw: RawArgs<'_>) -> Described {
    let json = |t: Option<&str>| t.and_then(|t| serde_json::from_str(t).ok()).unwrap_or(Value::Null);
    let (dims, types) = (json(raw.input_dims), json(raw.input_type));
    let one = |name: &str| vec![GroupOp { op: name.to_string(), input_dims: dims.clone(), input_types: types.clone() }];
    let mut d = Described {
        ops: one(op),
        parts: vec![op.strip_prefix("aten::").unwrap_or(op).to_string()],
        kind: None,
        bytes: Err(Unknown::no_model(String::new())),
        unfused_unknown: None,
        how: How::RecordedShapes,
        flow: Flow::default(),
    };
    let args = if raw.input_dims.is_none() {
        Err(Unknown::not_recorded("the trace was recorded without record_shapes: no Input Dims"))
    } else {
        OpArgs::parse(raw).map_err(|e| of_no_cost(&NoCost::from(e)).prefixed(op))
    };
    if let Some(words) = inductor::parse(&op.to_ascii_lowercase()) {
        // An Inductor kernel: its op words, each with the launch's buffers.
        let (ikind, words) = words;
        let lower = op.to_ascii_lowercase();
        let components = inductor::components(&lower).unwrap_or_default();
        d.kind = Some(Kind::of_inductor(ikind, &components));
        let real: Vec<&str> = words.iter().copied().filter(|w| works(w)).collect();
        d.ops = words.iter().flat_map(|w| one(w)).collect();
        d.parts = real.iter().map(|w| w.to_string()).collect();
        d.how = How::KernelName;
        let args = match args {
            Ok(a) => a,
            Err(e) => {
                d.bytes = Err(e);
                return d;
            }
        };
        d.flow = triton_flow(&args);
        d.bytes = match op_cost(op, &args) {
            Ok(c) => {
                let unfused = inductor_unfused(c.bytes, &d.flow, real.len(), &args);
                if unfused.is_none() {
                    d.unfused_unknown = Some(if real.is_empty() {
                        Unknown::not_recorded("the kernel name lists no op words to split it into")
                    } else {
                        Unknown::bad_input("its unfused bytes do not fit in 64 bits")
                    });
                }
                Ok((c.bytes, unfused))
            }
            Err(e) => Err(of_no_cost(&e).prefixed(op)),
        };
        return d;
    }
    if perf::triton::is_triton(op) {
        d.how = How::KernelName;
        d.unfused_unknown = Some(Unknown::not_recorded(
            "the kernel name lists no op words (Inductor before 2023 named kernels triton__0d1d2d…)",
        ));
    }
    let args = match args {
        Ok(a) => a,
        Err(e) => {
            d.bytes = Err(e);
            return d;
        }
    };
    if let Some(serving) = serving_cost(op, &args) {
        d.take_serving(serving.map_err(|e| e.prefixed(op)));
        return d;
    }
    match op_cost(op, &args) {
        Err(e) => d.bytes = Err(why_unknown(op, &args).unwrap_or_else(|| of_no_cost(&e))),
        Ok(c) => {
            d.kind = Some(Kind::of_family(c.family));
            d.flow = eager_flow(op, &c, &args);
            let composite = composite(op, c.family, &args);
            let unfused = match composite {
                None => Some(c.bytes),
                Some(comp) => {
                    d.parts = comp.parts().iter().map(|p| p.to_string()).collect();
                    composite_unfused(comp, &c, &d.flow, &args)
                }
            };
            if d.how == How::KernelName {
                // A Triton kernel's buffers are inputs and outputs alike: its last is the output.
                d.flow = triton_flow(&args);
                d.bytes = Ok((c.bytes, None));
                d.parts.clear();
            } else {
                if unfused.is_none() {
                    d.unfused_unknown = Some(Unknown::bad_input("its unfused bytes do not fit in 64 bits"));
                }
                d.bytes = Ok((c.bytes, unfused));
            }
        }
    }
    d
}

/// `aten::cat`/`aten::stack` without an `out=` tensor: the profiler records the list's shapes
/// but not its element type, and PyTorch's CUDA/HIP cat kernel is instantiated on an opaque type
/// of the element's size (`CatArrayBatchedCopy<…OpaqueType<2u>…>`), so the kernel name gives it.
/// Every input is read once and the output, of their summed size, written once.
pub(crate) fn list_copy_from_kernel(op: &str, raw: RawArgs<'_>, kernel: &str) -> Option<(u64, Flow)> {
    if !is_list_copy(op) {
        return None;
    }
    let size = perf::copy::opaque_element_bytes(kernel)?;
    let args = OpArgs::parse(raw).ok()?;
    let Some(Input::List(List::Tensors(shapes))) = args.input(0) else { return None };
    let in_bytes = shapes.iter().map(|s| s.numel()?.checked_mul(size)).collect::<Option<Vec<u64>>>()?;
    let out = in_bytes.iter().try_fold(0u64, |s, &b| s.checked_add(b))?;
    let space = out / size;
    Some((out.checked_mul(2)?, Flow { out_bytes: Some(out), in_bytes, space: Some(space) }))
}

/// Whether an Inductor op word does work of its own (views and GEMM words outside templates
/// do not).
fn works(word: &str) -> bool {
    inductor::OPS.iter().any(|(name, c)| *name == word && c.is_some())
}

/// The library fusion an op is, if it is one.
fn composite(op: &str, family: Family, args: &OpArgs) -> Option<Composite> {
    let name = op.strip_prefix("aten::").unwrap_or(op);
    match (family, name) {
        (Family::Gemm, "addmm" | "baddbmm") => Some(Composite::GemmBias),
        (Family::Gemm, "linear") => matches!(args.input(2), Some(Input::Tensor(_))).then_some(Composite::GemmBias),
        (Family::Attention, _) => Some(Composite::Attention),
        (Family::Norm, "_C::fused_add_rms_norm") => Some(Composite::AddRmsNorm),
        _ => None,
    }
}

/// Unfused bytes of a library fusion: its fused bytes plus each intermediate tensor written by
/// one part and read back by the next.
fn composite_unfused(comp: Composite, c: &OpCost, flow: &Flow, args: &OpArgs) -> Option<u64> {
    let intermediate = match comp {
        // C: the output's size.
        Composite::GemmBias => flow.out_bytes?,
        // S and P: one score per (query head, query, key) pair the model counts, in Q's type.
        // FLOPs are 2·pairs·(d + dv), so pairs = FLOPs / (2·(d + dv)).
        Composite::Attention => {
            let mut tensors = args.tensors();
            let q = tensors.next()?;
            let _k = tensors.next()?;
            let v = tensors.next()?;
            let d = *q.dims().last()?;
            let dv = *v.dims().last()?;
            let pairs = c.flops.checked_div(d.checked_add(dv)?.checked_mul(2)?)?;
            pairs.checked_mul(q.dtype().size_bytes())?.checked_mul(2)?
        }
        // The residual sum: an output either way (the next layer's residual), so unfused only
        // its read-back by the norm is extra.
        Composite::AddRmsNorm => {
            let sum = args.tensors().nth(1)?.bytes().ok()?;
            return c.bytes.checked_add(sum);
        }
    };
    c.bytes.checked_add(intermediate.checked_mul(2)?)
}

/// Tensor-input bytes, the iteration space and the output of an eager op whose model counts
/// each tensor input once and one output (`docs/cost-formulas.md`): the output is the rest.
/// In-place ops that overwrite their first tensor without reading it.
const OVERWRITES: &[&str] = &[
    "aten::fill_",
    "aten::zero_",
    "aten::copy_",
    "aten::uniform_",
    "aten::normal_",
    "aten::random_",
    "aten::bernoulli_",
];

/// An in-place op (`add_`, `copy_`) writes its first tensor, which the model does not count as
/// read too, so its output is that tensor.
fn eager_flow(op: &str, c: &OpCost, args: &OpArgs) -> Flow {
    let in_bytes: Vec<u64> = args.tensors().filter_map(|t| t.bytes().ok()).collect();
    let list_inputs = args.inputs().iter().any(|i| matches!(i, Input::List(List::Tensors(s)) if !s.is_empty()));
    let read = in_bytes.iter().try_fold(0u64, |s, &b| s.checked_add(b));
    let out_bytes = match (read, list_inputs) {
        (Some(r), false) => c.bytes.checked_sub(r).filter(|&o| o > 0),
        _ => None,
    };
    let out_bytes = match out_bytes {
        None if op.ends_with('_') && !list_inputs => in_bytes.first().copied().filter(|&b| b > 0),
        other => other,
    };
    // An op that overwrites its first tensor without reading it does not consume what was there.
    let mut in_bytes = in_bytes;
    if OVERWRITES.contains(&op) && !in_bytes.is_empty() {
        in_bytes.remove(0);
    }
    let mut space = args.tensors().filter_map(|t| t.numel().ok()).max();
    if c.family == Family::Gemm || c.family == Family::Conv {
        // A product iterates over its output.
        space = out_bytes.and_then(|o| o.checked_div(c.dtype.size_bytes()));
    }
    Flow { out_bytes, in_bytes, space }
}

/// A Triton kernel's buffers: the last is taken as its output (Inductor lists `out_ptr`s last),
/// the largest as its iteration space.
fn triton_flow(args: &OpArgs) -> Flow {
    let tensors: Vec<_> = args.tensors().collect();
    let in_bytes: Vec<u64> = tensors.iter().filter_map(|t| t.bytes().ok()).collect();
    Flow {
        out_bytes: tensors.last().and_then(|t| t.bytes().ok()),
        in_bytes,
        space: tensors.iter().filter_map(|t| t.numel().ok()).max(),
    }
}

/// Unfused bytes of an Inductor kernel of `parts` working ops: the kernel's own bytes plus, for
/// each of the `parts − 1` hand-offs between its ops, one intermediate written and read back, at
/// the size of the kernel's largest buffer (its iteration space in its type).
fn inductor_unfused(fused: u64, flow: &Flow, parts: usize, args: &OpArgs) -> Option<u64> {
    if parts == 0 {
        return None;
    }
    let largest = args.tensors().filter_map(|t| t.bytes().ok()).max().or(flow.out_bytes)?;
    let handoffs = u64::try_from(parts - 1).ok()?;
    fused.checked_add(largest.checked_mul(2)?.checked_mul(handoffs)?)
}
