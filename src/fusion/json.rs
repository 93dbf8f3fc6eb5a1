//! The graph file format (JSON): reading with positions in every error, and writing back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::{GraphError, Location};
use super::graph::{GraphBuilder, OpGraph, OpSpec, OpType};

/// One op as written in the file. Numbers are signed so that a negative dimension or element
/// size is reported as such rather than as a type error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileOp {
    pub name: String,
    pub op_type: String,
    #[serde(default)]
    pub inputs: Vec<String>,
    pub output: String,
    pub shape: Vec<i64>,
    pub bytes_per_element: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTensor {
    pub shape: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_element: Option<i64>,
}

/// The object form of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphFile {
    pub ops: Vec<FileOp>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tensors: BTreeMap<String, FileTensor>,
}

/// Parses and validates a graph file (object with `ops` and optional `tensors`, or a bare
/// array of ops).
///
/// Graph files come from strangers; what bounds the work on one:
/// - **Depth.** serde_json refuses to recurse past 128 levels (its default recursion limit,
///   kept on), and the format's own types nest 3 deep (`{"ops": [{"shape": [1]}]}`), so an array
///   where an op, a name or a dimension belongs is a type error long before that. The value of
///   an unknown key is skipped by serde_json without recursion (a heap stack), and so is any
///   value by the position scanner (`locate`): a file nested 100,000 deep costs one pass.
/// - **Size.** Everything after serde_json is linear in the file: the scanner reads it once,
///   op and tensor names are found through hash maps ([`GraphBuilder`]), grouping is linear in
///   the op inputs however many candidate groups an op has, and a line and column are worked
///   out only for the one error reported. So no budget beyond the file's size is set: time
///   and memory grow with it, as `fusionscope bench fusion` measures up to a million ops.
pub fn parse_graph(text: &str) -> Result<OpGraph, GraphError> {
    let file = parse_file(text)?;
    let spots = locate(text);
    build(&file, &|i| spots.ops.get(i).map(|&o| location(text, o)), &|name| {
        spots.tensors.get(name).map(|&o| location(text, o))
    })
}

/// Parses the file's structure without validating the graph.
pub fn parse_file(text: &str) -> Result<GraphFile, GraphError> {
    let json_err =
        |e: serde_json::Error| GraphError::Json { line: e.line(), column: e.column(), message: strip_position(&e) };
    match text.trim_start().as_bytes().first() {
        Some(b'[') => Ok(GraphFile { ops: serde_json::from_str(text).map_err(json_err)?, tensors: BTreeMap::new() }),
        Some(b'{') => serde_json::from_str(text).map_err(json_err),
        _ => {
            // Let serde_json say what is wrong with it (empty input, stray text...).
            serde_json::from_str::<serde_json::Value>(text).map_err(json_err)?;
            Err(GraphError::NotAGraph { at: super::error::At(Some(Location { line: 1, column: 1 })) })
        }
    }
}

/// Validates a parsed file into a graph; `op_at` and `tensor_at` give positions for errors.
pub fn build(
    file: &GraphFile,
    op_at: &dyn Fn(usize) -> Option<Location>,
    tensor_at: &dyn Fn(&str) -> Option<Location>,
) -> Result<OpGraph, GraphError> {
    let with_at = |e: GraphError, loc: Option<Location>| match loc {
        Some(l) => e.at(l),
        None => e,
    };
    let mut b = GraphBuilder::with_capacity(file.ops.len());
    for (name, t) in &file.tensors {
        b.declare_tensor(name, &t.shape, t.bytes_per_element).map_err(|e| with_at(e, tensor_at(name)))?;
    }
    for (i, op) in file.ops.iter().enumerate() {
        let at = || op_at(i);
        let op_type: OpType = op.op_type.parse().map_err(|_| {
            with_at(
                GraphError::UnknownOpType { op: op.name.clone(), op_type: op.op_type.clone(), at: Default::default() },
                at(),
            )
        })?;
        if let Some(&dim) = op.shape.iter().find(|&&d| d < 0) {
            return Err(with_at(
                GraphError::NegativeOpDimension { op: op.name.clone(), dim, at: Default::default() },
                at(),
            ));
        }
        if op.bytes_per_element < 1 {
            return Err(with_at(
                GraphError::OpBytesPerElement {
                    op: op.name.clone(),
                    value: op.bytes_per_element,
                    at: Default::default(),
                },
                at(),
            ));
        }
        let spec = OpSpec {
            name: op.name.clone(),
            op_type,
            inputs: op.inputs.clone(),
            output: op.output.clone(),
            shape: op.shape.iter().map(|&d| d as u64).collect(),
            bytes_per_element: op.bytes_per_element as u64,
        };
        b.add_op(spec).map_err(|e| with_at(e, at()))?;
    }
    b.build()
}

