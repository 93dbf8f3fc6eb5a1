//! The op graph: ops that read tensors and write one tensor each.
//!
//! An [`OpGraph`] can only be obtained through [`GraphBuilder::build`], which validates it
//! (unique op names, one producer per tensor, no cycle, sizes that fit in 64 bits, and total
//! traffic that fits in 64 bits). Every `OpGraph` therefore has a topological processing order
//! and known tensor sizes, and the analysis on it cannot fail: every traffic figure (read,
//! written, total, per group, fused or unfused, one op alone) is at most the unfused total, which
//! [`GraphBuilder::build`] has checked fits, so no sum of sizes can wrap.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::{At, GraphError};
use super::order;

/// Index of an op in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OpId(pub u32);

/// Index of an interned tensor name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TensorId(pub u32);

impl OpId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl TensorId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The four op kinds of the seed rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpType {
    Elementwise,
    Reduction,
    Matmul,
    Reshape,
}

impl OpType {
    pub const ALL: [OpType; 4] = [OpType::Elementwise, OpType::Reduction, OpType::Matmul, OpType::Reshape];

    pub fn as_str(self) -> &'static str {
        match self {
            OpType::Elementwise => "elementwise",
            OpType::Reduction => "reduction",
            OpType::Matmul => "matmul",
            OpType::Reshape => "reshape",
        }
    }
}

impl fmt::Display for OpType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the four op types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOpType(pub String);

impl FromStr for OpType {
    type Err = UnknownOpType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OpType::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| UnknownOpType(s.to_string()))
    }
}

/// One op as given to the builder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSpec {
    pub name: String,
    pub op_type: OpType,
    pub inputs: Vec<String>,
    pub output: String,
    pub shape: Vec<u64>,
    pub bytes_per_element: u64,
}

impl OpSpec {
    /// Convenience constructor for code that builds graphs (models, tests, generators).
    pub fn new(
        name: &str,
        op_type: OpType,
        inputs: &[&str],
        output: &str,
        shape: &[u64],
        bytes_per_element: u64,
    ) -> Self {
        OpSpec {
            name: name.to_string(),
            op_type,
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            output: output.to_string(),
            shape: shape.to_vec(),
            bytes_per_element,
        }
    }
}

/// A validated op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub name: String,
    pub op_type: OpType,
    pub inputs: Vec<TensorId>,
    pub output: TensorId,
    pub shape: Vec<u64>,
    pub bytes_per_element: u64,
}

/// A declared tensor (graph input or weight) from the file's `tensors` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDecl {
    pub shape: Vec<u64>,
    pub bytes_per_element: Option<u64>,
}

/// Where a tensor's size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeSource {
    /// The shape and element size of the op that produces it.
    Produced,
    /// Declared in `tensors`.
    Declared,
    /// Not produced, not declared: assumed equal to the output of the first op that reads it.
    Assumed,
    /// Not produced, not declared and read by no op (only possible for unused declarations).
    Unused,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    pub name: String,
    pub producer: Option<OpId>,
    /// Boxed: few tensors are declared, and a million-op graph has over a million tensors.
    pub declared: Option<Box<TensorDecl>>,
    pub size_bytes: u64,
    pub size_source: SizeSource,
}

/// A validated, acyclic op graph with its processing order and tensor sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpGraph {
    ops: Vec<Op>,
    tensors: Vec<Tensor>,
    order: Vec<OpId>,
    /// Producer of each tensor (`u32::MAX` for none) and its size, copied out of `tensors`
    /// into dense arrays: grouping and traffic look these up once per op input, and on
    /// million-op graphs the wide `Tensor` records cost a cache miss each.
    producer: Vec<u32>,
    size: Vec<u64>,
}

impl OpGraph {
    /// Ops in file order (index = [`OpId`]).
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    pub fn op(&self, id: OpId) -> &Op {
        &self.ops[id.index()]
    }

    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    pub fn tensor(&self, id: TensorId) -> &Tensor {
        &self.tensors[id.index()]
    }

    /// The op that produces `id`, if any (same as `tensor(id).producer`, faster).
    #[inline]
    pub fn producer(&self, id: TensorId) -> Option<OpId> {
        let p = self.producer[id.index()];
        (p != u32::MAX).then_some(OpId(p))
    }

    /// Size of `id` in bytes (same as `tensor(id).size_bytes`, faster).
    #[inline]
    pub fn size(&self, id: TensorId) -> u64 {
        self.size[id.index()]
    }

