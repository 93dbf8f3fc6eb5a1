//! Why an XLA profile could not be read, whichever step found it.

use thiserror::Error;

use trace::read::inflate::GatherError;
use units::{format_bytes, group_digits};

/// Why an XLA profile could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum XplaneError {
    /// prost's description says which message and field held the fault.
    #[error("the protobuf cannot be decoded as an XLA profile (XSpace): {message}")]
    Decode { message: String },
    #[error("not an XLA profile: the protobuf has no device or host planes (planes named {names})")]
    NoPlanes { names: String },
    #[error(
        "the profile is longer than the limit of {} ({} bytes) for an XLA profile",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLarge { limit: usize },
    #[error(
        "the kernel and op names pass the limit of {} in all (in plane \"{plane}\", line \"{line}\")",
        format_bytes(*limit as u64)
    )]
    TooManyNames { plane: String, line: String, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<GatherError> for XplaneError {
    fn from(e: GatherError) -> Self {
        match e {
            GatherError::TooLarge { limit } => XplaneError::TooLarge { limit },
            GatherError::Gzip(e) => XplaneError::Gzip { compressed_offset: e.compressed_offset, message: e.message },
            GatherError::Poisoned => XplaneError::Poisoned,
        }
    }
}
