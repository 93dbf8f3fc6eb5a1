//! Why a Kineto trace could not be read, with where: offsets count bytes of the JSON text
//! (after decompression, for a `.json.gz`).

use thiserror::Error;

use super::scan::{Part, ScanError};
use trace::read::inflate::InflateError;
use units::{format_bytes, group_digits};

/// Why a trace could not be read. Offsets count bytes of the JSON text, i.e. after gzip
/// decompression for a `.json.gz` file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceError {
    #[error("not a trace: {problem} at byte {offset} of the JSON text")]
    Structure { offset: u64, problem: &'static str },
    #[error("malformed event at byte {offset} of the JSON text: {message}")]
    Event { offset: u64, message: String },
    #[error("malformed top-level \"{key}\" at byte {offset} of the JSON text: {message}")]
    Field { key: String, offset: u64, message: String },
    /// One event, top-level value or key is longer than its budget ([`limits`]).
    #[error(
        "{part} starting at byte {offset} of the JSON text is longer than the limit of {} ({} bytes)",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLong { part: Part, offset: u64, limit: usize },
    /// Arrays and objects nest deeper than the budget in one item; `at` is the bracket.
    #[error("{part} starting at byte {offset} of the JSON text nests deeper than the limit of {limit} levels (at byte {at})")]
    TooDeep { part: Part, offset: u64, at: u64, limit: u32 },
    /// The distinct names held (kernels, ops, annotations) pass their budget.
    #[error(
        "the event at byte {offset} of the JSON text takes the trace's distinct names past the limit of {} in all",
        format_bytes(*limit as u64)
    )]
    TooManyNames { offset: u64, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("not a trace: the JSON has no \"traceEvents\" array")]
    NoEvents,
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<ScanError> for TraceError {
    fn from(e: ScanError) -> Self {
        match e {
            ScanError::Syntax { offset, problem } => TraceError::Structure { offset, problem },
            ScanError::TooLong { part, offset, limit } => TraceError::TooLong { part, offset, limit },
            ScanError::TooDeep { part, offset, at, limit } => TraceError::TooDeep { part, offset, at, limit },
        }
    }
}

impl From<InflateError> for TraceError {
    fn from(e: InflateError) -> Self {
        TraceError::Gzip { compressed_offset: e.compressed_offset, message: e.message }
    }
}

/// Byte offset inside `bytes` of a serde_json error (which reports line and column).
pub(crate) fn error_offset(bytes: &[u8], e: &serde_json::Error) -> u64 {
    let mut line = 1;
    let mut line_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if line == e.line() {
            break;
        }
        if b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    (line_start + e.column().saturating_sub(1)).min(bytes.len()) as u64
}

/// serde_json's message without its " at line L column C" (the offset says where).
pub(crate) fn strip(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
