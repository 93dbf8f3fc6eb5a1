//! A trace too large to hold, exported as it is read: each kernel's row goes into the
//! `kernels` file as the reader hands it over, one row group at a time, so memory holds one row
//! group and the distinct names, never the trace. What needs the whole trace (the launching op,
//! the steps and layers, the op table, the fusion groups) is left out of such a trace's tables, and its `traces` row
//! says so.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use analysis::summary::BUILT_IN;
use classify::name::short_name;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use trace::intern::NameTable;
use trace::read::{EventSink, TraceHeader};
use trace::{Kernel, TraceFormat, Transfer};

use analysis::ranks::RankSummary;
use analysis::structure::Place;

use crate::facts::{kernel_columns, streamed_tables, KernelRow, Streamed, TraceId, TraceRow, SHORT_NAME};
use crate::files::{partial_of, properties, Partition};
use crate::schema::FactTable;
use crate::FleetError;

/// Rows handed to the Parquet writer at a time. The writer gathers them into row groups of
/// its own size; a small batch keeps the rows waiting in text form few.
const BATCH: usize = 1 << 14;

/// The `kernels` file of one trace, written as the trace streams.
pub struct KernelRows {
    trace: String,
    path: PathBuf,
    writer: Option<Background>,
    table: FactTable,
    /// By name index: the short name and category, once worked out.
    names: Vec<Option<(String, String)>>,
    /// The first write that failed; the rest of the trace is then only counted.
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
        let table = kernel_columns(BATCH);
        let file = File::create(&partial).map_err(|e| FleetError::io(&partial, e))?;
        let writer = ArrowWriter::try_new(file, table.schema(), Some(properties()))
            .map_err(|e| FleetError::Parquet { file: path.clone(), message: e.to_string() })?;
        let writer = Background::start(writer).map_err(|e| FleetError::io(&partial, e))?;
        Ok(KernelRows {
            trace: trace.to_string(),
            path,
            writer: Some(writer),
            table,
            names: Vec::new(),
            error: None,
            format: TraceFormat::default(),
            kernels: 0,
            kernel_time_us: 0.0,
            gpu_time_us: 0.0,
        })
    }

    fn flush(&mut self) {
        if self.table.rows() == 0 || self.error.is_some() {
            return;
        }
        let table = std::mem::replace(&mut self.table, kernel_columns(BATCH));
        let Some(writer) = self.writer.as_mut() else { return };
        let written = table.into_batch().map_err(|e| e.to_string()).and_then(|b| writer.write(b));
        if let Err(message) = written {
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

/// The Parquet writer on a thread of its own: encoding, dictionaries and zstd run beside the
/// reading rather than after each batch. One batch waits at most, so memory holds the batch
/// being built, one waiting, and the writer's row group.
struct Background {
    batches: SyncSender<RecordBatch>,
    done: JoinHandle<Result<(), String>>,
}

impl Background {
    fn start(mut writer: ArrowWriter<File>) -> std::io::Result<Background> {
        let (batches, incoming) = sync_channel::<RecordBatch>(1);
        let done = std::thread::Builder::new().name("parquet writer".into()).spawn(move || {
            for batch in incoming {
                writer.write(&batch).map_err(|e| e.to_string())?;
            }
            writer.close().map(|_| ()).map_err(|e| e.to_string())
        })?;
        Ok(Background { batches, done })
    }

    /// Hands a batch over; an error once the writer has stopped (its own error comes with
    /// [`Background::close`]).
    fn write(&mut self, batch: RecordBatch) -> Result<(), String> {
        self.batches.send(batch).map_err(|_| "the Parquet writer stopped".to_string())
    }

    /// Waits for every batch to be written and the file closed.
    fn close(self) -> Result<(), String> {
        drop(self.batches);
        self.done.join().map_err(|_| "the Parquet writer panicked".to_string())?
    }
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
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        let name = names.resolve(k.name);
        let (short_name, category) =
            self.names[i].get_or_insert_with(|| (short_name(name, SHORT_NAME), BUILT_IN(name).category.to_string()));
        let row = KernelRow {
            trace: &self.trace,
            kernel: &k,
            name,
            short_name,
            category,
            launching_op: None,
            place: Place::default(),
            fusion_group: None,
        };
        row.push(&mut self.table);
        if self.table.rows() >= BATCH {
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
