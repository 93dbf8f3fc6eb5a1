//! A trace too large to hold, exported as it is read: each kernel's row goes into the
//! `kernels` file as the reader hands it over, one row group at a time, so memory holds one row
//! group and the distinct names, never the trace. What needs the whole trace (the launching op,
//! the steps and layers, the op table, the fusion groups) is left out of such a trace's tables,
//! and its `traces` row says so.
//!
//! The reading thread only keeps each kernel as the reader gives it and each new name once; a
//! writer thread of its own makes the rows' text, the Parquet encoding and zstd, beside the
//! reading.
//!
//! A Parquet writer keeps every row group's metadata until its file closes (about 4 KB a row
//! group of `kernels`), so a long trace's kernels go into several files of at most
//! [`ROWS_PER_FILE`] rows each, and memory does not grow with the trace.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use analysis::ranks::RankSummary;
use analysis::structure::Place;
use analysis::summary::{compiled_class, with_compiled, BUILT_IN};
use classify::name::short_name;
use classify::Classification;
use datafusion::parquet::arrow::ArrowWriter;
use rustc_hash::FxHashMap;
use trace::compiled::CompiledGroup;
use trace::intern::{NameId, NameTable};
use trace::read::{EventSink, TraceHeader};
use trace::{Kernel, TraceFormat, Transfer};

use crate::facts::{kernel_columns, streamed_tables, KernelRow, Streamed, TraceId, TraceRow, SHORT_NAME};
use crate::files::{partial_of, properties, Partition, ROW_GROUP};
use crate::schema::FactTable;
use crate::FleetError;

/// Kernels handed to the writer thread at a time. The writer gathers them into row groups of
/// its own size; a small batch keeps the kernels waiting few: 1,024 cost no time against 4,096
/// on the synthetic ranks and hold 0.5 MB less (docs/fleet.md, "Scale").
const BATCH: usize = 1 << 10;

/// Rows the writer thread makes at a time from a batch: their names' text is what weighs.
const ROWS_AT_A_TIME: usize = 1024;

/// Kernels in one `kernels` file of a streamed trace: 64 row groups.
pub const ROWS_PER_FILE: usize = ROW_GROUP * 64;

/// Kernels as the reader gave them, and the names first seen among them (by name index), each
/// with what the compiler's group says it is where the profile records one.
struct Batch {
    kernels: Vec<Kernel>,
    names: Vec<(usize, String, Option<Classification>)>,
}

impl Batch {
    /// Room for a whole batch at once: a vector grown by doubling would hold up to twice that.
    fn new() -> Batch {
        Batch { kernels: Vec::with_capacity(BATCH), names: Vec::new() }
    }
}

/// The `kernels` file of one trace, written as the trace streams.
pub struct KernelRows {
    parts: Parts,
    writer: Option<Background>,
    batch: Batch,
    /// By name index: whether the writer has the name.
    handed: Vec<bool>,
    /// What the compiler's groups say of names not yet handed ([`with_compiled`]).
    compiled: FxHashMap<NameId, Classification>,
    /// The first hand-over that failed; the rest of the trace is then only counted.
    error: Option<FleetError>,
    format: TraceFormat,
    /// Kernels, their time, and the GPU time (kernels, copies and sets), µs.
    pub kernels: u64,
    pub kernel_time_us: f64,
    pub gpu_time_us: f64,
}

impl KernelRows {
    /// Starts `DIR/kernels/<stem>.parquet.partial`, moved into its partition's folder when
    /// done ([`KernelRows::close`]): the rank is known once the trace is read.
    pub fn create(dir: &Path, stem: &str, trace: &str) -> Result<KernelRows, FleetError> {
        KernelRows::with_rows_per_file(dir, stem, trace, ROWS_PER_FILE)
    }

