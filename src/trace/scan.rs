//! Incremental splitting of a Kineto trace's JSON text into its items, fed chunk by chunk.
//!
//! A trace is one object whose `traceEvents` array holds the events (or, in some tools' output,
//! a bare array of events). The scanner finds where each event object and each other top-level
//! value begins and ends, carrying string, escape and nesting state across chunk boundaries, and
//! hands each complete item to a callback as one byte slice. It does not validate the item's
//! inside: the caller parses it (serde_json), which reports malformed JSON. Only the current
//! incomplete item is buffered, so memory does not grow with the input.

use thiserror::Error;

/// One complete item of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// One element of the events array, with its byte offset in the JSON text.
    Event { bytes: &'a [u8], offset: u64 },
    /// A top-level key other than `traceEvents` with its value's bytes and offset.
    Field { key: &'a [u8], value: &'a [u8], offset: u64 },
}

/// What is wrong with the text's structure, at which byte of the JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{problem} at byte {offset}")]
pub struct ScanError {
    pub offset: u64,
    pub problem: &'static str,
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

/// Progress through one value whose end is being looked for.
#[derive(Debug, Clone, Copy, Default)]
struct ValueScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// A number, `true`, `false` or `null`: ends at the next delimiter.
    scalar: bool,
}

impl ValueScan {
    fn begin(first: u8) -> Self {
        match first {
            b'{' | b'[' => ValueScan { depth: 1, ..Default::default() },
            b'"' => ValueScan { in_string: true, ..Default::default() },
            _ => ValueScan { scalar: true, ..Default::default() },
        }
    }