    /// The processing order: file order where it is topological, otherwise Kahn's algorithm
    /// taking the ready op that comes first in the file.
    pub fn order(&self) -> &[OpId] {
        &self.order
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Names of the tensors whose size was assumed, sorted.
    pub fn assumed_tensors(&self) -> Vec<&str> {
        let mut v: Vec<&str> =
            self.tensors.iter().filter(|t| t.size_source == SizeSource::Assumed).map(|t| t.name.as_str()).collect();
        v.sort_unstable();
        v
    }
}

/// Builds and validates an [`OpGraph`].
#[derive(Debug, Default)]
pub struct GraphBuilder {
    ops: Vec<Op>,
    /// Op ids by name, and tensor ids by name (the names themselves are kept once, in the
    /// ops and tensors).
    op_names: NameIndex,
    tensors: Vec<Tensor>,
    tensor_index: NameIndex,
}

impl GraphBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(ops: usize) -> Self {
        GraphBuilder {
            ops: Vec::with_capacity(ops),
            op_names: NameIndex::with_capacity(ops),
            // Each op writes one tensor and some read one that no op writes.
            tensors: Vec::with_capacity(ops + ops / 2),
            tensor_index: NameIndex::with_capacity(ops + ops / 2),
        }
    }

    /// Reads (to bring them into the cache) the table slots, and the names they hold, that
    /// adding an op with these names will look at; returns a value only to be ignored.
    pub(crate) fn warm<'s>(&self, name: &str, output: &str, inputs: impl Iterator<Item = &'s str>) -> u32 {
        let tensor = |t: &str| {
            let (hash, id) = self.tensor_index.home(t);
            match self.tensors.get(id as usize) {
                Some(known) if hash == NameIndex::hash(t) => known.name.as_bytes().first().map_or(0, |&b| b as u32),
                _ => id,
            }
        };
        let mut acc = self.op_names.home(name).1 ^ tensor(output);
        for t in inputs {
            acc ^= tensor(t);
        }
        acc
    }

    fn intern(&mut self, name: &str) -> TensorId {
        let tensors = &self.tensors;
        let slot = match self.tensor_index.find(name, |id| &tensors[id as usize].name) {
            Ok(id) => return TensorId(id),
            Err(slot) => slot,
        };
        let id = TensorId(self.tensors.len() as u32);
        self.tensors.push(Tensor {
            name: name.to_string(),
            producer: None,
            declared: None,
            size_bytes: 0,
            size_source: SizeSource::Unused,
        });
        self.tensor_index.insert(slot, id.0);
        id
    }

    /// Declares a tensor that no op produces (a graph input or a weight). A declaration of a
    /// tensor that an op produces is accepted and ignored (`docs/fusion-rules.md`).
    pub fn declare_tensor(
        &mut self,
        name: &str,
        shape: &[i64],
        bytes_per_element: Option<i64>,
    ) -> Result<(), GraphError> {
        if let Some(&dim) = shape.iter().find(|&&d| d < 0) {
            return Err(GraphError::NegativeTensorDimension { tensor: name.to_string(), dim, at: At(None) });
        }
        if let Some(b) = bytes_per_element.filter(|&b| b < 1) {
            return Err(GraphError::TensorBytesPerElement { tensor: name.to_string(), value: b, at: At(None) });
        }
        let id = self.intern(name);
        self.tensors[id.index()].declared = Some(Box::new(TensorDecl {
            shape: shape.iter().map(|&d| d as u64).collect(),
            bytes_per_element: bytes_per_element.map(|b| b as u64),
        }));
        Ok(())
    }

    /// Adds an op; ops are kept in the order they are added (the "file order").
    pub fn add_op(&mut self, spec: OpSpec) -> Result<OpId, GraphError> {
        let OpSpec { name, op_type, inputs, output, shape, bytes_per_element } = spec;
        self.add_op_parts(&name, op_type, inputs.iter().map(String::as_str), &output, shape, bytes_per_element)
    }

    /// [`add_op`](Self::add_op) from borrowed names (a file's reader hands over slices of
    /// its text, so that only the names the graph keeps are copied).
    pub fn add_op_parts<'s>(
        &mut self,
        name: &str,
        op_type: OpType,
        inputs: impl IntoIterator<Item = &'s str>,
        output: &str,
        shape: Vec<u64>,
        bytes_per_element: u64,
    ) -> Result<OpId, GraphError> {
        if name.is_empty() {
            return Err(GraphError::EmptyName { op: name.to_string(), at: At(None) });
        }
        if bytes_per_element < 1 {
            return Err(GraphError::OpBytesPerElement { op: name.to_string(), value: 0, at: At(None) });
        }
        let id = OpId(self.ops.len() as u32);
        let ops = &self.ops;
        let Err(name_slot) = self.op_names.find(name, |id| &ops[id as usize].name) else {
            return Err(GraphError::DuplicateOp { op: name.to_string(), at: At(None) });
        };
        let output_id = self.intern(output);
        if let Some(first) = self.tensors[output_id.index()].producer {
            return Err(GraphError::TwoProducers {
                tensor: output.to_string(),
                first: self.ops[first.index()].name.clone(),
                second: name.to_string(),
                at: At(None),
            });
        }
        self.tensors[output_id.index()].producer = Some(id);
        let inputs = inputs.into_iter().map(|t| self.intern(t)).collect();
        // The slot found above is still free: only tensors were added since.
        self.op_names.insert(name_slot, id.0);
        self.ops.push(Op { name: name.to_string(), op_type, inputs, output: output_id, shape, bytes_per_element });
        Ok(id)
    }

    /// Validates what is left (cycles, sizes) and returns the graph.
    pub fn build(mut self) -> Result<OpGraph, GraphError> {
        let order = processing_order(&self.ops, &self.tensors)?;
        compute_sizes(&self.ops, &mut self.tensors)?;
        check_traffic(&self.ops, &self.tensors)?;
        let producer = self.tensors.iter().map(|t| t.producer.map_or(u32::MAX, |p| p.0)).collect();
        let size = self.tensors.iter().map(|t| t.size_bytes).collect();
        Ok(OpGraph { ops: self.ops, tensors: self.tensors, order, producer, size })
    }
}