    fn with_rows_per_file(dir: &Path, stem: &str, trace: &str, rows_per_file: usize) -> Result<KernelRows, FleetError> {
        let folder = dir.join("kernels");
        std::fs::create_dir_all(&folder).map_err(|e| FleetError::io(&folder, e))?;
        let parts = Parts { folder, stem: stem.to_string(), rows_per_file };
        let first = parts.create(0)?;
        let writer = Background::start(trace.to_string(), parts.clone(), first)
            .map_err(|e| FleetError::io(&partial_of(&parts.path(0)), e))?;
        Ok(KernelRows {
            parts,
            writer: Some(writer),
            batch: Batch::new(),
            handed: Vec::new(),
            compiled: FxHashMap::default(),
            error: None,
            format: TraceFormat::default(),
            kernels: 0,
            kernel_time_us: 0.0,
            gpu_time_us: 0.0,
        })
    }

    /// Hands the batch over (dropped once a hand-over failed: the rest is only counted).
    fn flush(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Batch::new());
        if batch.kernels.is_empty() || self.error.is_some() {
            return;
        }
        let Some(writer) = self.writer.as_mut() else { return };
        if let Err(message) = writer.write(batch) {
            self.error = Some(FleetError::Parquet { file: self.parts.path(0), message });
        }
    }

    /// Closes the last file and moves every part to its name in `partition`'s folder; the
    /// figures of what was written.
    pub fn close(mut self, partition: &Partition) -> Result<Streamed, FleetError> {
        self.flush();
        let closed = self.writer.take().map_or(Ok(0), Background::close);
        let handing_over = self.error.take();
        // The writer's own error says more than that it stopped taking batches.
        let parts = closed.map_err(|message| FleetError::Parquet { file: self.parts.path(0), message })?;
        if let Some(e) = handing_over {
            return Err(e);
        }
        let folder = self.parts.folder.join(partition.folder());
        std::fs::create_dir_all(&folder).map_err(|e| FleetError::io(&folder, e))?;
        for n in 0..parts {
            let to = folder.join(self.parts.name(n));
            std::fs::rename(partial_of(&self.parts.path(n)), &to).map_err(|e| FleetError::io(&to, e))?;
        }
        // Parts beyond these, left by an earlier export of a longer trace of the same name.
        for n in parts.. {
            if std::fs::remove_file(folder.join(self.parts.name(n))).is_err() {
                break;
            }
        }
        Ok(Streamed {
            format: self.format,
            kernels: self.kernels,
            kernel_time_us: self.kernel_time_us,
            gpu_time_us: self.gpu_time_us,
        })
    }
}

/// A trace that failed to read leaves no half-written file: its writer is stopped and the
/// partial file removed.
impl Drop for KernelRows {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            let _ = writer.close();
            for n in 0.. {
                if std::fs::remove_file(partial_of(&self.parts.path(n))).is_err() {
                    break;
                }
            }
        }
    }
}

/// Where a streamed trace's parts go, and how long each is.
#[derive(Clone)]
struct Parts {
    /// `DIR/kernels`, where the parts are written before they move to their partition.
    folder: PathBuf,
    stem: String,
    rows_per_file: usize,
}

impl Parts {
    /// The file name of part `n`: part 0 is `<stem>.parquet`, as any trace's file, then
    /// `<stem>+1.parquet`, `<stem>+2.parquet`, …; no file stem holds a `+`
    /// ([`crate::files::file_stem`]), so no trace's file is another's part.
    fn name(&self, n: usize) -> String {
        match n {
            0 => format!("{}.parquet", self.stem),
            n => format!("{}+{n}.parquet", self.stem),
        }
    }

    /// Part `n`'s final path in `DIR/kernels` (its partial file is beside it).
    fn path(&self, n: usize) -> PathBuf {
        self.folder.join(self.name(n))
    }

    /// Starts part `n` beside its final name, as `.parquet.partial`.
    fn create(&self, n: usize) -> Result<Part, FleetError> {
        let path = self.path(n);
        let partial = partial_of(&path);
        let file = File::create(&partial).map_err(|e| FleetError::io(&partial, e))?;
        let schema = kernel_columns(0).schema();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties(&schema)))
            .map_err(|e| FleetError::Parquet { file: path, message: e.to_string() })?;
        Ok(Part { writer, rows: 0 })
    }
}

