//! An op trace as a fusion op graph (`docs/fusion-rules.md`), so that groups, traffic and
//! time work on it.
//!
//! Tensors are named by their ids (`%10`). Op types:
//!
//! | optrace op | role | op type | why |
//! |---|---|---|---|
//! | `dot`, `allgather_gemm` | matmul | matmul | a GEMM |
//! | `flash_attention_fusion` | matmul | matmul | one fused attention kernel whose work is its two GEMMs: like a matmul it starts a group and an epilogue (a transpose, an add) may join it |
//! | `layer_norm` | reduction | reduction | a normalisation reduces over a dimension |
//! | `add`, `gelu` | elementwise | elementwise | elementwise ops |
//! | `embedding`, `mbedding` | gather | elementwise | each output element is one table element: it fuses into its consumers like an elementwise op (XLA and Inductor fuse gathers the same way) |
//! | `transpose` | reshape | reshape | moves data, computes nothing |
//! | `allreduce`, `allgather` | collective | standalone pair, below | communication is its own kernel |
//! | anything else | opaque | standalone pair, below | we cannot know what it fuses with, so it fuses with nothing |
//!
//! A gather reads the table rows it picks, not the whole table: when the table is a weight
//! (no op produces it), the gather reads a declared tensor `%<table> rows` with the shape of
//! the gather's output, so that a 30522-row vocabulary does not count as read in full for 128
//! tokens. (A table produced in the trace is read as it is, keeping the data edge.)
//!
//! **Standalone ops.** The seed rules know four op types and no "never fuse" one, so an op
//! that must stand alone (a collective, an unknown op) becomes two ops whose types the rules
//! keep apart, joined by a 0-byte token tensor `<name> token`:
//! a *head* of type matmul (a matmul always starts a group) that reads the operands and writes
//! the token, and one *result op* per result, of type reduction, that reads the token and
//! writes the result (a reduction never joins a group with a matmul, and closes its own group
//! so nothing joins after it). Every data edge is kept, so the no-cycle rule stays right; the
//! token is 0 bytes, so the traffic is exactly that of one standalone kernel. The analysis
//! then lists each collective as two one-op groups, `allreduce %17` and `%17 of allreduce`.
//!
//! **Several results.** An instruction with several results is converted the same way (its
//! graph op has one output): a head of the instruction's own type writes the token, and one
//! result op per result reads it. The result ops are reshapes (which join the head's group), or
//! reductions when the head is a reduction (so that the group stays closed). The head's shape is
//! then the token's `[0]`; the result ops carry the real shapes.
//!
//! Operands that no op produces (weights, inputs) are declared with the shape and dtype of
//! their first use. An id produced by two instructions is an error naming both lines (the
//! trace probably mixes ranks).

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use thiserror::Error;

use super::address::TensorTable;
use super::parse::{OpTrace, Record, TensorType};
use fusion::{GraphBuilder, GraphError, OpGraph, OpSpec, OpType};
use units::group_digits;

/// What an optrace op is, for the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Matmul,
    Reduction,
    Elementwise,
    Gather,
    Reshape,
    Collective,
    Opaque,
}

impl Role {
    /// The role as the case view and the JSON name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Matmul => "matmul",
            Role::Reduction => "reduction",
            Role::Elementwise => "elementwise",
            Role::Gather => "gather",
            Role::Reshape => "reshape",
            Role::Collective => "collective",
            Role::Opaque => "opaque",
        }
    }

    pub fn of_op(op: &str) -> Role {
        match op {
            "dot" | "allgather_gemm" | "flash_attention_fusion" => Role::Matmul,
            "layer_norm" => Role::Reduction,
            "add" | "gelu" => Role::Elementwise,
            "embedding" | "mbedding" => Role::Gather,
            "transpose" => Role::Reshape,
            "allreduce" | "allgather" => Role::Collective,
            _ => Role::Opaque,
        }
    }

    /// The seed op type, or `None` for roles that must stand alone.
    pub fn op_type(self) -> Option<OpType> {
        match self {
            Role::Matmul => Some(OpType::Matmul),
            Role::Reduction => Some(OpType::Reduction),
            Role::Elementwise | Role::Gather => Some(OpType::Elementwise),
            Role::Reshape => Some(OpType::Reshape),
            Role::Collective | Role::Opaque => None,
        }
    }
}

