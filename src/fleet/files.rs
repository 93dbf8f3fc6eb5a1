//! Where an export's tables go and how they are written:
//! `DIR/<table>/job=<job>/rank=<rank>/<trace>.parquet`, one file per trace and table (so traces
//! export in parallel and a re-export replaces one trace's files alone; a streamed trace's
//! kernels may take several, [`crate::streamed`]), in Hive's partition layout (so Spark, DuckDB
//! and DataFusion prune by job and rank), zstd-compressed, text and whole numbers
//! dictionary-encoded, the schema version in each file's metadata. The same trace exported
//! twice gives the same bytes.

use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::parquet::schema::types::ColumnPath;

use analysis::ranks::RankSummary;

use crate::facts::{rank_of, TraceId};
use crate::schema::{FactTable, SCHEMA_VERSION, TABLES, VERSION_KEY};
use crate::FleetError;

/// Rows per row group: large enough for zstd and dictionaries to pay, small enough that a
/// reader, and the streamed export's writer, hold one at a time, and that a kernel-name
/// column's distinct names fit its 1 MB dictionary page (a larger group of many names falls
/// back to plain strings: on the synthetic ranks, 18.7 MB of Parquet per GB of JSON at
/// 131,072 rows against 15.2 MB at 16,384).
pub(crate) const ROW_GROUP: usize = 1 << 14;

/// The file name of a trace's tables: its path as given, every character other than a letter,
/// digit, `.`, `-` or `_` made `_`, so that two traces of one name in two folders stay apart
/// (`runs/a/rank0.json` → `runs_a_rank0.json`); none starts with `_` or `.`.
pub fn file_stem(trace: &str) -> String {
    let stem: String = trace
        .trim_start_matches("./")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect();
    // Spark and Hadoop skip a file whose name starts with `_` or `.` (their metadata files),
    // which an absolute path's first `/` would make.
    let stem = stem.trim_start_matches(['.', '_']);
    if stem.is_empty() {
        "trace".to_string()
    } else {
        stem.to_string()
    }
}

/// The partition value of a missing job or rank, as Hive and Spark write it (Spark reads it as
/// null).
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// The longest partition value kept, in bytes after escaping: a path stays within every file
/// system's limits whatever the job's name. Longer names are cut; the files' `job` and `trace`
/// columns keep them whole.
const PARTITION_VALUE_BYTES: usize = 128;

/// A trace's partition: the folders its files go in under each table's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub job: Option<String>,
    pub rank: Option<i64>,
}

impl Partition {
    /// The partition of a trace: its job, and its rank where the trace records it (as the
    /// `traces` row's `rank`).
    pub fn of(id: &TraceId, rank: Option<&RankSummary>) -> Partition {
        Partition { job: id.job.clone(), rank: rank.and_then(rank_of) }
    }

    /// `job=<job>/rank=<rank>`, each value escaped as Hive escapes it (`%2F` for `/`; every
    /// byte but a letter, digit, `.`, `-` or `_`), [`NULL_PARTITION`] where missing.
    pub fn folder(&self) -> PathBuf {
        let job = self.job.as_deref().map_or_else(|| NULL_PARTITION.to_string(), partition_value);
        let rank = self.rank.map_or_else(|| NULL_PARTITION.to_string(), |r| r.to_string());
        PathBuf::from(format!("job={job}")).join(format!("rank={rank}"))
    }
}

/// A partition value escaped as Hive escapes a path name, cut at [`PARTITION_VALUE_BYTES`]
/// on an escape's boundary; never empty.
fn partition_value(raw: &str) -> String {
    let mut out = String::new();
    for b in raw.bytes() {
        let piece = if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_') {
            (b as char).to_string()
        } else {
            format!("%{b:02X}")
        };
        if out.len() + piece.len() > PARTITION_VALUE_BYTES {
            break;
        }
        out.push_str(&piece);
    }
    if out.is_empty() {
        NULL_PARTITION.to_string()
    } else {
        out
    }
}

