//! XLA's optimized HLO, as an XLA profile records it: one `HloProto` per compiled program in
//! the `/host:metadata` plane. A GPU kernel's `hlo_op` stat names the instruction it ran; a
//! fusion instruction calls a computation whose instructions are exactly the ops the kernel
//! fused. This file decodes the modules (prost structs written by hand from `hlo.proto`
//! beside it) and turns an instruction into its [`CompiledGroup`]: its ops with their shapes,
//! and the bytes the kernel moves fused and would move unfused.
//!
//! A module is a stranger's data too: a fusion that calls itself, computations nested past
//! [`FUSION_DEPTH`], instructions past [`limits::HLO_INSTRUCTIONS`] or a shape whose size
//! passes 64 bits end in an error or an unknown byte count, never a hang or a panic.

use rustc_hash::FxHashMap;

use trace::compiled::{CompiledGroup, CompiledOp, Compiler};

/// How deep fusions may nest inside each other (XLA nests them one or two deep).
pub const FUSION_DEPTH: usize = 16;

#[derive(Clone, PartialEq, prost::Message)]
pub struct HloProto {
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
    /// Backend configs interned once per module ([`Payload::id`] indexes them).
    #[prost(bytes = "vec", repeated, tag = "22")]
    pub payloads: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub root_id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    #[prost(int64, tag = "9")]
    pub parameter_number: i64,
    #[prost(string, tag = "11")]
    pub fusion_kind: String,
    #[prost(message, optional, tag = "16")]
    pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    #[prost(message, optional, tag = "30")]
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    #[prost(int64, tag = "35")]
    pub id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub called_computation_ids: Vec<i64>,
    /// The backend's settings (on a GPU, JSON: a cuBLAS call's dot dimensions, a cuDNN
    /// convolution's algorithm), as older XLA writes them.
    #[prost(bytes = "vec", tag = "43")]
    pub backend_config: Vec<u8>,
    /// The same, as newer XLA writes it: inline or an index into the module's payloads.
    #[prost(message, optional, tag = "99")]
    pub backend_config_payload: Option<Payload>,
}

/// A value kept inline or by its index into [`HloModuleProto::payloads`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct Payload {
    #[prost(bytes = "vec", tag = "1")]
    pub value: Vec<u8>,
    #[prost(int64, tag = "2")]
    pub id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ShapeProto {
    #[prost(int32, tag = "2")]
    pub element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
}

/// Which kernel dimension holds a convolution's output features (the rest of the kernel is
/// what each output element reads).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConvolutionDimensionNumbers {
    #[prost(int64, tag = "4")]
    pub kernel_output_feature_dimension: i64,
}

/// Which of a dot's left-hand dimensions it contracts.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DotDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub lhs_contracting_dimensions: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
}

/// An element type's name as HLO writes it, and its size in bits (`PrimitiveType`).
fn element(t: i32) -> Option<(&'static str, u64)> {
    Some(match t {
        1 => ("pred", 8),
        30 => ("s1", 1),
        26 => ("s2", 2),
        21 => ("s4", 4),
        2 => ("s8", 8),
        3 => ("s16", 16),
        4 => ("s32", 32),
        5 => ("s64", 64),
        31 => ("u1", 1),
        27 => ("u2", 2),
        22 => ("u4", 4),
        6 => ("u8", 8),
        7 => ("u16", 16),
        8 => ("u32", 32),
        9 => ("u64", 64),
        10 => ("f16", 16),
        11 => ("f32", 32),
        16 => ("bf16", 16),
        12 => ("f64", 64),
        19 => ("f8e5m2", 8),
        28 => ("f8e4m3", 8),
        20 => ("f8e4m3fn", 8),
        23 => ("f8e4m3b11fnuz", 8),
        29 => ("f8e3m4", 8),
        24 => ("f8e5m2fnuz", 8),
        25 => ("f8e4m3fnuz", 8),
        32 => ("f4e2m1fn", 4),
        33 => ("f8e8m0fnu", 8),
        15 => ("c64", 64),
        18 => ("c128", 128),
        _ => return None,
    })
}

/// A shape as HLO's text writes it: `f32[16,10]`, `(f32[16], s32[])`, `token[]`.
pub fn shape_text(shape: &ShapeProto) -> String {
    match shape.element_type {
        13 => {
            let parts: Vec<String> = shape.tuple_shapes.iter().map(shape_text).collect();
            format!("({})", parts.join(", "))
        }
        t => {
            let name = element(t).map_or(
                match t {
                    14 => "opaque",
                    17 => "token",
                    _ => "unknown",
                },
                |(n, _)| n,
            );
            let dims: Vec<String> = shape.dimensions.iter().map(i64::to_string).collect();
            format!("{name}[{}]", dims.join(","))
        }
    }
}

