//! The one reader interface every trace format implements: what detection sees of a file
//! ([`Sniff`]), what a format says of itself ([`About`]), and its reader, fed slice by slice into
//! any [`EventSink`] ([`Readable`], [`Incremental`]). The registry ([`crate::registry`]) lists the
//! formats and dispatches to them; each format's folder depends on this file only.
//!
//! [`trace::TraceFormat`] is another thing: what the profiler a trace
//! came from can record, carried with the trace for the views that need it.

use trace::EventSink;

/// What detection sees of a file: its first bytes (inflated when it is gzip) and, when they
/// open a JSON object, the keys of that object as far as the bytes go.
#[derive(Debug, Clone, Copy)]
pub struct Sniff<'a> {
    pub head: &'a [u8],
    pub json_keys: &'a [String],
}

impl Sniff<'_> {
    /// Whether the top-level JSON object has the key `key`.
    pub fn has_key(&self, key: &str) -> bool {
        self.json_keys.iter().any(|k| k == key)
    }
}

/// What a format says of itself: the names messages use and its detection.
#[derive(Clone, Copy)]
pub struct About {
    /// A short, stable identifier (`kineto`, `xplane`): for tests and logs.
    pub name: &'static str,
    /// The file in words, as an error message starts: "t.json is a PyTorch-profiler trace but…".
    pub noun: &'static str,
    /// The file in more words, for lists of kinds.
    pub describe: &'static str,
    /// Whether a file's first bytes are this format's.
    pub detect: fn(&Sniff<'_>) -> bool,
}

/// A format's reader, for any sink: what each format's folder implements for its `Reader<S>`.
pub trait Incremental<S: EventSink> {
    /// The format's own error (the registry's `FormatError` has a variant for each).
    type Error;
    /// The next slice of the file (any slicing, plain or gzip): an error as soon as it is known.
    fn feed(&mut self, chunk: &[u8]) -> Result<(), Self::Error>;
    /// The end of the file: the sink's result.
    fn finish(self) -> Result<S::Output, Self::Error>;
}

/// A format that can be read: it makes its reader for a sink (the registry's line for the
/// format names this type and its [`About`]).
pub trait Readable {
    /// The format's own error, whatever the sink.
    type Error;
    type Reader<S: EventSink + 'static>: Incremental<S, Error = Self::Error> + 'static;
    fn reader<S: EventSink + 'static>(sink: S) -> Self::Reader<S>;
}

/// The [`Readable`] and [`Incremental`] impls of a format whose reader is a `Reader<S>` with
/// `with_sink`, `feed` and `finish` in its own error type (Kineto's, rocprofv3's, XLA's two):
/// `readable!(Marker, Reader, Error)` in the format's folder.
macro_rules! readable {
    ($format:ident, $reader:ident, $error:ty) => {
        impl $crate::interface::Readable for $format {
            type Error = $error;
            type Reader<S: EventSink + 'static> = $reader<S>;
            fn reader<S: EventSink + 'static>(sink: S) -> $reader<S> {
                $reader::with_sink(sink)
            }
        }

        impl<S: EventSink> $crate::interface::Incremental<S> for $reader<S> {
            type Error = $error;
            fn feed(&mut self, chunk: &[u8]) -> Result<(), $error> {
                $reader::feed(self, chunk)
            }
            fn finish(self) -> Result<S::Output, $error> {
                $reader::finish(self)
            }
        }
    };
}
pub(crate) use readable;

/// The first 16 bytes of every SQLite database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// SQLite databases, whichever tool wrote them (Nsight Systems, rocpd): the registry knows them
/// even in a build that cannot read them, to say where they can be read.
pub const SQLITE_ABOUT: About = About {
    name: "sqlite",
    noun: "an SQLite database",
    describe: "an SQLite database (Nsight Systems export or rocpd)",
    detect: |s| s.head.starts_with(SQLITE_MAGIC),
};
