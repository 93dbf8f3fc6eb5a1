//! Reading a user's file whatever its kind: detection ([`detect()`]), the steps every kind
//! shares (gzip, UTF-8), and [`open`], the one dispatch that turns a file into a typed
//! [`Imported`] value, so that the page and the command line open files the same way.

pub mod detect;
pub mod open;
mod trace_reading;

use std::borrow::Cow;
use std::io::Read;

use thiserror::Error;

use fusion::{parse_graph, GraphError, OpGraph};
use limits::WHOLE_FILE_TEXT_BYTES;
use units::{format_bytes, group_digits};

pub use detect::{detect, detect_in, detect_kind, unrecognised_reason, Detected, FileKind, DETECT_BYTES};
pub use open::{
    open_in_slices, open_whole, read_trace_of, ExecTraceOf, FileOpener, Imported, OpenError, ReadError,
    READS_LARGE_KINDS,
};
pub use trace_reading::{read_rank, RankReadError};

/// Why a file's content cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImportError {
    #[error("the gzip data is damaged or cut short: {0}")]
    Gzip(String),
    /// The gzip content inflates past the kind's budget ([`text_budget`]); inflating stopped there.
    #[error(
        "its gzip content inflates to more than the limit of {} ({} bytes) for this kind of file",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    Inflated { limit: usize },
    /// The file is longer than the kind's budget ([`text_budget`]).
    #[error(
        "the file is larger than the limit of {} ({} bytes) for this kind of file",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLarge { limit: usize },
    #[error("the file is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("{0}")]
    Graph(#[from] GraphError),
}

/// How many bytes of text a file of `kind` may have when it is read whole, inflated or not
/// ([`limits::WHOLE_FILE_TEXT_BYTES`]); `None` for the kinds never read whole by this crate: a
/// trace goes to its format's reader, which holds it to that format's budgets, and of a gzip or
/// unknown file only the head is kept.
pub fn text_budget(kind: FileKind) -> Option<usize> {
    match kind {
        FileKind::OpGraph
        | FileKind::OpTrace
        | FileKind::SimOpsCsv
        | FileKind::Calibration
        | FileKind::ModelConfig
        | FileKind::Chip => Some(WHOLE_FILE_TEXT_BYTES),
        FileKind::ExecTrace => Some(limits::EXEC_TRACE_BYTES),
        FileKind::CompileLog => Some(limits::COMPILE_LOG_BYTES),
        FileKind::Trace(_) | FileKind::Gzip | FileKind::Unknown => None,
    }
}

/// The file's bytes, inflated if they are gzip-compressed; at most `limit` of them. Inflating
/// stops one byte past the limit, so a small `.gz` that would inflate to gigabytes costs no
/// more than the limit.
pub fn decompress(bytes: &[u8], limit: usize) -> Result<Cow<'_, [u8]>, ImportError> {
    if !detect(&bytes[..bytes.len().min(2)]).gzipped {
        if bytes.len() > limit {
            return Err(ImportError::TooLarge { limit });
        }
        return Ok(Cow::Borrowed(bytes));
    }
    let capacity = bytes.len().saturating_mul(4);
    read_at_most(flate2::read::MultiGzDecoder::new(bytes), limit, capacity).map(Cow::Owned)
}

/// All of `reader` if it holds at most `limit` bytes; reading stops one byte past the limit.
fn read_at_most(reader: impl Read, limit: usize, capacity: usize) -> Result<Vec<u8>, ImportError> {
    let bound = limit.saturating_add(1);
    let mut out = Vec::with_capacity(capacity.min(bound));
    reader.take(bound as u64).read_to_end(&mut out).map_err(|e| ImportError::Gzip(e.to_string()))?;
    if out.len() > limit {
        return Err(ImportError::Inflated { limit });
    }
    Ok(out)
}

/// The file's text (inflated first if gzip-compressed), at most `limit` bytes; borrowed when
/// the file is plain, so that no copy is made until a caller needs to keep it.
pub fn text(bytes: &[u8], limit: usize) -> Result<Cow<'_, str>, ImportError> {
    match decompress(bytes, limit)? {
        Cow::Borrowed(b) => {
            std::str::from_utf8(b).map(Cow::Borrowed).map_err(|e| ImportError::NotUtf8 { offset: e.valid_up_to() })
        }
        Cow::Owned(v) => String::from_utf8(v)
            .map(Cow::Owned)
            .map_err(|e| ImportError::NotUtf8 { offset: e.utf8_error().valid_up_to() }),
    }
}

