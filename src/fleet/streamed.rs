//! A trace too large to hold, exported as it is read: each kernel's row goes into the
//! `kernels` file as the reader hands it over, one row group at a time, so memory holds one row
//! group and the distinct names, never the trace. What needs the whole trace (the launching op,
//! the steps and layers, the op table, the fusion groups) is left out of such a trace's tables,
//! and its `traces` row says so.
//!
//! The reading thread only keeps each kernel as the reader gives it and each new name once; a
//! writer thread of its own makes the rows' text, the Parquet encoding and zstd, beside the
//! reading.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use analysis::ranks::RankSummary;
use analysis::structure::Place;
use analysis::summary::BUILT_IN;
use classify::name::short_name;
use datafusion::parquet::arrow::ArrowWriter;
use trace::intern::NameTable;
use trace::read::{EventSink, TraceHeader};
use trace::{Kernel, TraceFormat, Transfer};

use crate::facts::{kernel_columns, streamed_tables, KernelRow, Streamed, TraceId, TraceRow, SHORT_NAME};
use crate::files::{partial_of, properties, Partition};
use crate::schema::FactTable;
use crate::FleetError;

/// Kernels handed to the writer thread at a time. The writer gathers them into row groups of
/// its own size; a small batch keeps the kernels waiting few, and 4,096 cost no time against
/// 16,384 on the synthetic ranks (docs/fleet.md, "Scale").
const BATCH: usize = 1 << 12;

/// Rows the writer thread makes at a time from a batch: their names' text is what weighs.
const ROWS_AT_A_TIME: usize = 1024;

/// Kernels as the reader gave them, and the names first seen among them (by name index).
struct Batch {
    kernels: Vec<Kernel>,
    names: Vec<(usize, String)>,
}

impl Batch {
    /// Room for a whole batch at once: a vector grown by doubling would hold up to twice that.
    fn new() -> Batch {
        Batch { kernels: Vec::with_capacity(BATCH), names: Vec::new() }
    }
}

/// The `kernels` file of one trace, written as the trace streams.
pub struct KernelRows {
    path: PathBuf,
    writer: Option<Background>,
    batch: Batch,
    /// By name index: whether the writer has the name.
    handed: Vec<bool>,
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
        let folder = dir.join("kernels");
        std::fs::create_dir_all(&folder).map_err(|e| FleetError::io(&folder, e))?;
        let path = folder.join(format!("{stem}.parquet"));
        let partial = partial_of(&path);
        let file = File::create(&partial).map_err(|e| FleetError::io(&partial, e))?;
        let writer = ArrowWriter::try_new(file, kernel_columns(0).schema(), Some(properties()))
            .map_err(|e| FleetError::Parquet { file: path.clone(), message: e.to_string() })?;
        let writer = Background::start(trace.to_string(), writer).map_err(|e| FleetError::io(&partial, e))?;
        Ok(KernelRows {
            path,
            writer: Some(writer),
            batch: Batch::new(),
            handed: Vec::new(),
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
            self.error = Some(FleetError::Parquet { file: self.path.clone(), message });
        }
    }

    /// Closes the file and moves it to its name in `partition`'s folder; the figures of what
    /// was written.
    pub fn close(mut self, partition: &Partition) -> Result<Streamed, FleetError> {
        self.flush();
        let closed = self.writer.take().map_or(Ok(()), Background::close);
        let handing_over = self.error.take();
        // The writer's own error says more than that it stopped taking batches.
        closed.map_err(|message| FleetError::Parquet { file: self.path.clone(), message })?;
        if let Some(e) = handing_over {
            return Err(e);
        }
        let (folder, name) = match (self.path.parent(), self.path.file_name()) {
            (Some(folder), Some(name)) => (folder.join(partition.folder()), name.to_owned()),
            _ => return Err(FleetError::io(&self.path, std::io::ErrorKind::InvalidInput.into())),
        };
        std::fs::create_dir_all(&folder).map_err(|e| FleetError::io(&folder, e))?;
        let path = folder.join(name);
        std::fs::rename(partial_of(&self.path), &path).map_err(|e| FleetError::io(&path, e))?;
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
            let _ = std::fs::remove_file(partial_of(&self.path));
        }
    }
}

