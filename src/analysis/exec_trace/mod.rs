//! PyTorch Execution Traces (Chakra ET JSON): the ops of one run with the tensor each input
//! and output is, so producer→consumer edges between kernels are exact rather than inferred
//! (`docs/trace-fusion.md`, "Execution traces").
//!
//! An ET is `{"schema", "pid", "nodes": [...]}`; each node has an `id`, its `parent`, the
//! record-function id `rf_id`, the op `name`, and `inputs`/`outputs` with their
//! `input_shapes`/`input_types` (`Tensor(float)`, `Int`, `GenericList[Int,Int]`, …). A tensor
//! value is `[tensor_id, storage_id, offset, numel, element_size, device]`. A node is linked to
//! a Kineto `cpu_op` as Holistic Trace Analysis links them: its `rf_id` equals the op's
//! `External id` (PyTorch writes the record-function id there), here also requiring the same op
//! name so that an ET of another run links nothing rather than the wrong ops.
//!
//! Reading is bounded ([`limits`]): the text's size, the node count, the values per
//! node; serde_json refuses nesting deeper than 128. A parent chain that loops is refused.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub mod by_order;
mod linking;

pub use linking::{link, EtLink};

use limits::{EXEC_TRACE_BYTES, EXEC_TRACE_NODES, EXEC_TRACE_VALUES};

/// Why an execution trace could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EtError {
    #[error("execution trace {file}: larger than the limit of {limit} bytes")]
    TooLarge { file: String, limit: usize },
    #[error("execution trace {file}: not valid JSON: {problem}")]
    Json { file: String, problem: String },
    #[error("execution trace {file}: no \"nodes\" list (not a Chakra execution trace)")]
    NoNodes { file: String },
    #[error("execution trace {file}: {count} nodes, more than the limit of {limit}")]
    TooManyNodes { file: String, count: usize, limit: usize },
    #[error("execution trace {file}: node {index} is malformed: {problem}")]
    Node { file: String, index: usize, problem: String },
    #[error("execution trace {file}: node {index} has {count} inputs or outputs, more than the limit of {limit}")]
    TooManyValues { file: String, index: usize, count: usize, limit: usize },
    #[error("execution trace {file}: two nodes have id {id}")]
    DuplicateId { file: String, id: u64 },
    #[error("execution trace {file}: the parent links make a cycle through node {id}")]
    Cycle { file: String, id: u64 },
}

/// A tensor as the ET names it: its storage (views of one buffer share it), element count and
/// element size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtTensor {
    pub id: u64,
    pub storage: u64,
    pub numel: u64,
    pub element_bytes: u64,
}

impl EtTensor {
    /// Its bytes; `None` when they do not fit in 64 bits.
    pub fn bytes(&self) -> Option<u64> {
        self.numel.checked_mul(self.element_bytes)
    }
}

/// One ET node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EtNode {
    pub id: u64,
    pub parent: u64,
    /// The ET's own number for the thread that ran it (not the OS thread id).
    #[serde(default)]
    pub tid: u64,
    pub rf_id: Option<u64>,
    pub name: String,
    pub inputs: Vec<EtTensor>,
    pub outputs: Vec<EtTensor>,
    /// `Input Dims`, `Input type` and `Concrete Inputs` texts as a Kineto op records them, made
    /// from the node's `input_shapes`, `input_types` and `inputs`, for the cost formulas.
    pub input_dims: String,
    pub input_types: String,
    pub concrete_inputs: String,
}

impl EtNode {
    /// The profiler's bookkeeping nodes (`[pytorch|profiler|execution_trace|thread]`) are not
    /// ops.
    pub fn is_op(&self) -> bool {
        !self.name.starts_with("[pytorch|profiler|")
    }
}

/// A read execution trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecTrace {
    pub pid: Option<i64>,
    pub nodes: Vec<EtNode>,
}

