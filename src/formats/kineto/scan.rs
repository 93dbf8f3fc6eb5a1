//! Incremental splitting of a Kineto trace's JSON text into its items, fed chunk by chunk.
//!
//! A trace is one object whose `traceEvents` array holds the events (or, in some tools' output,
//! a bare array of events). The scanner finds where each event object and each other top-level
//! value begins and ends, carrying string, escape and nesting state across chunk boundaries, and
//! hands each complete item to a callback as one byte slice. It does not validate the item's
//! inside: the caller parses it (serde_json), which reports malformed JSON. Only the current
//! incomplete item is buffered, so memory does not grow with the input; and since a file can
//! hold one item of any size (a 3 GB string), each item is held to [`ScanLimits`]: a longer or
//! deeper one is an error naming where it starts, raised as soon as the limit is passed.
//!
//! Every byte is looked at once: an unfinished item's scan resumes where the last chunk left
//! it, so feeding 1-byte chunks costs no more than feeding the whole text.
//!
//! An [`ItemSink`] may also take an event where it starts ([`ItemSink::head`]): it is offered
//! the rest of the text the scanner holds, and may read the whole event itself, finding its end
//! (so the event's bytes are not scanned and then read), or step over part of it, or leave it to
//! the scan. The Kineto reader's builder reads kept events so, with the field extractor.

use std::fmt;

use thiserror::Error;

use limits::{TRACE_ITEM_BYTES, TRACE_KEY_BYTES, TRACE_NESTING_DEPTH};

mod value;
use value::{Advance, ValueScan};

/// One complete item of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// One element of the events array, with its byte offset in the JSON text.
    Event { bytes: &'a [u8], offset: u64 },
    /// A top-level key other than `traceEvents` with its value's bytes and offset.
    Field { key: &'a [u8], value: &'a [u8], offset: u64 },
}

/// An event offered, at its start, to the item sink while the scanner holds more text after it
/// (see [`ItemSink::head`]).
#[derive(Debug, Clone, Copy)]
pub struct Offer<'a> {
    /// The text from the event's `{` on: the rest of what the scanner holds, at most one byte
    /// more than the item budget.
    pub text: &'a [u8],
    /// Where the event starts in the whole text.
    pub offset: u64,
    /// The budgets the event is held to: a sink taking it must check them as the scan would.
    pub limits: ScanLimits,
}

/// What the item sink did with an [`Offer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Nothing: the scanner finds the event's end and hands it over as an [`Item::Event`].
    Nothing,
    /// The whole event, `len` bytes long, holding to the budgets: the scan goes on after it.
    Whole { len: usize },
    /// The sink is done with the event, which it counted: the scanner finds its end, from byte
    /// `from` of the offer on, and hands nothing over. The bytes before `from` must end at the
    /// event's own level, outside any string, and nest no deeper than the budget allows.
    Skip { from: usize },
}

/// Where the scanner's items go. A closure taking [`Item`]s is one; a sink that can read an
/// event straight from the text where it starts also takes [`Offer`]s (so the event's bytes are
/// looked at once, not scanned for its end and then read).
pub trait ItemSink<E> {
    /// A complete item.
    fn item(&mut self, item: Item<'_>) -> Result<(), E>;

    /// An event at its start, offered before the scanner looks for its end.
    fn head(&mut self, _offer: Offer<'_>) -> Result<Taken, E> {
        Ok(Taken::Nothing)
    }
}

impl<E, F: FnMut(Item<'_>) -> Result<(), E>> ItemSink<E> for F {
    fn item(&mut self, item: Item<'_>) -> Result<(), E> {
        self(item)
    }
}

/// Which part of the text an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// One element of the events array.
    Event,
    /// A top-level key's value (other than the events array).
    Value,
    /// A top-level key.
    Key,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Event => "the event",
            Part::Value => "the top-level value",
            Part::Key => "the top-level key",
        })
    }
}

/// What is wrong with the text, at which byte of the JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScanError {
    /// The text does not have a trace's structure.
    #[error("{problem} at byte {offset}")]
    Syntax { offset: u64, problem: &'static str },
    /// One item (or key) is longer than its budget; `offset` is where it starts.
    #[error("{part} starting at byte {offset} is longer than the limit of {limit} bytes")]
    TooLong { part: Part, offset: u64, limit: usize },
    /// Arrays and objects nest deeper than the budget inside one item starting at `offset`;
    /// `at` is the bracket that goes one level too deep.
    #[error("{part} starting at byte {offset} nests deeper than the limit of {limit} levels at byte {at}")]
    TooDeep { part: Part, offset: u64, at: u64, limit: u32 },
}

