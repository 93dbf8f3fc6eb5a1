//! How the analysis worker takes a `File`'s bytes: as a byte stream read into one buffer of its
//! own (`Blob.stream()` with a BYOB reader), else, where the browser's blob stream is not a
//! byte stream, as [`SLICE_BYTES`] slices (`Blob.arrayBuffer()`) asked for
//! [`SLICES_IN_FLIGHT`] at a time.
//!
//! **Why a stream read into a buffer of our own.** Taking the bytes costs the thread that asks
//! for them, and in the worker that thread also parses. Measured in headless Chromium on a
//! 2-core machine (a worker that spends 12 ms on each 4 MiB, as parsing does, over a 1.0 GB
//! file; `docs/benchmarks.md`, "Where the time goes"): 2.86 s of that work took 4.1–4.3 s with
//! `arrayBuffer()` slices (each a new 4 MiB buffer, its own promise and data-pipe read), 3.7 s
//! with the stream's own chunks, and 3.0–3.1 s with one 4 MiB buffer handed back to the stream
//! on every read: the browser then fills memory it already has.

use std::collections::VecDeque;

use js_sys::{ArrayBuffer, Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, ReadableStream, ReadableStreamByobReader, ReadableStreamGetReaderOptions, ReadableStreamReaderMode,
};

/// Bytes read at once: small enough for smooth progress and low memory (the buffer is copied
/// into the wasm memory, where the reader keeps at most one), large enough to keep the
/// per-read overhead negligible.
pub const SLICE_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

/// Slices asked for at once when the file is read by slices: handing one over takes the
/// browser a few milliseconds of waiting (headless Chromium hands a 1 GB `File` over in 4 MiB
/// slices one at a time in 2.6–10 s on a shared 2-core machine, four at a time in 1.6 s), so
/// several are kept coming while one is parsed. They wait as JavaScript buffers, outside the
/// wasm memory: 16 MiB at most.
pub const SLICES_IN_FLIGHT: usize = 4;

/// A file's bytes, in order, a piece at a time.
pub enum FileBytes {
    /// A BYOB reader of the file's stream, and the buffer the next read fills (`None` once the
    /// stream has ended).
    Stream { reader: ReadableStreamByobReader, buffer: Option<ArrayBuffer> },
    /// `arrayBuffer()` of slices: those asked for, and where the next one starts.
    Slices { blob: Blob, pending: VecDeque<JsFuture>, asked: f64 },
}

impl FileBytes {
    /// Starts reading `blob`: by its stream if the browser gives a byte stream for it, else by
    /// slices.
    pub fn new(blob: &Blob) -> Self {
        match byob_reader(blob) {
            Some(reader) => {
                let size = blob.size().clamp(1.0, SLICE_BYTES) as u32;
                FileBytes::Stream { reader, buffer: Some(ArrayBuffer::new(size)) }
            }
            None => Self::by_slices(blob),
        }
    }

    /// Reads `blob` by slices, whatever the browser offers.
    pub fn by_slices(blob: &Blob) -> Self {
        FileBytes::Slices { blob: blob.clone(), pending: VecDeque::new(), asked: 0.0 }
    }

    /// Whether the file is read as a byte stream.
    pub fn is_stream(&self) -> bool {
        matches!(self, FileBytes::Stream { .. })
    }

    /// The next piece of the file (never empty), or `None` at its end.
    pub async fn next(&mut self) -> Result<Option<Uint8Array>, JsValue> {
        match self {
            FileBytes::Stream { reader, buffer } => {
                let Some(mut empty) = buffer.take() else { return Ok(None) };
                loop {
                    let view = Uint8Array::new(&empty);
                    let result = JsFuture::from(reader.read_with_array_buffer_view(&view)).await?;
                    if Reflect::get(&result, &"done".into())?.as_bool().unwrap_or(true) {
                        return Ok(None);
                    }
                    let piece: Uint8Array = Reflect::get(&result, &"value".into())?.dyn_into()?;
                    // The stream hands the buffer back with the bytes in it; the next read fills
                    // it again. An empty piece (not expected) is read again at once.
                    empty = piece.buffer();
                    if piece.length() > 0 {
                        *buffer = Some(empty);
                        return Ok(Some(piece));
                    }
                }
            }
            FileBytes::Slices { blob, pending, asked } => {
                let total = blob.size();
                while pending.len() < SLICES_IN_FLIGHT && *asked < total {
                    let end = (*asked + SLICE_BYTES).min(total);
                    let slice = blob.slice_with_f64_and_f64(*asked, end)?;
                    pending.push_back(JsFuture::from(slice.array_buffer()));
                    *asked = end;
                }
                let Some(read) = pending.pop_front() else { return Ok(None) };
                Ok(Some(Uint8Array::new(&read.await?)))
            }
        }
    }
}

/// Reading stops when the reader goes, whether the file was read to its end, cancelled or
/// failed: the browser may then drop what it has not handed over yet.
impl Drop for FileBytes {
    fn drop(&mut self) {
        if let FileBytes::Stream { reader, .. } = self {
            let _ = reader.cancel();
        }
    }
}

/// A BYOB reader of `blob`'s stream, if it has one and it is a byte stream (Chromium's and
/// Firefox's blob streams are; where one is not, `getReader` throws). Both calls go through
/// `Reflect`: web-sys's `stream` and `get_reader_with_options` do not catch a throw, and an
/// older browser has no `Blob.stream` at all.
fn byob_reader(blob: &Blob) -> Option<ReadableStreamByobReader> {
    let stream = Reflect::get(blob, &"stream".into()).ok()?;
    let stream: ReadableStream = stream.dyn_ref::<js_sys::Function>()?.call0(blob).ok()?.dyn_into().ok()?;
    let options = ReadableStreamGetReaderOptions::new();
    options.set_mode(ReadableStreamReaderMode::Byob);
    let get = Reflect::get(&stream, &"getReader".into()).ok()?;
    let get: &js_sys::Function = get.dyn_ref()?;
    let reader = get.call1(&stream, &Object::from(options)).ok()?;
    reader.dyn_into().ok()
}