/// Ids by name, where the names are kept by their owner (`find` is given them by id): an
/// open-addressing table of `(hash, id)` with linear probing, at most half full. Unlike a
/// `HashMap<String, _>` it holds no second copy of each name, which on a million-op graph
/// is millions of allocations fewer.
#[derive(Debug)]
struct NameIndex {
    /// `(hash, id)`; `id == EMPTY` marks a free slot. The length is a power of two.
    slots: Vec<(u32, u32)>,
    len: usize,
}

const EMPTY: u32 = u32::MAX;

impl Default for NameIndex {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

/// Where [`NameIndex::find`] would have found a name it did not find.
#[derive(Debug, Clone, Copy)]
struct Vacant {
    slot: usize,
    hash: u32,
}

impl NameIndex {
    fn with_capacity(names: usize) -> Self {
        NameIndex { slots: vec![(0, EMPTY); (names * 2).max(8).next_power_of_two()], len: 0 }
    }

    fn hash(name: &str) -> u32 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        h.write(name.as_bytes());
        let h = h.finish();
        (h ^ (h >> 32)) as u32
    }

    /// The slot where a search for `name` starts.
    fn home(&self, name: &str) -> (u32, u32) {
        self.slots[Self::hash(name) as usize & (self.slots.len() - 1)]
    }