/// The writer thread: it makes each batch's rows and writes them. One batch waits at most, so
/// memory holds the batch being gathered, one waiting, one being written, and the writer's
/// row group.
struct Background {
    batches: SyncSender<Batch>,
    done: JoinHandle<Result<(), String>>,
}

impl Background {
    fn start(trace: String, writer: ArrowWriter<File>) -> std::io::Result<Background> {
        let (batches, incoming) = sync_channel::<Batch>(1);
        let done =
            std::thread::Builder::new().name("parquet writer".into()).spawn(move || write(&trace, writer, incoming))?;
        Ok(Background { batches, done })
    }

    /// Hands a batch over; an error once the writer has stopped (its own error comes with
    /// [`Background::close`]).
    fn write(&mut self, batch: Batch) -> Result<(), String> {
        self.batches.send(batch).map_err(|_| "the Parquet writer stopped".to_string())
    }

    /// Waits for every batch to be written and the file closed.
    fn close(self) -> Result<(), String> {
        drop(self.batches);
        self.done.join().map_err(|_| "the Parquet writer panicked".to_string())?
    }
}

/// The writer thread's work: each batch's names worked out once (short name, category), its
/// rows made and written, then the file closed.
fn write(trace: &str, mut writer: ArrowWriter<File>, incoming: Receiver<Batch>) -> Result<(), String> {
    let mut names: Vec<Option<(String, String, String)>> = Vec::new();
    for batch in incoming {
        for (i, name) in batch.names {
            if names.len() <= i {
                names.resize(i + 1, None);
            }
            let (short, category) = (short_name(&name, SHORT_NAME), BUILT_IN(&name).category.to_string());
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
            let rows = table.into_batch().map_err(|e| e.to_string())?;
            writer.write(&rows).map_err(|e| e.to_string())?;
        }
    }
    writer.close().map(|_| ()).map_err(|e| e.to_string())
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
            self.batch.names.push((i, names.resolve(k.name).to_string()));
        }
        self.batch.kernels.push(k);
        if self.batch.kernels.len() >= BATCH {
            self.flush();
        }
    }

    fn transfer(&mut self, _: &NameTable, t: Transfer) {
        self.gpu_time_us += t.dur;
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

    /// Kernels over several batches, a new name in each, every row as handed in and in order.
    #[test]
    fn rows_over_many_batches_keep_their_order_and_names() {
        let dir = std::env::temp_dir().join(format!("fleet-streamed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut names = NameTable::new();
        let mut rows = KernelRows::create(&dir, "t", "t.json").unwrap();
        let n = BATCH * 3 + 7;
        for i in 0..n {
            // Name `i / 5000`: names first seen deep inside later batches.
            let name = names.intern(&format!("void gemm_kernel_{}<float>(float*)", i / 5000));
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
        let partition = Partition { job: Some("j".into()), rank: Some(2) };
        let streamed = rows.close(&partition).unwrap();
        assert_eq!(streamed.kernels, n as u64);
        let file = File::open(dir.join("kernels/job=j/rank=2/t.parquet")).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
        let mut seen = 0;
        for batch in reader {
            let batch = batch.unwrap();
            let starts = batch.column_by_name("start_us").unwrap().as_any().downcast_ref::<Float64Array>().unwrap();
            let full = batch.column_by_name("name").unwrap().as_string::<i32>();
            for r in 0..batch.num_rows() {
                assert_eq!(starts.value(r), (seen + r) as f64);
                assert_eq!(full.value(r), format!("void gemm_kernel_{}<float>(float*)", (seen + r) / 5000));
            }
            seen += batch.num_rows();
        }
        assert_eq!(seen, n);
        assert!(!dir.join("kernels/t.parquet.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
