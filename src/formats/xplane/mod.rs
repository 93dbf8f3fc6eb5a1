//! XLA's profiles (`*.xplane.pb`, what JAX's and TensorFlow's profilers write): an `XSpace`
//! protobuf of planes. Each `/device:GPU:N` plane is a GPU; its stream lines
//! (`Stream #17(Kernel)`, `Stream #3(MemcpyH2D)`) hold the kernels and copies; an event's name
//! is its `event_metadata` entry's, and its stats name the HLO op and module it ran for. Read
//! into the format-neutral [`Trace`]; the only code that knows XSpace's layout
//! (`docs/trace-analysis.md`, "Other profilers' formats").
//!
//! Mapping: a kernel's start is its line's `timestamp_ns` plus its `offset_ps`; its device is
//! the plane's GPU number and its stream the line's id. The HLO op a kernel belongs to
//! (`hlo_op` stat, with `hlo_module`) becomes the op that launched it: a CPU op of that name
//! spanning the kernel, joined to it by a fresh id, so that the per-op table lists HLO ops. A
//! device is named by what its plane's stats say (vendor, compute capability, cores, memory):
//! XLA writes no marketing name.
//!
//! A profile with no GPU plane is a CPU run (`jax[cpu]`): the `/host:CPU` plane's events that
//! name an HLO op are the ops XLA's CPU client ran, read as kernels of one CPU device.
//!
//! What the format lacks: framework ops, and in a GPU run launch calls (the host plane's
//! Python and PJRT threads are not read).
//!
//! Protobuf is binary: the file is gathered (plain or gzip, within [`XPLANE_BYTES`]) and
//! decoded at the end by prost into the messages of [`proto`], whose schema is checked in
//! beside it (`xplane.proto`). Unknown fields are skipped; a length that runs past the input,
//! a wrong wire type or a nesting past prost's recursion limit is a decode error naming the
//! message and field where it was found.

// The decoder (prost) only in builds that read traces: natively, and the page's worker.
#[cfg(any(not(target_arch = "wasm32"), feature = "readers"))]
mod decode;
mod error;
#[cfg(any(not(target_arch = "wasm32"), feature = "readers"))]
pub mod hlo;
#[cfg(any(not(target_arch = "wasm32"), feature = "readers"))]
pub mod proto;
pub(crate) mod stream;

pub use error::XplaneError;

use crate::interface::{readable, About};
use limits::XPLANE_BYTES;
use trace::read::inflate::Gathered;
use trace::read::EventSink;
use trace::Trace;

/// Incremental reader into any [`EventSink`]: bytes in, the sink's result out at `finish`.
pub struct Reader<S> {
    /// The input, inflated and held to [`XPLANE_BYTES`] (smaller in tests).
    input: Gathered,
    sink: S,
}

/// The reader of a whole [`Trace`].
pub type XplaneReader = Reader<Trace>;

impl<S: EventSink + Default> Default for Reader<S> {
    fn default() -> Self {
        Self::with_sink(S::default())
    }
}

impl<S: EventSink + Default> Reader<S> {
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S: EventSink> Reader<S> {
    pub fn with_sink(sink: S) -> Self {
        Reader { input: Gathered::new(XPLANE_BYTES), sink }
    }

    /// Bytes of input fed so far (compressed ones for gzip).
    pub fn bytes_consumed(&self) -> u64 {
        self.input.consumed()
    }

    /// Reads the next slice; an error as soon as the profile passes its budget.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), XplaneError> {
        Ok(self.input.feed(chunk)?)
    }

    /// Ends the input: decodes the profile and hands its GPU events to the sink.
    pub fn finish(self) -> Result<S::Output, XplaneError> {
        let Self { input, sink } = self;
        let bytes = input.finish()?;
        #[cfg(any(not(target_arch = "wasm32"), feature = "readers"))]
        return decode::read(&bytes, sink);
        // The page's own build: the registry refuses before a reader is made.
        #[cfg(all(target_arch = "wasm32", not(feature = "readers")))]
        {
            let _ = (bytes, sink);
            Err(XplaneError::Decode { message: "this build reads no XLA profile".to_string() })
        }
    }
}

/// What the format says of itself, for the registry ([`crate::registry`]): an `XSpace` protobuf ([`looks_like_xspace`]).
pub const ABOUT: About = About {
    name: "xplane",
    noun: "an XLA/JAX profile",
    describe: "an XLA/JAX profile (xplane protobuf)",
    detect: |s| looks_like_xspace(s.head),
};

/// The format, for the registry.
pub struct Xplane;

readable!(Xplane, Reader, XplaneError);

/// Reads a whole profile held in memory (plain or gzip).
pub fn read_xplane(bytes: &[u8]) -> Result<Trace, XplaneError> {
    let mut reader = XplaneReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

/// Whether `head` (a file's first bytes) has the shape of an `XSpace`: its first field is a
/// plane (field 1, length-delimited) whose first fields are an id (field 1, varint) and/or a
/// name (field 2) that starts like a plane's name. Cheap, and enough to tell an XLA profile
/// from other binary data.
pub fn looks_like_xspace(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else { return false };
    let Some((_, rest)) = varint(rest) else { return false };
    let rest = match rest.first() {
        Some(0x08) => match varint(&rest[1..]) {
            Some((_, r)) => r,
            None => return false,
        },
        _ => rest,
    };
    let Some(rest) = rest.strip_prefix(&[0x12]) else { return false };
    let Some((len, name)) = varint(rest) else { return false };
    let name = &name[..name.len().min(usize::try_from(len).unwrap_or(usize::MAX))];
    [&b"/host:"[..], b"/device:", b"Task Environment"].iter().any(|p| name.starts_with(p))
}

/// A protobuf varint and the bytes after it.
fn varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests;
