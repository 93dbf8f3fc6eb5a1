//! Everything that can be wrong with an op graph, as a user would need to be told it.

use std::fmt;

use thiserror::Error;

/// Where in the input file something stands (1-based), when the graph came from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// Optional location, shown as ` (line L, column C)` when known and as nothing otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct At(pub Option<Location>);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, " (line {}, column {})", l.line, l.column),
            None => Ok(()),
        }
    }
}

/// A graph that cannot be analysed. Every variant names the op or tensor at fault, and the
/// position in the JSON file when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GraphError {
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Json { line: usize, column: usize, message: String },

    #[error("graph file must be a JSON object with \"ops\" or a JSON array of ops{at}")]
    NotAGraph { at: At },

    #[error("duplicate op name \"{op}\"{at}")]
    DuplicateOp { op: String, at: At },

    #[error("tensor \"{tensor}\" is produced by two ops, \"{first}\" and \"{second}\"{at}")]
    TwoProducers { tensor: String, first: String, second: String, at: At },

    #[error("op \"{op}\" has unknown op_type \"{op_type}\" (expected elementwise, reduction, matmul or reshape){at}")]
    UnknownOpType { op: String, op_type: String, at: At },

    #[error("op \"{op}\" has a negative dimension ({dim}) in its shape{at}")]
    NegativeOpDimension { op: String, dim: i64, at: At },

    #[error("tensor \"{tensor}\" has a negative dimension ({dim}) in its shape{at}")]
    NegativeTensorDimension { tensor: String, dim: i64, at: At },

    #[error("op \"{op}\" has bytes_per_element {value}; it must be at least 1{at}")]
    OpBytesPerElement { op: String, value: i64, at: At },

    #[error("tensor \"{tensor}\" has bytes_per_element {value}; it must be at least 1{at}")]
    TensorBytesPerElement { tensor: String, value: i64, at: At },

    #[error("op \"{op}\" has an empty name{at}")]
    EmptyName { op: String, at: At },

    /// The ops on one cycle, in data-flow order; the first op reads the last one's output.
    #[error("the graph has a cycle: {}", cycle_text(.ops))]
    Cycle { ops: Vec<String> },

    #[error("tensor \"{tensor}\" is too large: its size in bytes does not fit in 64 bits")]
    SizeOverflow { tensor: String },

    /// The unfused traffic (every op reading its inputs and writing its output) passes 2^64 − 1
    /// bytes at this op, in file order: totals that large cannot be counted in 64 bits.
    #[error(
        "the graph is too large: its memory traffic passes 2^64 bytes at op \"{op}\" (each tensor fits, but the \
         bytes its ops read and write do not fit in 64 bits)"
    )]
    TrafficOverflow { op: String },
}

fn cycle_text(ops: &[String]) -> String {
    let mut s = ops.join(" -> ");
    if let Some(first) = ops.first() {
        s.push_str(" -> ");
        s.push_str(first);
    }
    s
}

impl GraphError {
    /// Attaches a file position to an error raised without one.
    pub fn at(mut self, loc: Location) -> Self {
        let slot = match &mut self {
            GraphError::NotAGraph { at }
            | GraphError::DuplicateOp { at, .. }
            | GraphError::TwoProducers { at, .. }
            | GraphError::UnknownOpType { at, .. }
            | GraphError::NegativeOpDimension { at, .. }
            | GraphError::NegativeTensorDimension { at, .. }
            | GraphError::OpBytesPerElement { at, .. }
            | GraphError::TensorBytesPerElement { at, .. }
            | GraphError::EmptyName { at, .. } => Some(at),
            GraphError::Json { .. }
            | GraphError::Cycle { .. }
            | GraphError::SizeOverflow { .. }
            | GraphError::TrafficOverflow { .. } => None,
        };
        if let Some(at) = slot {
            if at.0.is_none() {
                at.0 = Some(loc);
            }
        }
        self
    }
}
