//! Plain or gzip input, told apart by its first two bytes (not a file name), inflated as it
//! streams in: any reader of a text format sits behind this.
//!
//! Memory stays bounded whatever the file: one `write` inflates at most the decoder's buffer
//! (32 KiB), and the inflated bytes are handed on before the next, so a 64 KB slice of a crafted
//! `.gz` that would inflate to 64 MB never is at once.

use std::io::Write;

/// Corrupt gzip data, at this many compressed bytes into the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InflateError {
    pub compressed_offset: u64,
    pub message: String,
}

/// Whether the input turned out to be gzip.
enum Decoding {
    /// Fewer than two bytes seen: cannot tell yet.
    Undecided(Vec<u8>),
    Plain,
    Gzip(Box<flate2::write::MultiGzDecoder<Vec<u8>>>),
}

/// The input's bytes in, the text's bytes out (to a callback), slice by slice.
pub struct Inflate {
    decoding: Decoding,
    /// Bytes given to `feed` (compressed ones for gzip).
    consumed: u64,
}

impl Default for Inflate {
    fn default() -> Self {
        Inflate { decoding: Decoding::Undecided(Vec::new()), consumed: 0 }
    }
}

impl Inflate {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of input fed so far (of the file as given, compressed or not).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Whether the input is gzip (false until two bytes were seen).
    pub fn is_gzip(&self) -> bool {
        matches!(self.decoding, Decoding::Gzip(_))
    }

    /// The inflated bytes waiting in the decoder's buffer, at most (for tests of the bound).
    pub fn buffered_capacity(&self) -> usize {
        match &self.decoding {
            Decoding::Gzip(gz) => gz.get_ref().capacity(),
            _ => 0,
        }
    }

    /// Passes the next slice of input to `out` as text, inflating it if the input is gzip.
    pub fn feed<E: From<InflateError>>(
        &mut self,
        chunk: &[u8],
        out: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let before = self.consumed;
        self.consumed += chunk.len() as u64;
        if let Decoding::Undecided(head) = &mut self.decoding {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(head);
            self.decoding = if head[..2] == [0x1f, 0x8b] {
                Decoding::Gzip(Box::new(flate2::write::MultiGzDecoder::new(Vec::new())))
            } else {
                Decoding::Plain
            };
            return self.decode(&head, 0, out);
        }
        self.decode(chunk, before, out)
    }

    /// Passes `bytes` (starting at `compressed_offset` of the input) through decompression.
    fn decode<E: From<InflateError>>(
        &mut self,
        bytes: &[u8],
        compressed_offset: u64,
        out: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        match &mut self.decoding {
            Decoding::Plain => out(bytes),
            Decoding::Gzip(gz) => {
                let mut rest = bytes;
                while !rest.is_empty() {
                    let at = compressed_offset + (bytes.len() - rest.len()) as u64;
                    let gzip_err = |message: String| InflateError { compressed_offset: at, message };
                    match gz.write(rest) {
                        Ok(0) => return Err(gzip_err("the decoder accepts no more data".to_string()).into()),
                        Ok(n) => rest = &rest[n..],
                        Err(e) => return Err(gzip_err(e.to_string()).into()),
                    }
                    let text = std::mem::take(gz.get_mut());
                    out(&text)?;
                    *gz.get_mut() = recycle(text);
                }
                Ok(())
            }
            Decoding::Undecided(_) => Ok(()),
        }
    }

    /// Ends the input: the last inflated bytes to `out`, or an error if the gzip stream was cut.
    pub fn finish<E: From<InflateError>>(&mut self, out: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        match std::mem::replace(&mut self.decoding, Decoding::Plain) {
            Decoding::Undecided(head) => out(&head),
            Decoding::Plain => Ok(()),
            Decoding::Gzip(mut gz) => {
                let compressed_offset = self.consumed;
                gz.try_finish().map_err(|e| InflateError { compressed_offset, message: e.to_string() })?;
                out(gz.get_ref())
            }
        }
    }
}

/// An emptied buffer back for the decoder to reuse its allocation.
fn recycle(mut v: Vec<u8>) -> Vec<u8> {
    v.clear();
    v
}

/// Why an input read whole could not be gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatherError {
    /// The text passed its budget (bytes).
    TooLarge {
        limit: usize,
    },
    Gzip(InflateError),
    /// The input was fed after an error.
    Poisoned,
}

impl From<InflateError> for GatherError {
    fn from(e: InflateError) -> Self {
        GatherError::Gzip(e)
    }
}

/// A whole input inflated into memory and held to a budget, for the formats whose records refer
/// to each other across the file (rocprofv3's results JSON, XLA's protobuf) and so are read
/// whole. An error as soon as the text passes the budget; after an error, only errors.
pub struct Gathered {
    inflate: Inflate,
    bytes: Vec<u8>,
    limit: usize,
    failed: bool,
}

impl Gathered {
    pub fn new(limit: usize) -> Self {
        Gathered { inflate: Inflate::new(), bytes: Vec::new(), limit, failed: false }
    }

    /// Bytes of input fed so far (compressed ones for gzip).
    pub fn consumed(&self) -> u64 {
        self.inflate.consumed()
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), GatherError> {
        if self.failed {
            return Err(GatherError::Poisoned);
        }
        let Self { inflate, bytes, limit, .. } = self;
        let result = inflate.feed(chunk, &mut |more| append(bytes, more, *limit));
        self.failed = result.is_err();
        result
    }

    /// Ends the input: the whole text.
    pub fn finish(mut self) -> Result<Vec<u8>, GatherError> {
        if self.failed {
            return Err(GatherError::Poisoned);
        }
        let Self { inflate, bytes, limit, .. } = &mut self;
        inflate.finish(&mut |more| append(bytes, more, *limit))?;
        Ok(self.bytes)
    }
}

fn append(bytes: &mut Vec<u8>, more: &[u8], limit: usize) -> Result<(), GatherError> {
    if bytes.len().saturating_add(more.len()) > limit {
        return Err(GatherError::TooLarge { limit });
    }
    bytes.extend_from_slice(more);
    Ok(())
}