/// Reads an execution trace's JSON text; `file` names it in errors.
pub fn parse_exec_trace(text: &str, file: &str) -> Result<ExecTrace, EtError> {
    let f = || file.to_string();
    if text.len() > EXEC_TRACE_BYTES {
        return Err(EtError::TooLarge { file: f(), limit: EXEC_TRACE_BYTES });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| EtError::Json { file: f(), problem: e.to_string() })?;
    let Some(nodes) = value.get("nodes").and_then(Value::as_array) else {
        return Err(EtError::NoNodes { file: f() });
    };
    if nodes.len() > EXEC_TRACE_NODES {
        return Err(EtError::TooManyNodes { file: f(), count: nodes.len(), limit: EXEC_TRACE_NODES });
    }
    let mut out = Vec::with_capacity(nodes.len());
    for (index, n) in nodes.iter().enumerate() {
        out.push(node(n).map_err(|problem| match problem {
            NodeProblem::TooMany(count) => EtError::TooManyValues { file: f(), index, count, limit: EXEC_TRACE_VALUES },
            NodeProblem::Bad(problem) => EtError::Node { file: f(), index, problem },
        })?);
    }
    check_parents(&out, file)?;
    Ok(ExecTrace { pid: value.get("pid").and_then(Value::as_i64), nodes: out })
}

enum NodeProblem {
    TooMany(usize),
    Bad(String),
}

fn node(n: &Value) -> Result<EtNode, NodeProblem> {
    let bad = |s: &str| NodeProblem::Bad(s.to_string());
    let id = n.get("id").and_then(Value::as_u64).ok_or_else(|| bad("no whole-number \"id\""))?;
    let name = n.get("name").and_then(Value::as_str).ok_or_else(|| bad("no \"name\""))?.to_string();
    let list = |key: &str| -> Result<&[Value], NodeProblem> {
        match n.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) if a.len() > EXEC_TRACE_VALUES => Err(NodeProblem::TooMany(a.len())),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(NodeProblem::Bad(format!("\"{key}\" is not a list"))),
        }
    };
    let (inputs, outputs) = (list("inputs")?, list("outputs")?);
    let (shapes, types) = (list("input_shapes")?, list("input_types")?);
    let output_types = list("output_types")?;
    Ok(EtNode {
        id,
        parent: n.get("parent").and_then(Value::as_u64).unwrap_or(0),
        tid: n.get("tid").and_then(Value::as_u64).unwrap_or(0),
        rf_id: n.get("rf_id").and_then(Value::as_u64),
        name,
        inputs: tensors(inputs, types),
        outputs: tensors(outputs, output_types),
        input_dims: Value::Array(shapes.to_vec()).to_string(),
        input_types: Value::Array(types.iter().map(kineto_type).collect()).to_string(),
        concrete_inputs: Value::Array(
            inputs.iter().zip(types).map(|(v, t)| concrete(v, t.as_str().unwrap_or(""))).collect(),
        )
        .to_string(),
    })
}

/// The tensors among `values` (those typed `Tensor(…)` and written as a tensor tuple).
fn tensors(values: &[Value], types: &[Value]) -> Vec<EtTensor> {
    values
        .iter()
        .zip(types)
        .filter(|(_, t)| t.as_str().is_some_and(|t| t.starts_with("Tensor(")))
        .filter_map(|(v, _)| {
            let a = v.as_array()?;
            let n = |i: usize| a.get(i).and_then(Value::as_u64);
            Some(EtTensor { id: n(0)?, storage: n(1)?, numel: n(3)?, element_bytes: n(4)? })
        })
        .collect()
}

/// An ET type as a Kineto op's `Input type` writes it: `Tensor(float)` → `float`, numbers and
/// flags → `Scalar`, int lists → `ScalarList`, tensor lists → `TensorList`, the rest `""`.
fn kineto_type(t: &Value) -> Value {
    let t = t.as_str().unwrap_or("");
    Value::String(if let Some(inner) = t.strip_prefix("Tensor(").and_then(|s| s.strip_suffix(')')) {
        inner.to_string()
    } else if matches!(t, "Int" | "Double" | "Bool") {
        "Scalar".to_string()
    } else if t.starts_with("GenericList[Tensor") {
        "TensorList".to_string()
    } else if t.starts_with("GenericList[Int") || t == "GenericList[]" {
        "ScalarList".to_string()
    } else {
        String::new()
    })
}

/// A value as Kineto's `Concrete Inputs` writes it: numbers and flags as text (`True`), int lists
/// as `[1, 2]`, the rest `""`.
fn concrete(v: &Value, ty: &str) -> Value {
    Value::String(match (v, ty) {
        (Value::Bool(b), _) => if *b { "True" } else { "False" }.to_string(),
        (Value::Number(n), _) => n.to_string(),
        (Value::Array(a), t) if t.starts_with("GenericList[Int") || t == "GenericList[]" => {
            let ints: Vec<String> = a.iter().map(Value::to_string).collect();
            format!("[{}]", ints.join(", "))
        }
        _ => String::new(),
    })
}