/// One op of the converted graph and the instruction it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphOp {
    pub name: String,
    pub line: usize,
    pub op: String,
    pub role: Role,
    pub op_type: OpType,
}

/// The converted graph and how each of its ops relates to the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    pub graph: OpGraph,
    pub ops: Vec<GraphOp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConvertError {
    #[error("tensor %{id} is produced on line {first_line} and again on line {second_line} (does the file mix ranks or streams?)")]
    ProducedTwice { id: u64, first_line: usize, second_line: usize },
    #[error("tensor %{id} on line {line} has a dimension above 2^63 - 1, more than a graph can hold")]
    DimensionTooLarge { id: u64, line: usize },
    #[error("the op graph of the trace is not valid: {0}")]
    Graph(#[from] GraphError),
}

/// Converts a parsed trace into an op graph (see the module docs for the rules).
pub fn to_graph(trace: &OpTrace, tensors: &TensorTable) -> Result<Conversion, ConvertError> {
    let mut producer: HashMap<u64, usize> = HashMap::new();
    for r in &trace.records {
        for t in &r.results {
            if let Some(&first_line) = producer.get(&t.id) {
                return Err(ConvertError::ProducedTwice { id: t.id, first_line, second_line: r.line });
            }
            producer.insert(t.id, r.line);
        }
    }
    let mut conv = Converter { tensors, builder: GraphBuilder::with_capacity(trace.records.len()), ops: Vec::new() };
    let mut declared: HashSet<String> = HashSet::new();
    // The inputs already named for the current record, by id and whether they are the rows of
    // a table: a record may have 100,000 operands, so no search through the list so far.
    let mut named: HashSet<(u64, bool)> = HashSet::new();
    for r in &trace.records {
        let role = Role::of_op(&r.op);
        let mut inputs: Vec<String> = Vec::new();
        named.clear();
        for (position, t) in r.operand_tensors().into_iter().enumerate() {
            let produced = producer.contains_key(&t.id);
            let rows = role == Role::Gather && position == 1 && !produced;
            if !named.insert((t.id, rows)) {
                continue;
            }
            let name = if rows {
                let rows = format!("%{} rows", t.id);
                if declared.insert(rows.clone()) {
                    let shape = conv.result_shape(r, 0);
                    let bpe = conv.bytes_per_element(t.id);
                    conv.builder.declare_tensor(&rows, &to_i64(&shape, t.id, r.line)?, Some(bpe as i64))?;
                }
                rows
            } else {
                let name = tensor_name(t.id);
                if !produced && declared.insert(name.clone()) {
                    let shape =
                        tensors.get(t.id).and_then(|i| i.ty.as_ref()).map(|ty| ty.shape.clone()).unwrap_or_default();
                    let bpe = conv.bytes_per_element(t.id);
                    conv.builder.declare_tensor(&name, &to_i64(&shape, t.id, r.line)?, Some(bpe as i64))?;
                }
                name
            };
            inputs.push(name);
        }
        conv.add_instruction(r, role, inputs)?;
    }
    let Converter { builder, ops, .. } = conv;
    Ok(Conversion { graph: builder.build()?, ops })
}

struct Converter<'a> {
    tensors: &'a TensorTable,
    builder: GraphBuilder,
    ops: Vec<GraphOp>,
}

