//! What a compiler recorded of the kernels it made: each kernel's exact group of ops, with
//! their shapes and bytes (XLA's optimized HLO, which every XLA profile carries). Where it
//! exists it replaces what the fusion analysis would otherwise infer from names and shapes.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::intern::NameId;

/// Which compiler's record a group is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compiler {
    /// XLA's optimized HLO, in the profile itself.
    #[default]
    Xla,
    /// Inductor's provenance, in the compile log of the same run (`crate::provenance`).
    Inductor,
}

/// The ops one kernel ran, as the compiler recorded them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledGroup {
    /// Whose record it is.
    #[serde(default)]
    pub compiler: Compiler,
    /// The compiler's name for the kernel's op (an HLO instruction: `loop_reduce_fusion.3`;
    /// Inductor's kernel with its launch site: `triton_poi_fused_add_0:3`).
    pub op: String,
    /// A fusion's kind (`kLoop`, `kInput`, `kOutput`, `kCustom`), or the instruction's opcode
    /// when it is not a fusion (`custom-call`, `convolution`, `copy`); an Inductor kernel's
    /// kind (`Triton pointwise`, `C++`, `library call`).
    pub kind: String,
    /// The ops, in the compiler's order: a fusion's instructions with nested fusions expanded,
    /// leaving out what moves no data of its own (parameters, constants, tuples and their
    /// elements, bitcasts).
    pub ops: Vec<CompiledOp>,
    /// Bytes the kernel moves: its operands read and its outputs written (what XLA's cost
    /// analysis counts as bytes accessed, operands taken whole); `None` when a shape's size
    /// passes 64 bits.
    pub fused_bytes: Option<u64>,
    /// Bytes the ops would move as kernels of their own: each reads its operands and writes
    /// its output.
    pub unfused_bytes: Option<u64>,
    /// The ops' FLOPs, as XLA's cost analysis counts them; `None` when an op has no count here.
    pub flops: Option<u64>,
    /// Whether the work runs on the matrix units (a dot or a convolution among the ops).
    pub matrix: bool,
    /// The element type the work runs in (`bf16`): a matmul's input, else the output's.
    pub element: Option<String>,
}

/// One op of a [`CompiledGroup`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledOp {
    /// The instruction's name (`multiply.5`).
    pub name: String,
    /// Its opcode (`multiply`, `reduce`, `custom-call`); a custom call's target beside it
    /// (`custom-call __cublas$gemm`).
    pub opcode: String,
    /// Its output shape and element type, as HLO writes them (`f32[16,10]`).
    pub shape: String,
    /// Its operands' shapes, in order.
    pub operands: Vec<String>,
    /// The framework op it came from, where the compiler kept it (JAX's `jit(f)/dot_general`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A compiler's own estimate of one launch of a kernel, as the launch records it (Inductor's
/// `kernel_num_gb` and `kernel_flop` on the profiler op of a Triton launch): shown beside the
/// bytes and FLOPs fusionscope counts, never in place of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    /// Bytes one call moves (`kernel_num_gb` × 10⁹, rounded).
    pub bytes: Option<u64>,
    /// FLOPs one call does (`kernel_flop`; Inductor writes 0 for kernels it does not count).
    pub flops: Option<u64>,
}

/// The compiled groups of a trace, and which CPU op (by its id) each belongs to.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Compiled {
    groups: Vec<CompiledGroup>,
    of_op: FxHashMap<u64, u32>,
    /// The compiler's estimates, by the id of the CPU op that launched the kernel.
    #[serde(default)]
    estimates: FxHashMap<u64, Estimate>,
    /// The group of each kernel name's first kernel that has one, as the reader met them: what
    /// a name's classification reads where the name itself says nothing (XLA's `ynn_fusion.5`).
    #[serde(default)]
    of_name: FxHashMap<NameId, u32>,
}

impl Compiled {
    /// Adds a group; its index, for [`Compiled::link`].
    pub fn add(&mut self, group: CompiledGroup) -> u32 {
        self.groups.push(group);
        u32::try_from(self.groups.len() - 1).unwrap_or(u32::MAX)
    }

    /// Says the CPU op `external_id` ran the group `index`.
    pub fn link(&mut self, external_id: u64, index: u32) {
        self.of_op.insert(external_id, index);
    }

    /// The group of the CPU op `external_id`, with its index.
    pub fn of_op(&self, external_id: u64) -> Option<(u32, &CompiledGroup)> {
        let i = *self.of_op.get(&external_id)?;
        self.groups.get(i as usize).map(|g| (i, g))
    }

    /// Says the first kernel of `name` with a group ran the group `index`; a later one of the
    /// same name leaves it (the reader tells its sink of the first,
    /// [`crate::read::EventSink::compiled_name`]).
    pub fn name(&mut self, name: NameId, index: u32) {
        self.of_name.entry(name).or_insert(index);
    }

    /// The group of the first kernel of `name` that has one ([`Compiled::name`]).
    pub fn of_name(&self, name: NameId) -> Option<&CompiledGroup> {
        self.groups.get(*self.of_name.get(&name)? as usize)
    }

    /// Whether the first kernel of `name` with a group was met already.
    pub fn has_name(&self, name: NameId) -> bool {
        self.of_name.contains_key(&name)
    }

    /// Records the compiler's estimate of the launch by CPU op `external_id`.
    pub fn estimate(&mut self, external_id: u64, estimate: Estimate) {
        self.estimates.insert(external_id, estimate);
    }

    /// The compiler's estimate of the launch by CPU op `external_id`, where it recorded one.
    pub fn estimate_of(&self, external_id: u64) -> Option<&Estimate> {
        self.estimates.get(&external_id)
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn groups(&self) -> &[CompiledGroup] {
        &self.groups
    }
}