/// An array's element type as HLO writes it (`bf16`); a tuple's first element's.
fn element_name(shape: &ShapeProto) -> String {
    match shape.element_type {
        13 => shape.tuple_shapes.first().map_or_else(String::new, element_name),
        t => element(t).map_or_else(String::new, |(n, _)| n.to_string()),
    }
}

/// The bytes a value of `shape` occupies (sub-byte types packed, rounded up); `None` when the
/// size passes 64 bits or a dimension is negative. Tokens and opaque values hold none.
pub fn shape_bytes(shape: &ShapeProto) -> Option<u64> {
    if shape.element_type == 13 {
        return shape.tuple_shapes.iter().try_fold(0u64, |sum, s| sum.checked_add(shape_bytes(s)?));
    }
    let Some((_, bits)) = element(shape.element_type) else { return Some(0) };
    let elements = shape.dimensions.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))?;
    Some(elements.checked_mul(bits)?.div_ceil(8))
}

/// The elements of an array shape (a tuple's first element: a custom call's result beside its
/// scratch space); `None` past 64 bits.
fn elements(shape: &ShapeProto) -> Option<u64> {
    if shape.element_type == 13 {
        return elements(shape.tuple_shapes.first()?);
    }
    shape.dimensions.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
}

/// Ops that compute one result per output element from elements at the same place, counted as
/// one FLOP per element as XLA's cost analysis counts them.
const ELEMENTWISE: [&str; 44] = [
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "clamp",
    "compare",
    "complex",
    "convert",
    "cosine",
    "divide",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sqrt",
    "subtract",
    "tanh",
    "xor",
];

/// Ops that only move or lay out data: no FLOPs.
const MOVEMENT: [&str; 17] = [
    "bitcast",
    "broadcast",
    "concatenate",
    "constant",
    "copy",
    "dynamic-slice",
    "dynamic-update-slice",
    "gather",
    "get-tuple-element",
    "iota",
    "pad",
    "parameter",
    "reshape",
    "reverse",
    "slice",
    "transpose",
    "tuple",
];

/// FLOPs of one instruction from its shapes, as XLA's cost analysis counts them: one per output
/// element for elementwise ops, one per input element for a reduction, 2 × output elements ×
/// the contracted size for a dot or a convolution (cuDNN's convolution custom calls included,
/// and cuBLAS's, whose contracted dimensions are in `config`, the instruction's backend
/// config); none for data movement; `None` for an op with no count here (a sort).
pub fn op_flops(x: &HloInstructionProto, config: &[u8], operands: &[Option<&ShapeProto>]) -> Option<u64> {
    let out = || elements(x.shape.as_ref()?);
    let operand = |i: usize| operands.get(i).copied().flatten();
    let opcode = x.opcode.as_str();
    if MOVEMENT.contains(&opcode) {
        return Some(0);
    }
    if ELEMENTWISE.contains(&opcode) {
        return out();
    }
    match opcode {
        "reduce" | "reduce-window" => elements(operand(0)?),
        "dot" => dot_flops(&x.dot_dimension_numbers.as_ref()?.lhs_contracting_dimensions, operand(0)?, out()?),
        "convolution" => conv_flops(x, operand(1)?, out()?),
        "custom-call" if x.custom_call_target.starts_with("__cudnn$conv") => conv_flops(x, operand(1)?, out()?),
        "custom-call" if x.custom_call_target.starts_with("__cublas$") => {
            dot_flops(&gemm_contracting(config)?, operand(0)?, out()?)
        }
        _ => None,
    }
}

/// 2 × output elements × the product of the left operand's contracted dimensions.
fn dot_flops(contracting: &[i64], lhs: &ShapeProto, out: u64) -> Option<u64> {
    let k = contracting
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(*lhs.dimensions.get(usize::try_from(d).ok()?)?).ok()?))?;
    out.checked_mul(k)?.checked_mul(2)
}

/// The longest backend config read: a cuBLAS call's is a few hundred bytes.
const BACKEND_CONFIG_BYTES: usize = 64 << 10;

/// The left operand's contracted dimensions of a cuBLAS call, from its backend config (XLA's
/// `GpuBackendConfig` as JSON: `gemm_backend_config.dot_dimension_numbers`, each dimension a
/// number or, as protobuf's JSON writes 64-bit integers, a string).
fn gemm_contracting(config: &[u8]) -> Option<Vec<i64>> {
    if config.len() > BACKEND_CONFIG_BYTES {
        return None;
    }
    let config: serde_json::Value = serde_json::from_slice(config).ok()?;
    let dims = config.get("gemm_backend_config")?.get("dot_dimension_numbers")?.get("lhs_contracting_dimensions")?;
    dims.as_array()?
        .iter()
        .map(|d| match d {
            serde_json::Value::String(s) => s.parse().ok(),
            d => d.as_i64(),
        })
        .collect()
}