    /// Advances over `buf[i..]`; returns where the value ends (exclusive) if it ends here.
    /// `buf[start]` (the opening byte) was already consumed by `begin`.
    fn advance(&mut self, buf: &[u8], mut i: usize) -> (usize, bool) {
        if self.scalar {
            while i < buf.len() {
                if matches!(buf[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    return (i, true);
                }
                i += 1;
            }
            return (i, false);
        }
        while i < buf.len() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                    None => i = buf.len(),
                    Some(p) => {
                        i += p;
                        if buf[i] == b'\\' {
                            self.escape = true;
                        } else {
                            self.in_string = false;
                            if self.depth == 0 {
                                return (i + 1, true);
                            }
                        }
                        i += 1;
                    }
                }
            } else {
                let b = buf[i];
                i += 1;
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth = self.depth.saturating_add(1),
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return (i, true);
                        }
                    }
                    _ => {}
                }
            }
        }
        (i, false)
    }
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
    /// The current top-level key (raw bytes between the quotes).
    key: Vec<u8>,
    /// Whether an events array (`traceEvents`, or the bare top-level array) was entered.
    events_array: bool,
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
    pub fn new() -> Self {
        Scanner {
            state: State::Start,
            bare_array: false,
            buf: Vec::new(),
            base: 0,
            pos: 0,
            value: None,
            key: Vec::new(),
            events_array: false,
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
        ScanError { offset: self.base + at as u64, problem }
    }

    /// Scans `chunk`, calling `on_item` for every item completed in it. Stops at the first
    /// error the callback returns (converted with `From<ScanError>` for the scanner's own).
    pub fn feed<E: From<ScanError>>(
        &mut self,
        chunk: &[u8],
        on_item: &mut dyn FnMut(Item<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.buf.extend_from_slice(chunk);
        let result = self.scan(on_item);
        // Keep only the unfinished item (or nothing) for the next chunk.
        let keep_from = match self.value {
            Some((start, _)) => start,
            None => self.pos,
        };
        if keep_from > 0 {
            self.buf.drain(..keep_from);
            self.base += keep_from as u64;
            self.pos -= keep_from;
            if let Some((start, _)) = &mut self.value {
                *start -= keep_from;
            }
        }
        result
    }

    /// Ends the input: an error if the text stopped before the top-level value closed.
    pub fn finish(&mut self) -> Result<(), ScanError> {
        match self.state {
            State::Done => Ok(()),
            State::Start => Err(self.err(self.buf.len(), "empty input: expected a JSON object or array")),
            _ => Err(self.err(self.buf.len(), "unexpected end of input (truncated trace?)")),
        }
    }

    fn scan<E: From<ScanError>>(&mut self, on_item: &mut dyn FnMut(Item<'_>) -> Result<(), E>) -> Result<(), E> {
        let n = self.buf.len();
        while self.pos < n {
            if let Some((start, mut vs)) = self.value {
                let (end, done) = vs.advance(&self.buf, self.pos);
                self.pos = end;
                if !done {
                    self.value = Some((start, vs));
                    return Ok(());
                }
                self.value = None;
                let offset = self.base + start as u64;
                let bytes = &self.buf[start..end];
                match self.state {
                    State::Element { .. } => {
                        self.state = State::AfterElement;
                        on_item(Item::Event { bytes, offset })?;
                    }
                    _ => {
                        self.state = State::AfterValue;
                        on_item(Item::Field { key: &self.key, value: bytes, offset })?;
                    }
                }
                continue;
            }
            let b = self.buf[self.pos];
            if let State::InKey { escape } = self.state {
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
                    if self.buf.len() < 3 {
                        return Ok(()); // wait for the rest of the mark
                    }
                    if self.buf[..3] != [0xEF, 0xBB, 0xBF] {
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
mod tests {
    use super::*;

    /// Items as owned strings, feeding `text` in chunks of `chunk` bytes.
    fn items(text: &str, chunk: usize) -> Result<Vec<String>, ScanError> {
        let mut s = Scanner::new();
        let mut out = Vec::new();
        for c in text.as_bytes().chunks(chunk) {
            s.feed::<ScanError>(c, &mut |item| {
                out.push(match item {
                    Item::Event { bytes, offset } => format!("E@{offset}:{}", String::from_utf8_lossy(bytes)),
                    Item::Field { key, value, offset } => {
                        format!("F@{offset}:{}={}", String::from_utf8_lossy(key), String::from_utf8_lossy(value))
                    }
                });
                Ok(())
            })?;
        }
        s.finish()?;
        Ok(out)
    }

    fn all_chunkings(text: &str) -> Result<Vec<String>, ScanError> {
        let whole = items(text, text.len().max(1));
        for chunk in [1, 2, 3, 7, 64] {
            assert_eq!(items(text, chunk), whole, "chunk size {chunk}");
        }
        whole
    }

    #[test]
    fn splits_object_with_events_and_fields() {
        let text = r#"{"a": {"x": [1, "]}"]}, "traceEvents": [{"name": "k\"}"}, {"n": 2} ], "v": 4.1, "s": "x\\"}"#;
        assert_eq!(
            all_chunkings(text).unwrap(),
            vec![
                r#"F@6:a={"x": [1, "]}"]}"#.to_string(),
                r#"E@40:{"name": "k\"}"}"#.to_string(),
                r#"E@58:{"n": 2}"#.to_string(),
                "F@75:v=4.1".to_string(),
                r#"F@85:s="x\\""#.to_string(),
            ]
        );
    }

    #[test]
    fn splits_bare_array() {
        assert_eq!(
            all_chunkings("\u{feff} [ {\"a\":1},{\"b\":[2]} ]\n").unwrap(),
            vec!["E@6:{\"a\":1}".to_string(), "E@14:{\"b\":[2]}".to_string()]
        );
        assert_eq!(all_chunkings("[]").unwrap(), Vec::<String>::new());
        assert_eq!(all_chunkings("{}").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn reports_truncation_and_garbage_with_offsets() {
        assert_eq!(all_chunkings(r#"{"traceEvents": [{"a": 1}"#).unwrap_err().offset, 25);
        assert_eq!(all_chunkings(r#"{"traceEvents": [{"a": "x"#).unwrap_err().offset, 25);
        assert_eq!(all_chunkings("").unwrap_err().problem, "empty input: expected a JSON object or array");
        assert_eq!(all_chunkings("  x").unwrap_err().offset, 2);
        assert_eq!(all_chunkings("[1,]").unwrap_err().offset, 3);
        assert_eq!(all_chunkings("{\"traceEvents\": []} {").unwrap_err().offset, 20);
        assert_eq!(all_chunkings("{\"a\" 1}").unwrap_err().offset, 5);
    }

    #[test]
    fn memory_holds_only_the_unfinished_item() {
        let mut s = Scanner::new();
        let event = br#"{"name": "aten::mm", "ts": 1.5},"#;
        s.feed::<ScanError>(b"{\"traceEvents\": [", &mut |_| Ok(())).unwrap();
        let mut n = 0;
        for _ in 0..1000 {
            s.feed::<ScanError>(event, &mut |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(n, 1000);
        assert!(s.buf.len() <= event.len(), "buffer kept {} bytes", s.buf.len());
        assert_eq!(s.bytes_seen(), 17 + 1000 * event.len() as u64);
    }
}