/// One part being written: its writer and the rows in it so far.
struct Part {
    writer: ArrowWriter<File>,
    rows: usize,
}

/// The writer thread: it makes each batch's rows and writes them. One batch waits at most, so
/// memory holds the batch being gathered, one waiting, one being written, and the writer's
/// row group.
struct Background {
    batches: SyncSender<Batch>,
    /// The parts written, once all are closed.
    done: JoinHandle<Result<usize, String>>,
}

impl Background {
    fn start(trace: String, parts: Parts, first: Part) -> std::io::Result<Background> {
        let (batches, incoming) = sync_channel::<Batch>(1);
        let done = std::thread::Builder::new()
            .name("parquet writer".into())
            .spawn(move || write(&trace, &parts, first, incoming))?;
        Ok(Background { batches, done })
    }

    /// Hands a batch over; an error once the writer has stopped (its own error comes with
    /// [`Background::close`]).
    fn write(&mut self, batch: Batch) -> Result<(), String> {
        self.batches.send(batch).map_err(|_| "the Parquet writer stopped".to_string())
    }

    /// Waits for every batch to be written and the last file closed; the parts written.
    fn close(self) -> Result<usize, String> {
        drop(self.batches);
        self.done.join().map_err(|_| "the Parquet writer panicked".to_string())?
    }
}

/// The writer thread's work: each batch's names worked out once (short name, category), its
/// rows made and written, a new part begun every `rows_per_file` rows, then the last closed;
/// the parts written.
fn write(trace: &str, parts: &Parts, first: Part, incoming: Receiver<Batch>) -> Result<usize, String> {
    let (mut part, mut written) = (first, 1);
    let mut names: Vec<Option<(String, String, String)>> = Vec::new();
    for batch in incoming {
        for (i, name, compiled) in batch.names {
            if names.len() <= i {
                names.resize(i + 1, None);
            }
            let category = with_compiled(BUILT_IN(&name), compiled).category.to_string();
            let short = short_name(&name, SHORT_NAME);
            names[i] = Some((name, short, category));
        }
        for kernels in batch.kernels.chunks(ROWS_AT_A_TIME) {
            let mut table = kernel_columns(kernels.len());
            for k in kernels {
                let (name, short_name, category) = names
                    .get(k.name.index())
                    .and_then(Option::as_ref)
                    .ok_or("a kernel's name was never handed to the writer")?;
                let row = KernelRow {
                    trace,
                    kernel: k,
                    name,
                    short_name,
                    category,
                    launching_op: None,
                    place: Place::default(),
                    fusion_group: None,
                };
                row.push(&mut table);
            }
            if part.rows > 0 && part.rows + kernels.len() > parts.rows_per_file {
                let next = parts.create(written).map_err(|e| e.to_string())?;
                std::mem::replace(&mut part, next).writer.close().map_err(|e| e.to_string())?;
                written += 1;
            }
            let rows = table.into_batch().map_err(|e| e.to_string())?;
            part.writer.write(&rows).map_err(|e| e.to_string())?;
            part.rows += kernels.len();
        }
    }
    part.writer.close().map_err(|e| e.to_string())?;
    Ok(written)
}

impl EventSink for KernelRows {
    type Output = KernelRows;
    const CPU_SIDE: bool = false;
    const LAUNCHES: bool = false;

    fn kernel(&mut self, names: &NameTable, k: Kernel) {
        self.kernels += 1;
        self.kernel_time_us += k.dur;
        self.gpu_time_us += k.dur;
        let i = k.name.index();
        if self.handed.len() <= i {
            self.handed.resize(i + 1, false);
        }
        if !self.handed[i] {
            self.handed[i] = true;
            let compiled = self.compiled.remove(&k.name);
            self.batch.names.push((i, names.resolve(k.name).to_string(), compiled));
        }
        self.batch.kernels.push(k);
        if self.batch.kernels.len() >= BATCH {
            self.flush();
        }
    }