impl Converter<'_> {
    fn add_instruction(&mut self, r: &Record, role: Role, inputs: Vec<String>) -> Result<(), GraphError> {
        let input_refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let (head_type, result_type) = match role.op_type() {
            None => (OpType::Matmul, OpType::Reduction),
            Some(OpType::Reduction) => (OpType::Reduction, OpType::Reduction),
            Some(t) => (t, OpType::Reshape),
        };
        if role.op_type().is_some() && r.results.len() == 1 {
            let out = tensor_name(r.results[0].id);
            let name = format!("{} {out}", r.op);
            let (shape, bpe) = (self.result_shape(r, 0), self.result_bytes_per_element(r, 0));
            return self.push(r, role, OpSpec::new(&name, head_type, &input_refs, &out, &shape, bpe));
        }
        let ids: Vec<String> = r.results.iter().map(|t| tensor_name(t.id)).collect();
        let head = head_name(&r.op, r.line, &ids);
        let token = format!("{head} token");
        self.push(r, role, OpSpec::new(&head, head_type, &input_refs, &token, &[0], 1))?;
        for (i, out) in ids.iter().enumerate() {
            let (shape, bpe) = (self.result_shape(r, i), self.result_bytes_per_element(r, i));
            let name = format!("{out} of {}", r.op);
            self.push(r, role, OpSpec::new(&name, result_type, &[&token], out, &shape, bpe))?;
        }
        Ok(())
    }

    fn push(&mut self, r: &Record, role: Role, spec: OpSpec) -> Result<(), GraphError> {
        self.ops.push(GraphOp { name: spec.name.clone(), line: r.line, op: r.op.clone(), role, op_type: spec.op_type });
        self.builder.add_op(spec).map(|_| ())
    }

    /// The type of result `i` as written, else that of its first typed use (`None` only for a
    /// tensor never given a type, which the tensor table has already reported).
    fn result_type<'r>(&'r self, r: &'r Record, i: usize) -> Option<&'r TensorType> {
        let t = r.results.get(i)?;
        t.ty.as_ref().or_else(|| self.tensors.get(t.id).and_then(|info| info.ty.as_ref()))
    }

    /// Shape of result `i`; `[]` (one element) when it has no type anywhere.
    fn result_shape(&self, r: &Record, i: usize) -> Vec<u64> {
        self.result_type(r, i).map(|ty| ty.shape.clone()).unwrap_or_default()
    }

    /// Bytes per element of result `i`.
    fn result_bytes_per_element(&self, r: &Record, i: usize) -> u64 {
        self.result_type(r, i).map_or(1, dtype_bytes)
    }

    /// Bytes per element of an operand, from its first typed sighting.
    fn bytes_per_element(&self, id: u64) -> u64 {
        self.tensors.get(id).and_then(|i| i.ty.as_ref()).map_or(1, dtype_bytes)
    }
}

/// The most result ids a head's name lists; more are shortened to the first and the last.
const HEAD_NAME_IDS: usize = 8;

/// The name of the head of an instruction with `ids` as results: `split %240,%241,%242`, or
/// `barrier at line 4` without results. Beyond [`HEAD_NAME_IDS`] results only the first and
/// last are named (`split %1,…,%5000 (5,000 results)`): every result op reads the head's
/// token, named after the head, so a name listing all results would make the graph quadratic in
/// them. The name stays unique: the first result is produced by this instruction only.
fn head_name(op: &str, line: usize, ids: &[String]) -> String {
    match ids {
        [] => format!("{op} at line {line}"),
        [first, .., last] if ids.len() > HEAD_NAME_IDS => {
            format!("{op} {first},…,{last} ({} results)", group_digits(ids.len() as u64))
        }
        _ => format!("{op} {}", ids.join(",")),
    }
}

/// An unknown dtype counts 1 byte per element (the tensor table reports it).
fn dtype_bytes(ty: &TensorType) -> u64 {
    ty.dtype.bytes_per_element().unwrap_or(1)
}

fn tensor_name(id: u64) -> String {
    format!("%{id}")
}