/// How every file of `schema` is written: zstd, row groups of [`ROW_GROUP`] rows, the schema
/// version in its metadata.
///
/// Text and whole numbers are dictionary-encoded: names, devices, streams and steps repeat.
/// Real numbers (times, bytes, FLOPs) are not: nearly every one is new, so a dictionary would
/// only hold a row group's values twice before giving up on them.
pub(crate) fn properties(schema: &Schema) -> WriterProperties {
    let reals = schema.fields().iter().filter(|f| f.data_type() == &DataType::Float64);
    reals
        .fold(WriterProperties::builder(), |b, f| {
            b.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), false)
        })
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_dictionary_enabled(true)
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_key_value_metadata(Some(vec![KeyValue::new(VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]))
        .build()
}

/// Where a file is written before it is renamed to `path`: a reader never sees half a file.
pub(crate) fn partial_of(path: &Path) -> PathBuf {
    path.with_extension("parquet.partial")
}

/// Writes one trace's tables under `dir`, in its partition's folders; returns the files written.
pub fn write_tables(
    dir: &Path,
    partition: &Partition,
    stem: &str,
    tables: Vec<FactTable>,
) -> Result<Vec<PathBuf>, FleetError> {
    let mut written = Vec::with_capacity(tables.len());
    for table in tables {
        let folder = dir.join(table.name).join(partition.folder());
        std::fs::create_dir_all(&folder).map_err(|e| FleetError::io(&folder, e))?;
        let path = folder.join(format!("{stem}.parquet"));
        let batch =
            table.into_batch().map_err(|e| FleetError::Parquet { file: path.clone(), message: e.to_string() })?;
        let parquet = |e: datafusion::parquet::errors::ParquetError| FleetError::Parquet {
            file: path.clone(),
            message: e.to_string(),
        };
        let partial = partial_of(&path);
        let file = File::create(&partial).map_err(|e| FleetError::io(&partial, e))?;
        let mut writer =
            ArrowWriter::try_new(file, batch.schema(), Some(properties(&batch.schema()))).map_err(parquet)?;
        writer.write(&batch).map_err(parquet)?;
        writer.close().map_err(parquet)?;
        std::fs::rename(&partial, &path).map_err(|e| FleetError::io(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// Every Parquet file of an export folder's tables, by table, sorted; an error naming the
/// first file that is no Parquet file of this schema version (damaged, cut off, or written by
/// another version).
pub fn checked_files(dir: &Path) -> Result<Vec<(&'static str, Vec<PathBuf>)>, FleetError> {
    if !dir.is_dir() {
        return Err(FleetError::NotAnExport { dir: dir.to_path_buf() });
    }
    let mut out = Vec::new();
    for table in TABLES {
        let mut files = Vec::new();
        parquet_files(&dir.join(table), PARTITION_DEPTH, &mut files)?;
        for path in &files {
            check_version(path)?;
        }
        files.sort();
        out.push((table, files));
    }
    if out.iter().all(|(_, f)| f.is_empty()) {
        return Err(FleetError::NotAnExport { dir: dir.to_path_buf() });
    }
    Ok(out)
}

/// Partition folders looked into under a table's folder: `job=`, `rank=`.
const PARTITION_DEPTH: usize = 2;

/// The `.parquet` files in `folder` and in its folders `depth` deep (none if it is missing).
fn parquet_files(folder: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), FleetError> {
    if !folder.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(folder).map_err(|e| FleetError::io(folder, e))? {
        let path = entry.map_err(|e| FleetError::io(folder, e))?.path();
        if path.is_dir() && depth > 0 {
            parquet_files(&path, depth - 1, out)?;
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
    Ok(())
}

/// The file's footer read and its schema version compared with this build's.
fn check_version(path: &Path) -> Result<(), FleetError> {
    let file = File::open(path).map_err(|e| FleetError::io(path, e))?;
    let reader = SerializedFileReader::new(file)
        .map_err(|e| FleetError::Parquet { file: path.into(), message: e.to_string() })?;
    let meta = reader.metadata().file_metadata().key_value_metadata();
    let version = meta.and_then(|kv| kv.iter().find(|k| k.key == VERSION_KEY)).and_then(|k| k.value.clone());
    match version.as_deref() {
        Some(SCHEMA_VERSION) => Ok(()),
        other => Err(FleetError::Version { file: path.into(), found: other.map(str::to_string) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Values;

    fn table(name: &'static str) -> FactTable {
        let mut trace = Values::text(1);
        if let Values::Text(b) = &mut trace {
            b.append_value("a.json");
        }
        FactTable { name, columns: vec![("trace", trace)] }
    }

    #[test]
    fn names_stay_apart_and_plain() {
        assert_eq!(file_stem("runs/a/rank0.json.gz"), "runs_a_rank0.json.gz");
        assert_eq!(file_stem("./x y/ü.json"), "x_y__.json");
        assert_eq!(file_stem("..."), "trace");
        assert_eq!(file_stem("/data/runs/rank0.json"), "data_runs_rank0.json");
    }

    #[test]
    fn partitions_are_hive_folders_with_escaped_bounded_values() {
        let p = |job: Option<&str>, rank| Partition { job: job.map(str::to_string), rank }.folder();
        assert_eq!(p(Some("llama-70b_0412"), Some(3)), Path::new("job=llama-70b_0412/rank=3"));
        assert_eq!(p(Some("a/b=c d"), None), Path::new("job=a%2Fb%3Dc%20d/rank=__HIVE_DEFAULT_PARTITION__"));
        assert_eq!(p(None, Some(0)), Path::new("job=__HIVE_DEFAULT_PARTITION__/rank=0"));
        assert_eq!(p(Some(""), Some(1)), Path::new("job=__HIVE_DEFAULT_PARTITION__/rank=1"));
        // A long name, or one of many escapes, is cut at 128 bytes on an escape's boundary.
        let long = p(Some(&"ü".repeat(200)), Some(1));
        let job = long.to_str().unwrap().strip_prefix("job=").unwrap().split('/').next().unwrap().to_string();
        assert_eq!(job.len(), 126);
        assert!(job.ends_with("%BC"));
    }

    #[test]
    fn a_file_of_another_schema_version_is_named_and_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let partition = Partition { job: Some("j".into()), rank: Some(0) };
        write_tables(dir, &partition, "a", vec![table("traces")]).unwrap();
        assert_eq!(checked_files(dir).unwrap()[0].1.len(), 1);
        // The same table written as another version would.
        let path = dir.join("traces/job=j/rank=0/b.parquet");
        let batch = table("traces").into_batch().unwrap();
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(VERSION_KEY.to_string(), "0".to_string())]))
            .build();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let e = checked_files(dir).unwrap_err().to_string();
        assert!(e.contains("b.parquet: written with schema version 0") && e.contains("reads version 2"), "{e}");
    }

    /// Names and whole numbers repeat and are dictionary-encoded; times are nearly all new and
    /// are not, so that no dictionary holds a row group's times only to give up on them.
    #[test]
    fn text_and_whole_numbers_have_dictionaries_times_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let rows = 5000;
        let mut name = Values::text(rows);
        if let Values::Text(b) = &mut name {
            (0..rows).for_each(|i| b.append_value(format!("kernel_{}", i % 7)));
        }
        let stream = Values::Int((0..rows).map(|i| Some(i as i64 % 3)).collect());
        let start = Values::Real((0..rows).map(|i| Some(i as f64 * 1.5)).collect());
        let table =
            FactTable { name: "kernels", columns: vec![("name", name), ("stream", stream), ("start_us", start)] };
        let partition = Partition { job: None, rank: None };
        let files = write_tables(dir, &partition, "a", vec![table]).unwrap();
        let reader = SerializedFileReader::new(File::open(&files[0]).unwrap()).unwrap();
        let group = reader.metadata().row_group(0);
        let dictionary = |c: usize| group.column(c).dictionary_page_offset().is_some();
        assert_eq!((dictionary(0), dictionary(1), dictionary(2)), (true, true, false));
    }
}