impl ScanError {
    /// The byte of the JSON text the error is about (where the oversize item starts).
    pub fn offset(&self) -> u64 {
        match self {
            ScanError::Syntax { offset, .. }
            | ScanError::TooLong { offset, .. }
            | ScanError::TooDeep { offset, .. } => *offset,
        }
    }
}

/// The budgets one item of the text is held to (see [`limits`] for the figures and why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Longest event or top-level value, in bytes of JSON text.
    pub item_bytes: usize,
    /// Longest top-level key, in bytes between its quotes.
    pub key_bytes: usize,
    /// Deepest nesting of arrays and objects in one item, the item itself being level 1.
    pub depth: u32,
}

impl Default for ScanLimits {
    fn default() -> Self {
        ScanLimits { item_bytes: TRACE_ITEM_BYTES, key_bytes: TRACE_KEY_BYTES, depth: TRACE_NESTING_DEPTH }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first non-blank byte.
    Start,
    /// In the top-level object, expecting a key (or `}` when `may_close`).
    Key { may_close: bool },
    /// Inside a top-level key's string.
    InKey { escape: bool },
    /// After a key, expecting `:`.
    Colon,
    /// After `:`, expecting the value.
    Value,
    /// After a top-level value, expecting `,` or `}`.
    AfterValue,
    /// In the events array, expecting an event (or `]` when `may_close`).
    Element { may_close: bool },
    /// After an event, expecting `,` or `]`.
    AfterElement,
    /// After the end of the top-level value: only blanks may follow.
    Done,
}

/// The incremental splitter. Feed it the JSON text in chunks of any size.
#[derive(Debug)]
pub struct Scanner {
    state: State,
    /// Whether the events array is the whole document (bare-array traces).
    bare_array: bool,
    /// Bytes not yet handed out: the item in progress and what follows.
    buf: Vec<u8>,
    /// Offset in the whole text of `buf[0]`.
    base: u64,
    /// Scan position in `buf`.
    pos: usize,
    /// The value in progress and where it starts in `buf`.
    value: Option<(usize, ValueScan)>,
    /// Whether the event in progress was taken by the sink ([`Taken::Skip`]): not handed over.
    skip_value: bool,
    /// The current top-level key (raw bytes between the quotes).
    key: Vec<u8>,
    /// Offset in the whole text of the current key's opening quote.
    key_offset: u64,
    /// Whether an events array (`traceEvents`, or the bare top-level array) was entered.
    events_array: bool,
    limits: ScanLimits,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

impl Scanner {
    /// A scanner holding items to the budgets of [`limits`].
    pub fn new() -> Self {
        Self::with_limits(ScanLimits::default())
    }

    /// A scanner with other budgets (tests use small ones to reach them with small inputs).
    pub fn with_limits(limits: ScanLimits) -> Self {
        Scanner {
            state: State::Start,
            bare_array: false,
            buf: Vec::new(),
            base: 0,
            pos: 0,
            value: None,
            skip_value: false,
            key: Vec::new(),
            key_offset: 0,
            events_array: false,
            limits,
        }
    }

    /// Bytes of JSON text seen so far.
    pub fn bytes_seen(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Whether the text has an events array (possibly empty).
    pub fn has_events_array(&self) -> bool {
        self.events_array
    }

    /// Whether the top-level value is complete.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    fn err(&self, at: usize, problem: &'static str) -> ScanError {
        ScanError::Syntax { offset: self.base + at as u64, problem }
    }