/// A declared shape as the graph builder takes it. A dimension above `i64::MAX` is an error
/// naming the tensor: capping it would declare a tensor of the wrong size.
fn to_i64(shape: &[u64], id: u64, line: usize) -> Result<Vec<i64>, ConvertError> {
    shape.iter().map(|&d| i64::try_from(d).map_err(|_| ConvertError::DimensionTooLarge { id, line })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_optrace;
    use fusion::analyse;

    fn groups(text: &str) -> Result<Vec<Vec<String>>, ConvertError> {
        let trace = parse_optrace(text).unwrap();
        let (tensors, _) = TensorTable::build(&trace);
        let conv = to_graph(&trace, &tensors)?;
        Ok(analyse(&conv.graph).report(&conv.graph).groups)
    }

    #[test]
    fn a_reduction_with_several_results_stays_closed() {
        let g = groups(
            "0:0:0 %1:<4x8xf16> = n.1.add(%0:<4x8xf16>, %9:<4x8xf16>)\n\
             0:0:0 %2:<4x8xf16>, %3:<4xf32>, %4:<4xf32> = n.1.layer_norm(%1:<4x8xf16>, %8:<8xf16>)\n\
             0:0:0 %5:<4x8xf16> = n.1.gelu(%2:<4x8xf16>)\n",
        )
        .unwrap();
        assert_eq!(
            g,
            [
                vec!["add %1", "layer_norm %2,%3,%4"],
                vec!["%2 of layer_norm"],
                vec!["%3 of layer_norm"],
                vec!["%4 of layer_norm"],
                vec!["gelu %5"],
            ]
        );
    }

    #[test]
    fn standalone_ops_keep_their_edges_and_cost_no_extra_bytes() {
        let text = "0:0:0 %1:<4xf16> = n.1.dot(%0:<4xf16>, %7:<4xf16>)\n\
                    0:0:0 %2:<4xf16> = n.1.mystery(%1:<4xf16>)\n\
                    0:0:0 %3:<4xf16> = n.1.add(%2:<4xf16>, %1:<4xf16>)\n\
                    0:0:0  = n.1.barrier(%3:<4xf16>)\n";
        let trace = parse_optrace(text).unwrap();
        let (tensors, _) = TensorTable::build(&trace);
        let conv = to_graph(&trace, &tensors).unwrap();
        let report = analyse(&conv.graph).report(&conv.graph);
        // The add may not join the dot's group: the mystery op lies between them.
        assert_eq!(
            report.groups,
            [vec!["dot %1"], vec!["mystery %2"], vec!["%2 of mystery"], vec!["add %3"], vec!["barrier at line 4"],]
        );
        // Unfused: dot 8+8 read, 8 written; mystery 8 read; its result 8 written;
        // add 16 read, 8 written; barrier 8 read. Tokens are 0 bytes.
        assert_eq!(report.unfused.bytes_read, 16 + 8 + 16 + 8);
        assert_eq!(report.unfused.bytes_written, 8 + 8 + 8);
    }

    #[test]
    fn a_gather_reads_rows_of_a_weight_but_a_produced_table_whole() {
        let text = "0:0:0 %2:<1x4x8xf16> = n.1.embedding(%0:<1x4xi32>, %1:<1000x8xf16>)\n";
        let trace = parse_optrace(text).unwrap();
        let (tensors, _) = TensorTable::build(&trace);
        let conv = to_graph(&trace, &tensors).unwrap();
        let report = analyse(&conv.graph).report(&conv.graph);
        assert_eq!(report.unfused.bytes_read, 16 + 64, "4 indices of 4 bytes, 4 rows of 8 f16");
        let text = "0:0:0 %1:<1000x8xf16> = n.1.gelu(%9:<1000x8xf16>)\n\
                    0:0:0 %2:<1x4x8xf16> = n.1.embedding(%0:<1x4xi32>, %1:<1000x8xf16>)\n";
        let trace = parse_optrace(text).unwrap();
        let (tensors, _) = TensorTable::build(&trace);
        let conv = to_graph(&trace, &tensors).unwrap();
        let report = analyse(&conv.graph).report(&conv.graph);
        assert_eq!(report.unfused.bytes_read, 16_000 + 16 + 16_000);
    }

    /// A weight of 2^63 + 1 one-byte elements fits in 64 bits but not in a graph file's signed
    /// dimensions: before, it was declared as 2^63 − 1 bytes without a word.
    #[test]
    fn a_dimension_past_i64_is_named_not_capped() {
        let e = groups("0:0:0 %2:<4xi8> = n.1.add(%1:<9223372036854775809xi8>, %0:<4xi8>)\n").unwrap_err();
        assert_eq!(e, ConvertError::DimensionTooLarge { id: 1, line: 1 });
        assert_eq!(e.to_string(), "tensor %1 on line 1 has a dimension above 2^63 - 1, more than a graph can hold");
    }

    #[test]
    fn traffic_past_64_bits_is_refused() {
        let e = groups(
            "0:0:0 %1:<4611686018427387904xi8> = n.1.gelu(%0:<4611686018427387904xi8>)\n\
             0:0:0 %2:<4611686018427387904xi8> = n.1.gelu(%1:<4611686018427387904xi8>)\n",
        )
        .unwrap_err();
        // 2^62 bytes each: the first gelu moves 2^63, the second takes the total to 2^64.
        assert!(matches!(&e, ConvertError::Graph(GraphError::TrafficOverflow { op }) if op == "gelu %2"), "{e}");
    }

    #[test]
    fn heads_of_many_results_name_the_first_and_last() {
        let ids = |n: u64| (1..=n).map(tensor_name).collect::<Vec<_>>();
        assert_eq!(head_name("split", 3, &[]), "split at line 3");
        assert_eq!(head_name("split", 3, &ids(HEAD_NAME_IDS as u64)), "split %1,%2,%3,%4,%5,%6,%7,%8");
        assert_eq!(head_name("split", 3, &ids(5000)), "split %1,…,%5000 (5,000 results)");
        let results = (1..=20).map(|i| format!("%{i}")).collect::<Vec<_>>().join(", ");
        let g = groups(&format!("0:0:0 {results} = n.1.split(%0:<20xf16>)\n")).unwrap();
        assert_eq!(g[0], ["split %1,…,%20 (20 results)"]);
        assert_eq!(g[1], ["%1 of split"]);
    }

    #[test]
    fn an_operand_read_twice_is_one_input() {
        let text =
            "0:0:0 %2:<1x4x8xf16> = n.1.embedding(%0:<1x4xi32>, %1:<1000x8xf16>, %0:<1x4xi32>, %1:<1000x8xf16>)\n\
                    0:0:0 %3:<4xf16> = n.1.add(%2:<4xf16>, %2:<4xf16>, %9:<4xf16>)\n";
        let trace = parse_optrace(text).unwrap();
        let (tensors, _) = TensorTable::build(&trace);
        let conv = to_graph(&trace, &tensors).unwrap();
        let inputs = |i: usize| {
            let op = &conv.graph.ops()[i];
            op.inputs.iter().map(|&t| conv.graph.tensor(t).name.as_str()).collect::<Vec<_>>()
        };
        // The table is read as rows in position 1, and whole where it comes again.
        assert_eq!(inputs(0), ["%0", "%1 rows", "%1"]);
        assert_eq!(inputs(1), ["%2", "%9"]);
    }

    #[test]
    fn a_cycle_is_an_error() {
        let e = groups("0:0:0 %5:<2xf16> = n.1.add(%5:<2xf16>, %1:<2xf16>)\n").unwrap_err();
        assert!(matches!(e, ConvertError::Graph(GraphError::Cycle { .. })), "{e}");
    }
}
