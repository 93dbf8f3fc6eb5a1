//! Why an op's arguments could not be read ([`ArgsError`]) and why an op has no cost
//! ([`NoCost`]). Each message is a short reason for the op's row in a table, so it names
//! the input (by position, as the trace lists them) and what was wrong with it.

use thiserror::Error;

use units::{format_bytes, group_digits};

/// Which of the three recorded arguments a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    InputDims,
    InputType,
    ConcreteInputs,
    InputStrides,
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Field::InputDims => "Input Dims",
            Field::InputType => "Input type",
            Field::ConcreteInputs => "Concrete Inputs",
            Field::InputStrides => "Input Strides",
        })
    }
}

/// The recorded arguments of one op could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgsError {
    #[error("Input Dims missing (trace recorded without record_shapes)")]
    MissingDims,
    #[error("Input type missing though Input Dims is recorded")]
    MissingTypes,
    #[error("{field} is larger than the limit of {} ({} bytes)", format_bytes(*.limit as u64), group_digits(*.limit as u64))]
    TooLong { field: Field, limit: usize },
    #[error("{field} is not valid JSON: {problem}")]
    NotJson { field: Field, problem: String },
    #[error("{field} is not a JSON array")]
    NotArray { field: Field },
    #[error("{field} lists {count} inputs, more than the limit of {limit}")]
    TooManyInputs { field: Field, count: usize, limit: usize },
    #[error("{field} has {len} entries but Input Dims has {dims}")]
    LengthMismatch { field: Field, len: usize, dims: usize },
    #[error("{field} of input {input} is not {expected}")]
    Malformed { field: Field, input: usize, expected: &'static str },
    #[error("dim {dim} in input {input}")]
    NegativeDim { input: usize, dim: i64 },
    #[error("dim {text} in input {input} is not a whole number")]
    BadDim { input: usize, text: String },
    #[error("input {input} has {rank} dimensions, more than the limit of {limit}")]
    RankTooHigh { input: usize, rank: usize, limit: usize },
    #[error("input {input} is a list of {len} tensors, more than the limit of {limit}")]
    ListTooLong { input: usize, len: usize, limit: usize },
}

/// A quantity a model computes, for overflow messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Flops,
    Bytes,
    Elements,
    Size,
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Quantity::Flops => "FLOPs",
            Quantity::Bytes => "bytes",
            Quantity::Elements => "the element count",
            Quantity::Size => "the output size",
        })
    }
}

/// Why an op has no cost. `Display` is the reason shown in the op's row.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NoCost {
    #[error("no model for {0}")]
    UnknownOp(String),
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// An input is missing or of the wrong kind (`found` is "absent", "a scalar", …).
    #[error("input {input} is {found}, expected {expected}")]
    Input { input: usize, expected: &'static str, found: &'static str },
    #[error("unknown element type \"{name}\" of input {input}")]
    UnknownDType { input: usize, name: String },
    #[error("the trace does not record the element type of the tensors in list input {input}")]
    ListDType { input: usize },
    #[error("the trace records no shapes for tensor list input {input}")]
    ListShapes { input: usize },
    #[error("Concrete Inputs missing: {what} (input {input}) is needed")]
    MissingConcrete { input: usize, what: &'static str },
    #[error("cannot read {what} (input {input}) from \"{text}\"")]
    BadConcrete { input: usize, what: &'static str, text: String },
    /// The shapes do not fit the op (`reason` names the inputs and their shapes).
    #[error("{0}")]
    Shapes(String),
    /// A case of the op this module does not model (`reason` says which).
    #[error("{0}")]
    Unsupported(String),
    /// What the op's traffic depends on is not in the trace (`reason` says what): the rows an
    /// embedding backward updates, the number of values a permute that repeats features moves.
    #[error("{0}")]
    NotRecorded(String),
    #[error("overflow computing {what} of input {input}")]
    Overflow { what: Quantity, input: usize },
}