/// An op-graph file (plain or gzip) as a validated graph.
pub fn read_graph(bytes: &[u8]) -> Result<OpGraph, ImportError> {
    Ok(parse_graph(&text(bytes, WHOLE_FILE_TEXT_BYTES)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const EXAMPLE: &str =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/graphs/worked_example.json"));

    #[test]
    fn reads_plain_and_gzipped_graphs_alike() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(EXAMPLE.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        assert_eq!(read_graph(EXAMPLE.as_bytes()).unwrap(), read_graph(&gz).unwrap());
        assert_eq!(read_graph(EXAMPLE.as_bytes()).unwrap().len(), 4);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(text(b"ab\xffcd", 100).unwrap_err(), ImportError::NotUtf8 { offset: 2 });
        let cut = {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(EXAMPLE.as_bytes()).unwrap();
            let gz = enc.finish().unwrap();
            gz[..gz.len() - 20].to_vec()
        };
        assert!(matches!(read_graph(&cut), Err(ImportError::Gzip(_))));
        let e = read_graph(b"[{\"name\": 1}]").unwrap_err().to_string();
        assert!(e.starts_with("malformed JSON at line 1, column"), "{e}");
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn inflating_stops_at_the_limit() {
        let gz = gzip(&[b'a'; 1000]);
        assert_eq!(decompress(&gz, 1000).unwrap().len(), 1000);
        assert_eq!(decompress(&gz, 999).unwrap_err(), ImportError::Inflated { limit: 999 });
        assert_eq!(text(b"abcd", 4).unwrap(), "abcd");
        assert_eq!(text(b"abcde", 4).unwrap_err(), ImportError::TooLarge { limit: 4 });
        assert_eq!(
            ImportError::Inflated { limit: WHOLE_FILE_TEXT_BYTES }.to_string(),
            "its gzip content inflates to more than the limit of 256.00 MiB (268,435,456 bytes) for this kind of file"
        );
    }

    /// Endless bytes that panic if read past `max`.
    struct Endless {
        read: usize,
        max: usize,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            assert!(self.read <= self.max, "read {} bytes, past the limit", self.read);
            buf.fill(b'a');
            self.read += buf.len();
            Ok(buf.len())
        }
    }

    #[test]
    fn reading_stops_one_byte_past_the_limit() {
        let e = read_at_most(Endless { read: 0, max: 1001 }, 1000, 0).unwrap_err();
        assert_eq!(e, ImportError::Inflated { limit: 1000 });
    }

    #[test]
    fn a_gzip_bomb_is_refused_without_inflating_it_whole() {
        // 300 gzip members of 1 MiB of zeros each (one file, about 300 KB): inflating reads
        // the first 256 MiB + 1 byte of its 300 MiB and stops.
        let member = gzip(&vec![0u8; 1 << 20]);
        let gz = member.repeat(300);
        assert!(gz.len() < 1 << 20, "{} bytes", gz.len());
        let e = decompress(&gz, WHOLE_FILE_TEXT_BYTES).unwrap_err();
        assert_eq!(e, ImportError::Inflated { limit: WHOLE_FILE_TEXT_BYTES });
    }

    #[test]
    fn plain_text_is_borrowed_not_copied() {
        let bytes = b"0:0:0 %1:<2xf16> = a.b.add(%0:<2xf16>)\n";
        assert!(matches!(text(bytes, 1000).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn every_kind_read_whole_has_a_budget() {
        for kind in [
            FileKind::OpGraph,
            FileKind::OpTrace,
            FileKind::SimOpsCsv,
            FileKind::Calibration,
            FileKind::ModelConfig,
            FileKind::Chip,
        ] {
            assert_eq!(text_budget(kind), Some(WHOLE_FILE_TEXT_BYTES), "{kind:?}");
        }
        assert_eq!(text_budget(crate::detect::tests::trace_kind("kineto")), None);
    }
}