/// Writes a graph back in the file format (declared tensors kept, assumed ones left out so
/// that reading it back gives the same analysis).
pub fn to_file(graph: &OpGraph) -> GraphFile {
    let ops = graph
        .ops()
        .iter()
        .map(|op| FileOp {
            name: op.name.clone(),
            op_type: op.op_type.as_str().to_string(),
            inputs: op.inputs.iter().map(|&t| graph.tensor(t).name.clone()).collect(),
            output: graph.tensor(op.output).name.clone(),
            shape: op.shape.iter().map(|&d| d as i64).collect(),
            bytes_per_element: op.bytes_per_element as i64,
        })
        .collect();
    let tensors = graph
        .tensors()
        .iter()
        .filter(|t| t.producer.is_none())
        .filter_map(|t| {
            t.declared.as_ref().map(|d| {
                (
                    t.name.clone(),
                    FileTensor {
                        shape: d.shape.iter().map(|&x| x as i64).collect(),
                        bytes_per_element: d.bytes_per_element.map(|b| b as i64),
                    },
                )
            })
        })
        .collect();
    GraphFile { ops, tensors }
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// 1-based line and column of a byte offset.
fn location(text: &str, offset: usize) -> Location {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    Location { line, column: offset - line_start + 1 }
}

/// Byte offsets of each op object and each declared tensor's key in a well-formed file.
#[derive(Debug, Default)]
struct Spots {
    ops: Vec<usize>,
    tensors: BTreeMap<String, usize>,
}

/// Finds [`Spots`] with a small scanner. It runs only on text serde_json has already accepted,
/// so it can assume well-formed JSON.
fn locate(text: &str) -> Spots {
    let mut sc = Scanner { b: text.as_bytes(), i: 0 };
    let mut spots = Spots::default();
    sc.ws();
    match sc.peek() {
        Some(b'[') => spots.ops = sc.array_elements(),
        Some(b'{') => {
            sc.i += 1;
            loop {
                sc.ws();
                if sc.peek() != Some(b'"') {
                    break;
                }
                let key = sc.string();
                sc.ws();
                sc.i += 1; // ':'
                sc.ws();
                match key.as_str() {
                    "ops" if sc.peek() == Some(b'[') => spots.ops = sc.array_elements(),
                    "tensors" if sc.peek() == Some(b'{') => spots.tensors = sc.object_keys(),
                    _ => sc.value(),
                }
                sc.ws();
                if sc.peek() == Some(b',') {
                    sc.i += 1;
                }
            }
        }
        _ => {}
    }
    spots
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    /// Skips a string starting at `"`, returning its raw contents (escapes left as they are;
    /// enough to match keys, which are compared with the decoded names only when plain).
    fn string(&mut self) -> String {
        let start = self.i + 1;
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => break,
                _ => {}
            }
        }
        let raw = &self.b[start..self.i.saturating_sub(1).max(start)];
        serde_json::from_slice::<String>(&self.b[start - 1..self.i])
            .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
    }

    fn value(&mut self) {
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'[' | b'{') => {
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    match c {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.i += 1;
                }
            }
        }
    }

    fn array_elements(&mut self) -> Vec<usize> {
        let mut starts = Vec::new();
        self.i += 1; // '['
        loop {
            self.ws();
            match self.peek() {
                Some(b']') | None => {
                    self.i += 1;
                    return starts;
                }
                Some(b',') => self.i += 1,
                Some(_) => {
                    starts.push(self.i);
                    self.value();
                }
            }
        }
    }

    fn object_keys(&mut self) -> BTreeMap<String, usize> {
        let mut keys = BTreeMap::new();
        self.i += 1; // '{'
        loop {
            self.ws();
            match self.peek() {
                Some(b'}') | None => {
                    self.i += 1;
                    return keys;
                }
                Some(b',') => self.i += 1,
                Some(b'"') => {
                    let at = self.i;
                    let key = self.string();
                    keys.insert(key, at);
                    self.ws();
                    self.i += 1; // ':'
                    self.ws();
                    self.value();
                }
                Some(_) => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_ops_and_tensor_keys() {
        let text = "{\n \"tensors\": {\"x\": {\"shape\": [1]}},\n \"ops\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\"}\n ]\n}";
        let s = locate(text);
        assert_eq!(
            s.ops.iter().map(|&o| location(text, o)).map(|l| (l.line, l.column)).collect::<Vec<_>>(),
            vec![(4, 3), (5, 3)]
        );
        assert_eq!(location(text, s.tensors["x"]), Location { line: 2, column: 14 });
    }

    #[test]
    fn locate_bare_array_with_nested_strings() {
        let text = "[{\"name\": \"a]\", \"shape\": [1,[2]]}, {\"name\": \"b\\\"\"}]";
        let s = locate(text);
        assert_eq!(s.ops, vec![1, 35]);
    }
}