/// 2 × output elements × what each reads of the kernel: its elements over its output features.
fn conv_flops(x: &HloInstructionProto, kernel: &ShapeProto, out: u64) -> Option<u64> {
    let d = x.convolution_dimension_numbers.as_ref()?;
    let features =
        u64::try_from(*kernel.dimensions.get(usize::try_from(d.kernel_output_feature_dimension).ok()?)?).ok()?;
    let per_output = elements(kernel)?.checked_div(features)?;
    out.checked_mul(per_output)?.checked_mul(2)
}

/// Whether an instruction runs on the matrix units (a dot or a convolution).
fn is_matrix(x: &HloInstructionProto) -> bool {
    matches!(x.opcode.as_str(), "dot" | "convolution")
        || (x.opcode == "custom-call"
            && ["__cudnn$conv", "__cublas$", "__triton_gemm"].iter().any(|t| x.custom_call_target.starts_with(t)))
}

/// Why a module cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HloError {
    /// A computation's instructions pass the budget.
    TooManyInstructions { module: String, limit: usize },
}

impl std::fmt::Display for HloError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HloError::TooManyInstructions { module, limit } => {
                write!(f, "HLO module {module:?} has more than {limit} instructions")
            }
        }
    }
}

/// One module, indexed: its computations by id and each instruction by name.
pub struct Module {
    pub(super) proto: HloModuleProto,
    computations: FxHashMap<i64, usize>,
    /// Instruction name → (computation, instruction) indices.
    by_name: FxHashMap<String, (usize, usize)>,
    /// Per computation: instruction id → index (operands refer to instructions by id).
    ids: Vec<FxHashMap<i64, usize>>,
    /// A fusion's kernel name (its instruction name as XLA names the kernel it emits:
    /// `gemm_fusion_dot.2` runs `gemm_fusion_dot_2`) → the instruction; `None` where two
    /// instructions would name the same kernel.
    by_kernel: FxHashMap<String, Option<String>>,
}

