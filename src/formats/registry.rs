//! The registry of trace formats: every format fusionscope reads, in the order detection tries
//! them, and the one dispatch to their readers. The command line, the page's worker and the
//! page's small-file path all go through it (`import::detect`, `import::FileOpener`).
//!
//! A new format is one folder that implements [`crate::interface`] (its reader, its `About`, a
//! type that is [`Readable`]) and one line in [`BUILTIN`]; its errors travel as
//! [`FormatError::Other`] until it earns a variant.
//!
//! A format's reader is generic over its sink (the hot loop of a reader calls the sink's methods
//! directly); the registry hands it the sink behind one box ([`FormatReader`]), so that one entry
//! serves every sink: the whole trace, the summary-only fold, the ranks fold.

use std::any::Any;
use std::marker::PhantomData;

use thiserror::Error;

use crate::interface::{About, Incremental, Readable, Sniff};
use crate::rocprof::RocprofError;
use crate::xplane::XplaneError;
use crate::TraceError;
use trace::compiled::CompiledGroup;
use trace::intern::{NameId, NameTable};
use trace::read::{EventSink, TraceHeader};
use trace::{Annotation, CollectiveArgs, CpuOp, Kernel, Launch, Transfer};

#[cfg(test)]
mod tests;

/// Whether this build reads traces: natively always; on wasm32 only with the `readers` feature
/// (the page's analysis worker). A constant, so that the page's own build drops every reader
/// (they would be most of its first download).
pub const READS: bool = cfg!(any(not(target_arch = "wasm32"), feature = "readers"));

/// One entry of the registry: a format's description and its reader behind a fn pointer.
pub struct Format {
    about: About,
    /// Its reader into a sink that takes CPU-side events, and into one that does not
    /// ([`EventSink::CPU_SIDE`] is a constant the readers test at compile time).
    open_all: fn(AnySink<true>) -> Box<dyn Feed>,
    open_gpu: fn(AnySink<false>) -> Box<dyn Feed>,
}

impl Format {
    /// The entry of the format `F`.
    pub const fn new<F: Readable>(about: About) -> Format
    where
        F::Error: Into<FormatError>,
    {
        Format { about, open_all: open::<F, true>, open_gpu: open::<F, false> }
    }

    pub fn name(&self) -> &'static str {
        self.about.name
    }

    pub fn noun(&self) -> &'static str {
        self.about.noun
    }

    pub fn describe(&self) -> &'static str {
        self.about.describe
    }

    pub fn detects(&self, sniff: &Sniff<'_>) -> bool {
        (self.about.detect)(sniff)
    }
}

/// Formats are told apart by name (the registry holds each once).
impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.about.name == other.about.name
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.about.name.hash(state)
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.about.name)
    }
}

/// The formats detection tries, in order.
#[derive(Debug, Clone, Copy)]
pub struct Registry {
    formats: &'static [&'static Format],
}

impl Registry {
    pub const fn new(formats: &'static [&'static Format]) -> Registry {
        Registry { formats }
    }

    pub fn formats(self) -> &'static [&'static Format] {
        self.formats
    }

    /// The first format whose detection takes the file.
    pub fn detect(self, sniff: &Sniff<'_>) -> Option<&'static Format> {
        self.formats.iter().copied().find(|f| f.detects(sniff))
    }

    /// The format named `name` ([`About::name`]).
    pub fn named(self, name: &str) -> Option<&'static Format> {
        self.formats.iter().copied().find(|f| f.name() == name)
    }
}

/// Every format fusionscope reads, one line each. XLA's JSON comes before Kineto's: both have
/// `traceEvents`, and XLA's names its processes after its planes.
pub static BUILTIN: Registry = Registry::new(&[
    &SQLITE,
    &Format::new::<crate::xplane::Xplane>(crate::xplane::ABOUT),
    &Format::new::<crate::xla_json::XlaJson>(crate::xla_json::ABOUT),
    &KINETO,
    &Format::new::<crate::rocprof::Rocprof>(crate::rocprof::ABOUT),
]);

/// The PyTorch profiler's JSON: also what a file of no known kind is read as on the command
/// line, since its reader's errors say where the JSON goes wrong.
pub static KINETO: Format = Format::new::<crate::kineto::Kineto>(crate::kineto::ABOUT);

