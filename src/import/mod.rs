//! Reading a user's file whatever its kind: detection ([`detect()`]), the steps every kind
//! shares (gzip, UTF-8), and [`open`], the one dispatch that turns a file into a typed
//! [`Imported`] value, so that the page and the command line open files the same way.

pub mod detect;
pub mod open;

use std::borrow::Cow;
use std::io::Read;

use thiserror::Error;

use crate::fusion::{parse_graph, GraphError, OpGraph};

pub use detect::{detect, detect_kind, unrecognised_reason, Detected, FileKind, DETECT_BYTES};
pub use open::{open_in_slices, open_whole, FileOpener, Imported, OpenError, ReadError, READS_LARGE_KINDS};

/// Why a file's content cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImportError {
    #[error("the gzip data is damaged or cut short: {0}")]
    Gzip(String),
    #[error("the file is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("{0}")]
    Graph(#[from] GraphError),
}

/// The file's bytes, inflated if they are gzip-compressed.
pub fn decompress(bytes: &[u8]) -> Result<Cow<'_, [u8]>, ImportError> {
    if !detect(&bytes[..bytes.len().min(2)]).gzipped {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut out = Vec::with_capacity(bytes.len() * 4);
    flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).map_err(|e| ImportError::Gzip(e.to_string()))?;
    Ok(Cow::Owned(out))
}

/// The file's text (inflated first if gzip-compressed).
pub fn text(bytes: &[u8]) -> Result<Cow<'_, str>, ImportError> {
    match decompress(bytes)? {
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
    Ok(parse_graph(&text(bytes)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const EXAMPLE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/graphs/worked_example.json"));

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
        assert_eq!(text(b"ab\xffcd").unwrap_err(), ImportError::NotUtf8 { offset: 2 });
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
}