    fn transfer(&mut self, _: &NameTable, t: Transfer) {
        self.gpu_time_us += t.dur;
    }

    fn compiled_name(&mut self, _: &NameTable, name: NameId, group: &CompiledGroup) {
        if let Some(c) = compiled_class(group) {
            self.compiled.insert(name, c);
        }
    }

    fn finish(mut self, header: TraceHeader) -> KernelRows {
        self.format = header.format;
        self
    }
}

/// The tables of a trace exported as it streamed, once read: its `kernels` file closed and
/// moved to its name, and the other tables to write ([`crate::files::write_tables`]).
pub fn finish(rows: KernelRows, rank: &RankSummary, id: &TraceId) -> Result<Vec<FactTable>, FleetError> {
    let kernels = rows.close(&Partition::of(id, Some(rank)))?;
    let notes = "streamed: its kernels have no launching op, step, layer or fusion group, and the steps, the op \
                 table and the fusion groups need the whole trace"
        .to_string();
    let mut facts = vec![TraceRow::streamed(&kernels, rank, notes).table(id)];
    facts.extend(streamed_tables(id, rank));
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{AsArray, Float64Array};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Streams `n` kernels into `dir` as trace `t`, parts of `rows_per_file`; the name of kernel
    /// `i` is `i / 700`'s, so that names are first seen deep inside later batches.
    fn stream(dir: &Path, n: usize, rows_per_file: usize) -> Streamed {
        let mut names = NameTable::new();
        let mut rows = KernelRows::with_rows_per_file(dir, "t", "t.json", rows_per_file).unwrap();
        for i in 0..n {
            let name = names.intern(&format!("void gemm_kernel_{}<float>(float*)", i / 700));
            let k = Kernel {
                name,
                ts: i as f64,
                dur: 0.5,
                device: 0,
                stream: 7,
                correlation: None,
                external_id: None,
                graph_node: false,
            };
            rows.kernel(&names, k);
        }
        rows.close(&Partition { job: Some("j".into()), rank: Some(2) }).unwrap()
    }

    /// The rows of a part, in order: (start, full name).
    fn part_rows(path: &Path) -> Vec<(f64, String)> {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let starts = batch.column_by_name("start_us").unwrap().as_any().downcast_ref::<Float64Array>().unwrap();
            let full = batch.column_by_name("name").unwrap().as_string::<i32>();
            out.extend((0..batch.num_rows()).map(|r| (starts.value(r), full.value(r).to_string())));
        }
        out
    }

    /// Kernels over several batches and several parts, every row as handed in and in order,
    /// and a shorter export of the same trace leaves none of the longer one's parts.
    #[test]
    fn rows_over_many_batches_and_parts_keep_their_order_and_names() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let names = Parts { folder: dir.join("kernels/job=j/rank=2"), stem: "t".into(), rows_per_file: 0 };
        let part = |n| names.path(n);
        let n = BATCH * 3 + 7;
        assert_eq!(stream(dir, n, ROWS_AT_A_TIME).kernels, n as u64);
        let rows: Vec<_> = (0..4).flat_map(|p| part_rows(&part(p))).collect();
        assert_eq!(part_rows(&part(3)).len(), 7);
        assert_eq!(rows.len(), n);
        for (i, (start, name)) in rows.iter().enumerate() {
            assert_eq!(
                (*start, name.as_str()),
                (i as f64, format!("void gemm_kernel_{}<float>(float*)", i / 700).as_str())
            );
        }
        assert!(!part(4).exists());
        assert_eq!(std::fs::read_dir(dir.join("kernels")).unwrap().count(), 1, "only the partition folder is left");

        stream(dir, ROWS_AT_A_TIME + 1, ROWS_AT_A_TIME);
        assert_eq!((part_rows(&part(0)).len(), part_rows(&part(1)).len()), (ROWS_AT_A_TIME, 1));
        assert!(!part(2).exists() && !part(3).exists(), "the longer export's parts are gone");
    }
}