/// SQLite databases: an Nsight Systems export or a rocpd database, told apart by their tables
/// when read (`nsys`, `rocpd`); a wasm32 build without SQLite still knows the files, to say
/// where they can be read.
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
static SQLITE: Format = Format::new::<crate::nsys::Sqlite>(crate::interface::SQLITE_ABOUT);
#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
static SQLITE: Format = Format::new::<NoSqlite>(crate::interface::SQLITE_ABOUT);

/// Why a file of a known format cannot be read: the format's own error, with its details.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FormatError {
    /// Kineto's JSON and XLA's trace-event JSON.
    #[error(transparent)]
    Json(#[from] TraceError),
    #[error(transparent)]
    Rocprof(#[from] RocprofError),
    #[error(transparent)]
    Xplane(#[from] XplaneError),
    #[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
    #[error(transparent)]
    Sqlite(#[from] crate::sqlite::SqliteError),
    /// This build does not read the format: why, and where it can be read.
    #[error("{0}")]
    NotBuilt(&'static str),
    /// A format outside this crate: its reader's own words.
    #[error("{0}")]
    Other(String),
}

/// Why a wasm32 build without the `sqlite` feature reads no SQLite.
#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
const NO_SQLITE: &str = "this build has no SQLite reader (it was built without the `sqlite` feature): open SQLite \
                         traces (Nsight Systems exports, rocpd databases) on the page, whose analysis worker reads \
                         them, or with `fusionscope trace FILE`";

/// Why a build without readers reads no trace.
const NO_READERS: &str = "this page reads traces in its analysis worker, which could not start in this browser (the \
                          command line reads the file too)";

/// The registry's reader of one format into the sink `S`: the interface the command line and
/// the page use, whatever the format.
pub struct FormatReader<S> {
    format: &'static Format,
    feed: Box<dyn Feed>,
    sink: PhantomData<fn() -> S>,
}

impl<S: EventSink + 'static> FormatReader<S>
where
    S::Output: 'static,
{
    pub fn new(format: &'static Format, sink: S) -> Self {
        let feed =
            if S::CPU_SIDE { (format.open_all)(AnySink::new(sink)) } else { (format.open_gpu)(AnySink::new(sink)) };
        FormatReader { format, feed, sink: PhantomData }
    }

    pub fn format(&self) -> &'static Format {
        self.format
    }

    /// The next slice of the file.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), FormatError> {
        self.feed.feed(chunk)
    }

    /// The end of the file: the sink's result.
    pub fn finish(self) -> Result<S::Output, FormatError> {
        let out = self.feed.finish()?;
        // The box holds what `S::finish` returned: the sink handed to `new` is the one that ends.
        out.downcast::<S::Output>()
            .map(|o| *o)
            .map_err(|_| FormatError::Other(format!("the {} reader gave a result of another type", self.format.name())))
    }
}

/// A format's reader with its sink's type erased: what a [`Format`] holds.
pub trait Feed {
    fn feed(&mut self, chunk: &[u8]) -> Result<(), FormatError>;
    fn finish(self: Box<Self>) -> Result<Box<dyn Any>, FormatError>;
}

fn open<F: Readable, const CPU: bool>(sink: AnySink<CPU>) -> Box<dyn Feed>
where
    F::Error: Into<FormatError>,
{
    // A constant: the page's own build keeps no reader.
    if !READS {
        return Box::new(Refuse(NO_READERS));
    }
    Box::new(Erased::<_, CPU>(F::reader(sink)))
}

struct Erased<R, const CPU: bool>(R);

impl<R: Incremental<AnySink<CPU>>, const CPU: bool> Feed for Erased<R, CPU>
where
    R::Error: Into<FormatError>,
{
    fn feed(&mut self, chunk: &[u8]) -> Result<(), FormatError> {
        self.0.feed(chunk).map_err(Into::into)
    }
    fn finish(self: Box<Self>) -> Result<Box<dyn Any>, FormatError> {
        self.0.finish().map_err(Into::into)
    }
}

/// A reader that refuses: the format is known, but this build does not read it.
struct Refuse(&'static str);

impl Feed for Refuse {
    fn feed(&mut self, _: &[u8]) -> Result<(), FormatError> {
        Err(FormatError::NotBuilt(self.0))
    }
    fn finish(self: Box<Self>) -> Result<Box<dyn Any>, FormatError> {
        Err(FormatError::NotBuilt(self.0))
    }
}

#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
struct NoSqlite;

#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
impl Readable for NoSqlite {
    type Error = FormatError;
    type Reader<S: EventSink + 'static> = RefuseFor<S>;
    fn reader<S: EventSink + 'static>(_: S) -> RefuseFor<S> {
        RefuseFor(PhantomData)
    }
}

#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
struct RefuseFor<S>(PhantomData<fn() -> S>);

#[cfg(all(target_arch = "wasm32", not(feature = "sqlite")))]
impl<S: EventSink> Incremental<S> for RefuseFor<S> {
    type Error = FormatError;
    fn feed(&mut self, _: &[u8]) -> Result<(), FormatError> {
        Err(FormatError::NotBuilt(NO_SQLITE))
    }
    fn finish(self) -> Result<S::Output, FormatError> {
        Err(FormatError::NotBuilt(NO_SQLITE))
    }
}

/// Any sink, behind one box: a reader of each format serves every sink. `CPU` is the sink's
/// [`EventSink::CPU_SIDE`].
pub struct AnySink<const CPU: bool>(Box<dyn ErasedSink>);

impl<const CPU: bool> AnySink<CPU> {
    fn new<S: EventSink + 'static>(sink: S) -> Self
    where
        S::Output: 'static,
    {
        AnySink(Box::new(sink))
    }
}

trait ErasedSink {
    fn kernel(&mut self, names: &NameTable, kernel: Kernel);
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, args: &CollectiveArgs<'_>);
    fn transfer(&mut self, names: &NameTable, transfer: Transfer);
    fn cpu_op(&mut self, op: CpuOp);
    fn annotation(&mut self, annotation: Annotation);
    fn launch(&mut self, correlation: u64, launch: Launch);
    fn compiled_name(&mut self, names: &NameTable, name: NameId, group: &CompiledGroup);
    fn finish(self: Box<Self>, header: TraceHeader) -> Box<dyn Any>;
}

impl<S: EventSink> ErasedSink for S
where
    S::Output: 'static,
{
    fn kernel(&mut self, names: &NameTable, kernel: Kernel) {
        EventSink::kernel(self, names, kernel)
    }
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, args: &CollectiveArgs<'_>) {
        EventSink::collective_kernel(self, names, kernel, args)
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer) {
        EventSink::transfer(self, names, transfer)
    }
    fn cpu_op(&mut self, op: CpuOp) {
        EventSink::cpu_op(self, op)
    }
    fn annotation(&mut self, annotation: Annotation) {
        EventSink::annotation(self, annotation)
    }
    fn launch(&mut self, correlation: u64, launch: Launch) {
        EventSink::launch(self, correlation, launch)
    }
    fn compiled_name(&mut self, names: &NameTable, name: NameId, group: &CompiledGroup) {
        EventSink::compiled_name(self, names, name, group)
    }
    fn finish(self: Box<Self>, header: TraceHeader) -> Box<dyn Any> {
        Box::new(EventSink::finish(*self, header))
    }
}

impl<const CPU: bool> EventSink for AnySink<CPU> {
    type Output = Box<dyn Any>;
    const CPU_SIDE: bool = CPU;
    /// Launch calls always: the sinks that skip the CPU side (the summary-only mode, the ranks
    /// fold) take them for the idle split, so that each reader is built twice, not three times.
    const LAUNCHES: bool = true;
    fn kernel(&mut self, names: &NameTable, kernel: Kernel) {
        self.0.kernel(names, kernel)
    }
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, args: &CollectiveArgs<'_>) {
        self.0.collective_kernel(names, kernel, args)
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer) {
        self.0.transfer(names, transfer)
    }
    fn cpu_op(&mut self, op: CpuOp) {
        self.0.cpu_op(op)
    }
    fn annotation(&mut self, annotation: Annotation) {
        self.0.annotation(annotation)
    }
    fn launch(&mut self, correlation: u64, launch: Launch) {
        self.0.launch(correlation, launch)
    }
    fn compiled_name(&mut self, names: &NameTable, name: NameId, group: &CompiledGroup) {
        self.0.compiled_name(names, name, group)
    }
    fn finish(self, header: TraceHeader) -> Box<dyn Any> {
        self.0.finish(header)
    }
}