/// Refuses duplicate ids and parent chains that loop (each chain is walked once: linear).
fn check_parents(nodes: &[EtNode], file: &str) -> Result<(), EtError> {
    let mut by_id: FxHashMap<u64, usize> = FxHashMap::default();
    for (i, n) in nodes.iter().enumerate() {
        if by_id.insert(n.id, i).is_some() {
            return Err(EtError::DuplicateId { file: file.to_string(), id: n.id });
        }
    }
    // 0 unvisited, 1 on the current chain, 2 known to end at a root.
    let mut state = vec![0u8; nodes.len()];
    for start in 0..nodes.len() {
        let mut chain = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match state[i] {
                2 => break,
                1 => return Err(EtError::Cycle { file: file.to_string(), id: nodes[i].id }),
                _ => {}
            }
            state[i] = 1;
            chain.push(i);
            let n = &nodes[i];
            at = if n.parent == n.id { None } else { by_id.get(&n.parent).copied() };
        }
        for i in chain {
            state[i] = 2;
        }
    }
    Ok(())
}

/// What the output says of the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecTraceSummary {
    pub file: String,
    pub ops: u64,
    pub linked_ops: u64,
    pub linked_pct: f64,
    /// Kernels whose launching op is linked: their hand-offs are exact.
    pub linked_kernels: u64,
    /// Set when nothing links (the ET is of another run), or when the ops were linked by
    /// their order for want of shared record-function ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDMM: &str = r#"{"schema": "1.0.1", "pid": 7, "nodes": [
        {"name": "[pytorch|profiler|execution_trace|thread]", "id": 2, "rf_id": 0, "parent": 1},
        {"name": "aten::addmm", "id": 14, "rf_id": 5, "parent": 2,
         "inputs": [[7, 8, 0, 1024, 4, "cuda:0"], [3, 4, 0, 524288, 4, "cuda:0"], [13, 6, 0, 1048576, 4, "cuda:0"], 1, 1],
         "input_shapes": [[1024], [512, 1024], [1024, 1024], [], []],
         "input_types": ["Tensor(float)", "Tensor(float)", "Tensor(float)", "Int", "Int"],
         "outputs": [[18, 19, 0, 524288, 4, "cuda:0"]], "output_shapes": [[512, 1024]], "output_types": ["Tensor(float)"]}
    ]}"#;

    #[test]
    fn nodes_become_kineto_style_arguments_and_tensors() {
        let et = parse_exec_trace(ADDMM, "et.json").unwrap();
        assert_eq!(et.pid, Some(7));
        let n = &et.nodes[1];
        assert!(!et.nodes[0].is_op() && n.is_op());
        assert_eq!(n.input_types, r#"["float","float","float","Scalar","Scalar"]"#);
        assert_eq!(n.concrete_inputs, r#"["","","","1","1"]"#);
        assert_eq!(n.inputs.len(), 3);
        assert_eq!(n.outputs, vec![EtTensor { id: 18, storage: 19, numel: 524_288, element_bytes: 4 }]);
        assert_eq!(n.outputs[0].bytes(), Some(2 << 20));
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = |t: &str| parse_exec_trace(t, "x.json").unwrap_err().to_string();
        assert!(e("[1, 2]").contains("no \"nodes\" list"));
        assert!(e("{\"nodes\": [{\"name\": \"a\"}]}").contains("node 0 is malformed: no whole-number \"id\""));
        let cycle = r#"{"nodes": [{"id": 1, "name": "a", "parent": 2}, {"id": 2, "name": "b", "parent": 1}]}"#;
        assert!(e(cycle).contains("cycle through node"), "{}", e(cycle));
        let dup = r#"{"nodes": [{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]}"#;
        assert_eq!(e(dup), "execution trace x.json: two nodes have id 1");
        // A node that is its own parent is a root, not a cycle.
        assert!(parse_exec_trace(r#"{"nodes": [{"id": 1, "name": "a", "parent": 1}]}"#, "x").is_ok());
    }
}