    /// The id of `name`, or where to [`insert`](Self::insert) it (valid until the next insert).
    fn find<'n>(&self, name: &str, name_of: impl Fn(u32) -> &'n str) -> Result<u32, Vacant> {
        let hash = Self::hash(name);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let (h, id) = self.slots[i];
            if id == EMPTY {
                return Err(Vacant { slot: i, hash });
            }
            if h == hash && name_of(id) == name {
                return Ok(id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `id` where [`find`](Self::find) said its name goes.
    fn insert(&mut self, at: Vacant, id: u32) {
        self.slots[at.slot] = (at.hash, id);
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            let grown = vec![(0, EMPTY); self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, grown);
            let mask = self.slots.len() - 1;
            for (h, id) in old.into_iter().filter(|&(_, id)| id != EMPTY) {
                let mut i = h as usize & mask;
                while self.slots[i].1 != EMPTY {
                    i = (i + 1) & mask;
                }
                self.slots[i] = (h, id);
            }
        }
    }
}

/// The ops in processing order ([`order::processing_order`]), or the error naming a cycle.
fn processing_order(ops: &[Op], tensors: &[Tensor]) -> Result<Vec<OpId>, GraphError> {
    let mut deps = order::Dependencies { starts: Vec::with_capacity(ops.len() + 1), producers: Vec::new() };
    deps.starts.push(0);
    for op in ops {
        deps.producers.extend(op.inputs.iter().filter_map(|t| tensors[t.index()].producer).map(|p| p.0));
        deps.starts.push(deps.producers.len());
    }
    match order::processing_order(&deps) {
        Ok(order) => Ok(order.into_iter().map(OpId).collect()),
        Err(cycle) => Err(GraphError::Cycle { ops: cycle.into_iter().map(|i| ops[i as usize].name.clone()).collect() }),
    }
}

fn shape_bytes(shape: &[u64], bytes_per_element: u64) -> Option<u64> {
    shape.iter().try_fold(bytes_per_element, |acc, &d| acc.checked_mul(d))
}

/// The unfused traffic (each op reads each of its distinct inputs once and writes its output)
/// counted with overflow checks: the error names the op at which the total passes 2^64 − 1.
///
/// Every other traffic figure is bounded by this one — a group's fused reads are distinct
/// tensors some op of the group reads, its writes outputs of its ops, and a figure for part of
/// the graph is a part of the whole — so once it fits, the analysis can add sizes without
/// checks.
fn check_traffic(ops: &[Op], tensors: &[Tensor]) -> Result<(), GraphError> {
    // The last op that counted each tensor, so that an op listing a tensor twice counts it once.
    let mut seen = vec![u32::MAX; tensors.len()];
    let mut total = 0u64;
    for (i, op) in ops.iter().enumerate() {
        let overflow = || GraphError::TrafficOverflow { op: op.name.clone() };
        total = total.checked_add(tensors[op.output.index()].size_bytes).ok_or_else(overflow)?;
        for &t in &op.inputs {
            if seen[t.index()] != i as u32 {
                seen[t.index()] = i as u32;
                total = total.checked_add(tensors[t.index()].size_bytes).ok_or_else(overflow)?;
            }
        }
    }
    Ok(())
}

/// Tensor sizes as `docs/fusion-rules.md` ("Tensor sizes") defines them.
fn compute_sizes(ops: &[Op], tensors: &mut [Tensor]) -> Result<(), GraphError> {
    let overflow = |t: &Tensor| GraphError::SizeOverflow { tensor: t.name.clone() };
    // The first op in file order that reads each tensor decides assumed sizes and missing
    // element sizes of declarations.
    let mut first_reader: Vec<Option<OpId>> = vec![None; tensors.len()];
    for (i, op) in ops.iter().enumerate() {
        for &t in &op.inputs {
            first_reader[t.index()].get_or_insert(OpId(i as u32));
        }
    }
    for (i, t) in tensors.iter_mut().enumerate() {
        if let Some(p) = t.producer {
            let op = &ops[p.index()];
            t.size_bytes = shape_bytes(&op.shape, op.bytes_per_element).ok_or_else(|| overflow(t))?;
            t.size_source = SizeSource::Produced;
        } else if let Some(decl) = &t.declared {
            let bpe = decl.bytes_per_element.or_else(|| first_reader[i].map(|r| ops[r.index()].bytes_per_element));
            t.size_bytes = shape_bytes(&decl.shape, bpe.unwrap_or(1)).ok_or_else(|| overflow(t))?;
            t.size_source = SizeSource::Declared;
        } else if let Some(r) = first_reader[i] {
            let op = &ops[r.index()];
            t.size_bytes = shape_bytes(&op.shape, op.bytes_per_element).ok_or_else(|| overflow(t))?;
            t.size_source = SizeSource::Assumed;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_index_finds_every_name_and_only_those() {
        let names: Vec<String> = (0..5_000).map(|i| format!("n{i}")).chain(["".into(), "é".into()]).collect();
        let mut index = NameIndex::default();
        for (i, n) in names.iter().enumerate() {
            let at = index.find(n, |id| &names[id as usize]).expect_err("new");
            index.insert(at, i as u32);
        }
        assert!(index.slots.len() >= 2 * names.len());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.find(n, |id| &names[id as usize]).ok(), Some(i as u32));
        }
        assert!(index.find("n5000", |id| &names[id as usize]).is_err());
    }

    #[test]
    fn builder_interns_and_rejects_duplicates() {
        let mut b = GraphBuilder::new();
        for i in 0..2_000u32 {
            let input = if i == 0 { "x".to_string() } else { format!("t{}", i - 1) };
            b.add_op(OpSpec::new(&format!("op{i}"), OpType::Elementwise, &[&input, "w"], &format!("t{i}"), &[2], 1))
                .unwrap();
        }
        let dup = b.add_op(OpSpec::new("op7", OpType::Elementwise, &["x"], "u", &[2], 1));
        assert!(matches!(dup, Err(GraphError::DuplicateOp { op, .. }) if op == "op7"));
        let twice = b.add_op(OpSpec::new("new", OpType::Elementwise, &["x"], "t5", &[2], 1));
        assert!(matches!(twice, Err(GraphError::TwoProducers { first, .. }) if first == "op5"));
        let g = b.build().unwrap();
        assert_eq!(g.tensors().len(), 2_002);
        for i in 1..2_000 {
            assert_eq!(g.ops()[i].inputs[0], g.ops()[i - 1].output);
            assert_eq!(g.ops()[i].inputs[1], g.ops()[0].inputs[1]);
        }
    }
}
