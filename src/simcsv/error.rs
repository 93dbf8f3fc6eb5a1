//! Why a simulator table was rejected: each error names the line (and the column or limit),
//! so that a user can find the cell. Apart from the table's types, so that the reader and the
//! table can both use it without importing each other.

use thiserror::Error;
use units::group_digits;

/// Why a simulator table was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimCsvError {
    #[error("the CSV is empty (no header line)")]
    Empty,
    #[error("the CSV has no `{0}` column (is this a NeuSim op table?)")]
    MissingColumn(&'static str),
    #[error("line {line}: a quoted field is never closed")]
    UnterminatedQuote { line: usize },
    #[error("line {line}: column `{column}` should be a number ≥ 0, got `{value}`")]
    BadNumber { line: usize, column: &'static str, value: String },
    #[error("line {line}: {got} fields, but the header has {expected}")]
    FieldCount { line: usize, expected: usize, got: usize },
    /// Over [`SIM_CSV_ROWS`](limits::SIM_CSV_ROWS): `line` is the first row over it.
    #[error(
        "line {line}: more than {} rows, the budget of one simulator table (real tables have tens)",
        group_digits(*.limit as u64)
    )]
    TooManyRows { line: usize, limit: usize },
    /// Over [`SIM_CSV_FIELDS`](limits::SIM_CSV_FIELDS): `line` is where the field over it
    /// starts.
    #[error(
        "line {line}: more than {} fields in one record, the budget of a simulator table (real tables have 70 columns)",
        group_digits(*.limit as u64)
    )]
    TooManyFields { line: usize, limit: usize },
}