/// The kernel name XLA gives an instruction's emitted code: every character that may not
/// stand in a symbol (`.`, `-`) becomes `_`.
fn kernel_name(instruction: &str) -> String {
    instruction.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

impl Module {
    pub fn new(proto: HloModuleProto) -> Result<Module, HloError> {
        let count: usize = proto.computations.iter().map(|c| c.instructions.len()).sum();
        if count > limits::HLO_INSTRUCTIONS {
            return Err(HloError::TooManyInstructions { module: proto.name, limit: limits::HLO_INSTRUCTIONS });
        }
        let computations = proto.computations.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        let mut by_name = FxHashMap::default();
        let mut by_kernel: FxHashMap<String, Option<String>> = FxHashMap::default();
        let mut ids = Vec::with_capacity(proto.computations.len());
        for (c, comp) in proto.computations.iter().enumerate() {
            for (i, inst) in comp.instructions.iter().enumerate() {
                by_name.entry(inst.name.clone()).or_insert((c, i));
                if inst.opcode == "fusion" {
                    by_kernel
                        .entry(kernel_name(&inst.name))
                        .and_modify(|named| *named = None)
                        .or_insert_with(|| Some(inst.name.clone()));
                }
            }
            ids.push(comp.instructions.iter().enumerate().map(|(i, x)| (x.id, i)).collect());
        }
        Ok(Module { proto, computations, by_name, ids, by_kernel })
    }

    /// The instruction a kernel ran for. A kernel's `hlo_op` names it, except inside a command
    /// buffer (XLA's CUDA graph of several thunks), where `hlo_op` is the buffer's name
    /// (`command_buffer_1`), which is no instruction: there the fusion whose kernel name the
    /// kernel bears is the one it ran. `None`: neither names an instruction of this module.
    pub fn instruction_of<'a>(&'a self, hlo_op: &'a str, kernel: &str) -> Option<&'a str> {
        if self.by_name.contains_key(hlo_op) {
            return Some(hlo_op);
        }
        self.by_kernel.get(kernel)?.as_deref()
    }

    pub fn name(&self) -> &str {
        &self.proto.name
    }

    /// An instruction's backend config, wherever the module keeps it: in the instruction (as
    /// older XLA writes it, and newer XLA inline) or interned among the module's payloads.
    pub fn backend_config<'a>(&'a self, x: &'a HloInstructionProto) -> &'a [u8] {
        if !x.backend_config.is_empty() {
            return &x.backend_config;
        }
        match &x.backend_config_payload {
            Some(p) if !p.value.is_empty() => &p.value,
            Some(p) => {
                usize::try_from(p.id).ok().and_then(|i| self.proto.payloads.get(i)).map_or(&[], |v| v.as_slice())
            }
            None => &[],
        }
    }

    /// The group of the instruction named `op`: a fusion's instructions, or the instruction
    /// alone; `None` when the module has no instruction of that name.
    pub fn group(&self, op: &str) -> Option<CompiledGroup> {
        let &(c, i) = self.by_name.get(op)?;
        let comp = &self.proto.computations[c];
        let inst = &comp.instructions[i];
        let operand_shapes = |c: usize, inst: &HloInstructionProto| -> Vec<Option<&ShapeProto>> {
            let comp = &self.proto.computations[c];
            inst.operand_ids
                .iter()
                .map(|id| self.ids[c].get(id).and_then(|&i| comp.instructions[i].shape.as_ref()))
                .collect()
        };
        let io_bytes = |shapes: &[Option<&ShapeProto>], out: Option<&ShapeProto>| -> Option<u64> {
            let read = shapes.iter().try_fold(0u64, |s, sh| s.checked_add(shape_bytes((*sh)?)?))?;
            read.checked_add(shape_bytes(out?)?)
        };
        let fused_bytes = io_bytes(&operand_shapes(c, inst), inst.shape.as_ref());
        let mut ops = Vec::new();
        let mut unfused = Some(0u64);
        let mut flops = Some(0u64);
        // The element type the work runs in: a matmul's left operand, else the output's.
        let mut matrix: Option<String> = None;
        let mut count = |x: &HloInstructionProto, shapes: &[Option<&ShapeProto>]| {
            flops = flops.and_then(|f| f.checked_add(op_flops(x, self.backend_config(x), shapes)?));
            if matrix.is_none() && is_matrix(x) {
                matrix = Some(shapes.first().copied().flatten().map_or_else(String::new, element_name));
            }
        };
        if inst.opcode == "fusion" {
            let mut stack = vec![(inst.called_computation_ids.first().copied(), 0usize)];
            let mut seen = Vec::new();
            while let Some((Some(id), depth)) = stack.pop() {
                let Some(&ci) = self.computations.get(&id) else { continue };
                // A fusion that calls itself, or nests past the budget: its inner ops are left out.
                if depth >= FUSION_DEPTH || seen.contains(&ci) {
                    unfused = None;
                    continue;
                }
                seen.push(ci);
                let inner = &self.proto.computations[ci];
                for x in &inner.instructions {
                    match x.opcode.as_str() {
                        // What moves no data of its own: a bitcast reinterprets its operand in place.
                        "parameter" | "tuple" | "get-tuple-element" | "constant" | "bitcast" => continue,
                        "fusion" => {
                            stack.push((x.called_computation_ids.first().copied(), depth + 1));
                            continue;
                        }
                        _ => {}
                    }
                    let shapes = operand_shapes(ci, x);
                    unfused = unfused.and_then(|u| u.checked_add(io_bytes(&shapes, x.shape.as_ref())?));
                    count(x, &shapes);
                    ops.push(compiled_op(x, &shapes));
                }
            }
        } else {
            let shapes = operand_shapes(c, inst);
            unfused = fused_bytes;
            count(inst, &shapes);
            ops.push(compiled_op(inst, &shapes));
        }
        let kind = if inst.opcode == "fusion" { inst.fusion_kind.clone() } else { inst.opcode.clone() };
        let on_matrix = matrix.is_some();
        let element = match matrix {
            Some(e) if !e.is_empty() => e,
            _ => inst.shape.as_ref().map_or_else(String::new, element_name),
        };
        Some(CompiledGroup {
            compiler: Compiler::Xla,
            op: op.to_string(),
            kind,
            ops,
            fused_bytes,
            unfused_bytes: unfused,
            flops,
            matrix: on_matrix,
            element: Some(element).filter(|e| !e.is_empty()),
        })
    }
}

fn compiled_op(x: &HloInstructionProto, operands: &[Option<&ShapeProto>]) -> CompiledOp {
    let opcode = if x.custom_call_target.is_empty() {
        x.opcode.clone()
    } else {
        format!("{} {}", x.opcode, x.custom_call_target)
    };
    CompiledOp {
        name: x.name.clone(),
        opcode,
        shape: x.shape.as_ref().map_or_else(|| "unknown".to_string(), shape_text),
        operands: operands.iter().map(|s| s.map_or_else(|| "unknown".to_string(), shape_text)).collect(),
        source: x.metadata.as_ref().map(|m| m.op_name.clone()).filter(|n| !n.is_empty()),
    }
}

#[cfg(test)]
mod tests;