    /// Scans `chunk`, calling `on_item` for every item completed in it. Stops at the first
    /// error the callback returns (converted with `From<ScanError>` for the scanner's own).
    ///
    /// The chunk is scanned where it lies; only an item it leaves unfinished is copied, to be
    /// completed by the next chunk's head (so the bytes of a trace are copied about once per
    /// chunk, not all of them).
    pub fn feed<E: From<ScanError>>(
        &mut self,
        chunk: &[u8],
        on_item: &mut dyn FnMut(Item<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.feed_to(chunk, &mut |item: Item<'_>| on_item(item))
    }

    /// Like [`Scanner::feed`], into any [`ItemSink`] (one that may take events as offered).
    pub fn feed_to<E: From<ScanError>>(&mut self, chunk: &[u8], on_item: &mut dyn ItemSink<E>) -> Result<(), E> {
        let mut rest = chunk;
        if !self.buf.is_empty() {
            // An item began in an earlier chunk: add the chunk up to the item's end (a copy of
            // the value scan finds it), and finish it from the buffer.
            let take = match self.value {
                Some((_, vs)) => {
                    let mut probe = vs;
                    match probe.advance(chunk, 0, u32::MAX) {
                        Advance::Ended(end) => end,
                        Advance::Open(_) | Advance::TooDeep(_) => chunk.len(),
                    }
                }
                None => chunk.len(),
            };
            self.buf.extend_from_slice(&chunk[..take]);
            rest = &chunk[take..];
            let buf = std::mem::take(&mut self.buf);
            let result = self.scan(&buf, on_item);
            self.buf = buf;
            self.keep_unfinished(None);
            result?;
            if !self.buf.is_empty() {
                // Still unfinished (the item is longer than the chunk, or a byte-order mark
                // waits for its last bytes): the rest of the chunk joins it.
                self.buf.extend_from_slice(rest);
                let buf = std::mem::take(&mut self.buf);
                let result = self.scan(&buf, on_item);
                self.buf = buf;
                self.keep_unfinished(None);
                return result;
            }
        }
        let result = self.scan(rest, on_item);
        self.keep_unfinished(Some(rest));
        result
    }

    /// Keeps only the unfinished item (or nothing) of what was just scanned: `scanned` in place,
    /// or the buffer when `None`.
    fn keep_unfinished(&mut self, scanned: Option<&[u8]>) {
        let keep_from = match self.value {
            Some((start, _)) => start,
            None => self.pos,
        };
        match scanned {
            Some(text) => {
                self.buf.extend_from_slice(&text[keep_from.min(text.len())..]);
            }
            None => {
                self.buf.drain(..keep_from.min(self.buf.len()));
            }
        }
        self.base += keep_from as u64;
        self.pos -= keep_from;
        if let Some((start, _)) = &mut self.value {
            *start -= keep_from;
        }
    }

    /// Ends the input: an error if the text stopped before the top-level value closed.
    pub fn finish(&mut self) -> Result<(), ScanError> {
        match self.state {
            State::Done => Ok(()),
            State::Start => Err(self.err(self.buf.len(), "empty input: expected a JSON object or array")),
            _ => Err(self.err(self.buf.len(), "unexpected end of input (truncated trace?)")),
        }
    }

    fn scan<E: From<ScanError>>(&mut self, buf: &[u8], on_item: &mut dyn ItemSink<E>) -> Result<(), E> {
        let n = buf.len();
        while self.pos < n {
            if let Some((start, mut vs)) = self.value {
                let part = if matches!(self.state, State::Element { .. }) { Part::Event } else { Part::Value };
                let offset = self.base + start as u64;
                let limit = self.limits.item_bytes;
                // Look no further than one byte past the budget: the verdict then depends only
                // on the item's first `limit + 1` bytes, not on how the text was sliced.
                let window = n.min(start.saturating_add(limit).saturating_add(1));
                let end = match vs.advance(&buf[..window], self.pos, self.limits.depth) {
                    Advance::TooDeep(at) => {
                        let at = self.base + at as u64;
                        return Err(ScanError::TooDeep { part, offset, at, limit: self.limits.depth }.into());
                    }
                    Advance::Open(end) | Advance::Ended(end) if end - start > limit => {
                        return Err(ScanError::TooLong { part, offset, limit }.into());
                    }
                    Advance::Open(end) => {
                        self.pos = end;
                        self.value = Some((start, vs));
                        return Ok(());
                    }
                    Advance::Ended(end) => end,
                };
                self.pos = end;
                self.value = None;
                let bytes = &buf[start..end];
                match self.state {
                    State::Element { .. } => {
                        self.state = State::AfterElement;
                        if !std::mem::take(&mut self.skip_value) {
                            on_item.item(Item::Event { bytes, offset })?;
                        }
                    }
                    _ => {
                        self.state = State::AfterValue;
                        on_item.item(Item::Field { key: &self.key, value: bytes, offset })?;
                    }
                }
                continue;
            }
            let b = buf[self.pos];
            if let State::InKey { escape } = self.state {
                let kept = escape || b != b'"';
                if kept && self.key.len() >= self.limits.key_bytes {
                    let limit = self.limits.key_bytes;
                    return Err(ScanError::TooLong { part: Part::Key, offset: self.key_offset, limit }.into());
                }
                if escape {
                    self.key.push(b);
                    self.state = State::InKey { escape: false };
                } else if b == b'\\' {
                    self.key.push(b);
                    self.state = State::InKey { escape: true };
                } else if b == b'"' {
                    self.state = State::Colon;
                } else {
                    self.key.push(b);
                }
                self.pos += 1;
                continue;
            }
            if is_blank(b) {
                self.pos += 1;
                continue;
            }
            let at = self.pos;
            self.state = match (self.state, b) {
                // A UTF-8 byte-order mark before the text.
                (State::Start, 0xEF) if at == 0 && self.base == 0 => {
                    if buf.len() < 3 {
                        return Ok(()); // wait for the rest of the mark
                    }
                    if buf[..3] != [0xEF, 0xBB, 0xBF] {
                        return Err(self.err(at, "expected a JSON object or array").into());
                    }
                    self.pos += 2;
                    State::Start
                }
                (State::Start, b'{') => State::Key { may_close: true },
                (State::Start, b'[') => {
                    self.bare_array = true;
                    self.events_array = true;
                    State::Element { may_close: true }
                }
                (State::Start, _) => return Err(self.err(at, "expected a JSON object or array").into()),
                (State::Key { .. }, b'"') => {
                    self.key.clear();
                    self.key_offset = self.base + at as u64;
                    State::InKey { escape: false }
                }
                (State::Key { may_close: true }, b'}') => State::Done,
                (State::Key { .. }, _) => return Err(self.err(at, "expected a key in the top-level object").into()),
                (State::Colon, b':') => State::Value,
                (State::Colon, _) => return Err(self.err(at, "expected ':' after a top-level key").into()),
                (State::Value, b'[') if self.key == b"traceEvents" => {
                    self.events_array = true;
                    State::Element { may_close: true }
                }
                (State::Value, b',' | b'}' | b']' | b':') => {
                    return Err(self.err(at, "expected a value after a top-level key").into())
                }
                (State::Value, _) => {
                    self.value = Some((at, ValueScan::begin(b)));
                    self.pos += 1;
                    continue;
                }
                (State::AfterValue, b',') => State::Key { may_close: false },
                (State::AfterValue, b'}') => State::Done,
                (State::AfterValue, _) => {
                    return Err(self.err(at, "expected ',' or '}' after a top-level value").into())
                }
                (State::Element { may_close: true }, b']') => self.after_events(),
                (State::Element { .. }, b',' | b']' | b'}' | b':') => {
                    return Err(self.err(at, "expected an event in traceEvents").into())
                }
                (State::Element { may_close }, b'{') => {
                    // Offer the event where it lies, with no more text than the scan would
                    // look at (one byte past the budget).
                    let limits = self.limits;
                    let window = n.min(at.saturating_add(limits.item_bytes).saturating_add(1));
                    let offer = Offer { text: &buf[at..window], offset: self.base + at as u64, limits };
                    self.state = State::Element { may_close };
                    let offered = offer.text.len();
                    match on_item.head(offer)? {
                        Taken::Whole { len } => {
                            self.state = State::AfterElement;
                            self.pos = at + len.clamp(1, offered);
                        }
                        Taken::Skip { from } => {
                            self.value = Some((at, ValueScan::begin(b'[')));
                            self.skip_value = true;
                            self.pos = at + from.clamp(1, offered);
                        }
                        Taken::Nothing => {
                            self.value = Some((at, ValueScan::begin(b)));
                            self.pos += 1;
                        }
                    }
                    continue;
                }
                (State::Element { may_close }, _) => {
                    self.value = Some((at, ValueScan::begin(b)));
                    self.state = State::Element { may_close };
                    self.pos += 1;
                    continue;
                }
                (State::AfterElement, b',') => State::Element { may_close: false },
                (State::AfterElement, b']') => self.after_events(),
                (State::AfterElement, _) => return Err(self.err(at, "expected ',' or ']' after an event").into()),
                (State::Done, _) => return Err(self.err(at, "unexpected text after the end of the trace").into()),
                (State::InKey { .. }, _) => unreachable!("handled above"),
            };
            self.pos += 1;
        }
        Ok(())
    }

    fn after_events(&self) -> State {
        if self.bare_array {
            State::Done
        } else {
            State::AfterValue
        }
    }
}

#[cfg(test)]
mod tests;
