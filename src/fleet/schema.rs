//! The fact tables an export writes: their names, columns, types and units, and the schema's
//! version, which every Parquet file carries in its key-value metadata so that a reader of
//! another version is refused by name rather than misread. `docs/fleet.md` documents each column.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayBuilder, ArrayRef, Float64Array, Int64Array, StringBuilder, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

/// The schema's version: a new column or a changed meaning is a new version.
pub const SCHEMA_VERSION: &str = "2";

/// The key-value metadata key of the schema version in every file.
pub const VERSION_KEY: &str = "fusionscope.schema_version";

/// The tables, in the order an export writes them.
pub const TABLES: [&str; 7] = ["traces", "kernels", "steps", "ops", "fusion_groups", "opportunities", "collectives"];

/// One column's values, as built row by row (text straight into Arrow's buffer: a streamed
/// trace's kernel rows allocate nothing per row).
#[derive(Debug)]
pub enum Values {
    Text(StringBuilder),
    Int(Vec<Option<i64>>),
    Count(Vec<Option<u64>>),
    Real(Vec<Option<f64>>),
}

impl Values {
    /// An empty text column with room for `rows`.
    pub fn text(rows: usize) -> Values {
        Values::Text(StringBuilder::with_capacity(rows, rows * 16))
    }

    fn data_type(&self) -> DataType {
        match self {
            Values::Text(_) => DataType::Utf8,
            Values::Int(_) => DataType::Int64,
            Values::Count(_) => DataType::UInt64,
            Values::Real(_) => DataType::Float64,
        }
    }

    fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Count(v) => v.len(),
            Values::Real(v) => v.len(),
        }
    }

    fn array(self) -> ArrayRef {
        match self {
            Values::Text(mut v) => Arc::new(v.finish()),
            Values::Int(v) => Arc::new(Int64Array::from(v)),
            Values::Count(v) => Arc::new(UInt64Array::from(v)),
            Values::Real(v) => Arc::new(Float64Array::from(v)),
        }
    }
}

/// A table as built: its name and its columns, each of one length.
#[derive(Debug)]
pub struct FactTable {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Values)>,
}

impl FactTable {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// The Arrow schema: every column nullable, as a trace may lack any figure.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self.columns.iter().map(|(name, v)| Field::new(*name, v.data_type(), true)).collect();
        Arc::new(Schema::new(fields))
    }

    pub fn into_batch(self) -> Result<RecordBatch, ArrowError> {
        let schema = self.schema();
        RecordBatch::try_new(schema, self.columns.into_iter().map(|(_, v)| v.array()).collect())
    }
}
