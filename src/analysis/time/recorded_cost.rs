//! What the op table knows of one op call's cost ([`Cost`], from the call's [`ShapeText`]),
//! and its production lookup: the per-op cost formulas of the `perf` crate over an op's
//! recorded shapes (`docs/cost-formulas.md`), or a list copy's kernel name where the shapes
//! leave out its element size.

use hardware::{PeakKey, Precision};
use perf::{cost_from_trace, has_formula, DType, Family, RawArgs};
use trace::intern::NameId;
use trace::{RecordedShapes, Trace};

/// What a cost formula says about one call of an op.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// The model's family, shown in the table (`GEMM`, `attention`, `elementwise`, …).
    pub model: &'static str,
    pub flops: u64,
    pub bytes: u64,
    /// The chip peak the op runs against.
    pub peak: PeakKey,
    /// The FLOPs are an estimate (Inductor's Triton kernels), not a closed form.
    pub estimate: bool,
}

/// The recorded shapes of a call, as the trace wrote them (JSON array texts).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShapeText<'a> {
    pub dims: Option<&'a str>,
    pub types: Option<&'a str>,
    pub concrete: Option<&'a str>,
    /// Kept only where an input is expanded (`trace::RecordedShapes::strides`).
    pub strides: Option<&'a str>,
}

impl<'a> ShapeText<'a> {
    /// A CPU op's recorded shapes as the trace's texts.
    pub fn recorded(trace: &'a Trace, shapes: RecordedShapes) -> ShapeText<'a> {
        let text = |id: Option<NameId>| id.map(|id| trace.name(id));
        ShapeText {
            dims: text(shapes.dims),
            types: text(shapes.types),
            concrete: text(shapes.concrete),
            strides: text(shapes.strides),
        }
    }

    /// The texts as the cost formulas read them.
    pub fn raw(self) -> RawArgs<'a> {
        RawArgs {
            input_dims: self.dims,
            input_type: self.types,
            concrete_inputs: self.concrete,
            input_strides: self.strides,
        }
    }
}

/// The cost formulas: op name and recorded shapes in, one call's cost or the reason there
/// is none out. [`perf`] in production, a stand-in in tests.
pub type CostLookup<'m> = &'m dyn Fn(&str, ShapeText<'_>) -> Result<Cost, String>;

/// Calls' costs from what else the trace records, where their own shapes give none (vLLM's MoE
/// and attention ops: their subtree, kernels and step annotation, `trace_fusion::vllm_calls`).
pub trait CallCosts {
    /// Calls of one op and shapes whose costs differ fall in different classes, each a row of
    /// the op table of its own (vLLM's attention, by engine step); 0 for any other call.
    fn class(&self, _op: usize) -> u32 {
        0
    }

    /// The cost of CPU op `op`'s call; `None` for a call it does not price.
    fn cost(&self, op: usize) -> Option<Result<Cost, String>>;
}

/// No call priced beyond its shapes.
pub struct NoCallCosts;

impl CallCosts for NoCallCosts {
    fn cost(&self, _op: usize) -> Option<Result<Cost, String>> {
        None
    }
}

/// The production cost lookup: the cost formulas of [`perf`] over the recorded
/// shapes (`docs/cost-formulas.md`).
pub fn recorded_cost(op: &str, shapes: ShapeText<'_>) -> Result<Cost, String> {
    let raw = shapes.raw();
    if shapes.dims.is_none() && has_formula(op) {
        return Err("Input Dims not recorded".into());
    }
    cost_from_trace(op, raw).map(of_op_cost).map_err(|e| e.to_string())
}

/// `aten::cat` and `aten::stack`: ops whose tensor list's element type the profiler does not
/// record, which [`list_copy_cost`] reads from their kernel.
pub fn is_list_copy(op: &str) -> bool {
    matches!(op, "aten::cat" | "aten::stack")
}

/// A list copy's cost with the element size its kernel's name gives (PyTorch's
/// `CatArrayBatchedCopy<…OpaqueType<N>…>`, as the fusion groups read it); `None` when the
/// kernel does not say or the shapes do not give a cost.
pub fn list_copy_cost(shapes: ShapeText<'_>, kernel: &str) -> Option<Cost> {
    let size = perf::copy::opaque_element_bytes(kernel)?;
    let raw = shapes.raw();
    let args = perf::OpArgs::parse(raw).ok()?;
    perf::copy::cat_of_element_bytes(&args, size).ok().map(of_op_cost)
}

/// A cost formula's figures as the op table keeps them.
fn of_op_cost(c: perf::OpCost) -> Cost {
    Cost {
        model: family_name(c.family),
        flops: c.flops,
        bytes: c.bytes,
        peak: PeakKey::new(c.unit, precision(c.dtype)),
        estimate: c.estimate,
    }
}

/// The model family as the op table names it.
fn family_name(f: Family) -> &'static str {
    match f {
        Family::Gemm => "GEMM",
        Family::Attention => "attention",
        Family::Conv => "convolution",
        Family::Elementwise => "elementwise",
        Family::Norm => "norm",
        Family::Softmax => "softmax",
        Family::Reduce => "reduction",
        Family::Embedding => "embedding",
        Family::Copy => "copy",
        Family::Triton => "Triton",
    }
}

/// The peak precision of an element type. fp32 matrix work is counted against the fp32 matrix
/// peak (PyTorch leaves TF32 off for matmuls by default); integer and bool ops run on the
/// vector units and have no datasheet peak of their own, so they use the fp32 one.
pub(crate) fn precision(d: DType) -> Precision {
    match d {
        DType::BF16 => Precision::Bf16,
        DType::F16 => Precision::Fp16,
        DType::F32 => Precision::Fp32,
        DType::F64 => Precision::Fp64,
        DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2 | DType::F8E5M2FNUZ => Precision::Fp8,
        _ => Precision::Fp32,
    }
}
