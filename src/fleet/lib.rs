//! Fleet scale: every trace's facts as Parquet tables any engine reads (DataFusion, Spark,
//! DuckDB), and queries over any number of exported traces with DataFusion embedded
//! (`docs/fleet.md`). Native only: the page analyses one trace at a time in the browser.
//!
//! | module | what it is |
//! |---|---|
//! | [`schema`] | the tables, their columns and the schema version every file carries |
//! | [`facts`] | one trace and its analysis → its tables' rows (pure) |
//! | [`files`] | where the tables go (`DIR/<table>/job=<job>/rank=<rank>/<trace>.parquet`), writing them, checking them on reading |
//! | [`streamed`] | a trace too large to hold: its kernel rows written as it is read |
//! | [`query`] | DataFusion over export folders: the canned reports (`sql/`) and a user's read-only SQL |
//! | [`scan`] | how much of the files a query has read, for its progress |

#![cfg(not(target_arch = "wasm32"))]

pub mod facts;
pub mod files;
pub mod query;
pub mod scan;
pub mod schema;
pub mod streamed;

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The largest trace file (as stored, gzip or not) an export reads whole, to give its kernels
/// their launching ops and the trace its op table and fusion groups. A larger one streams: its
/// kernels and collectives in bounded memory, as `trace --summary-only` and `ranks` read.
pub const WHOLE_TRACE_FILE_BYTES: u64 = 256 << 20;

/// Why an export or a query failed, naming the file or the query.
#[derive(Debug, Error)]
pub enum FleetError {
    #[error("{}: {message}", file.display())]
    Io { file: PathBuf, message: String },
    #[error("{}: not a Parquet file fusionscope can read: {message}", file.display())]
    Parquet { file: PathBuf, message: String },
    #[error(
        "{}: written with schema version {}, and this fusionscope reads version {}: export the traces again",
        file.display(),
        found.as_deref().unwrap_or("(none)"),
        schema::SCHEMA_VERSION
    )]
    Version { file: PathBuf, found: Option<String> },
    #[error("{}: no exported tables here (`fusionscope export TRACE… -o DIR` writes them)", dir.display())]
    NotAnExport { dir: PathBuf },
    #[error("query failed: {message}")]
    Query { message: String },
    #[error(
        "the query needs more memory than its limit of {limit} even spilling to disk: narrow it (WHERE, \
         fewer GROUP BY keys, LIMIT) or raise the limit (fleet --memory-mb); DataFusion says: {message}"
    )]
    Memory { limit: String, message: String },
}

/// The allocation that failed, from DataFusion's out-of-memory message: "Failed to allocate
/// additional 256.0 KB for FinalHashAggregateStream[0]", which names the operator (here a GROUP
/// BY), without its list of every reservation's bytes and the pool's state.
fn allocation(message: &str) -> &str {
    let failed = message.rfind("Failed to allocate").map_or(message, |at| &message[at..]);
    failed.split(" with ").next().unwrap_or(failed).trim_end()
}

impl FleetError {
    pub(crate) fn io(file: &Path, e: std::io::Error) -> FleetError {
        FleetError::Io { file: file.to_path_buf(), message: e.to_string() }
    }

    fn query(e: impl std::fmt::Display) -> FleetError {
        FleetError::Query { message: e.to_string() }
    }

    /// A query's failure; running out of its memory limit (`limit` bytes) said as such.
    fn of_query(e: datafusion::error::DataFusionError, limit: usize) -> FleetError {
        match e.find_root() {
            datafusion::error::DataFusionError::ResourcesExhausted(message) => FleetError::Memory {
                limit: units::format_bytes(limit as u64),
                message: allocation(message).to_string(),
            },
            _ => FleetError::query(e),
        }
    }
}
