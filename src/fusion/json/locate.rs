//! Where in a graph file an error is: byte offsets of each op object and declared tensor, found
//! by a small scanner only once there is an error to place, and turned into line and column.

use std::collections::BTreeMap;

use crate::error::Location;

/// serde_json appends " at line L column C"; we print the position ourselves.
pub(super) fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// 1-based line and column of a byte offset.
pub(super) fn location(text: &str, offset: usize) -> Location {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    Location { line, column: offset - line_start + 1 }
}

/// Byte offsets of each op object and each declared tensor's key in a well-formed file.
#[derive(Debug, Default)]
pub(super) struct Spots {
    pub(super) ops: Vec<usize>,
    pub(super) tensors: BTreeMap<String, usize>,
}

/// Finds [`Spots`] with a small scanner. It runs only on text serde_json has already accepted,
/// so it can assume well-formed JSON.
pub(super) fn locate(text: &str) -> Spots {
    let mut sc = Scanner { b: text.as_bytes(), i: 0 };
    let mut spots = Spots::default();
    sc.ws();
    match sc.peek() {
        Some(b'[') => spots.ops = sc.array_elements(),
        Some(b'{') => {
            sc.i += 1;
            loop {
                sc.ws();
                if sc.peek() != Some(b'"') {
                    break;
                }
                let key = sc.string();
                sc.ws();
                sc.i += 1; // ':'
                sc.ws();
                match key.as_str() {
                    "ops" if sc.peek() == Some(b'[') => spots.ops = sc.array_elements(),
                    "tensors" if sc.peek() == Some(b'{') => spots.tensors = sc.object_keys(),
                    _ => sc.value(),
                }
                sc.ws();
                if sc.peek() == Some(b',') {
                    sc.i += 1;
                }
            }
        }
        _ => {}
    }
    spots
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    /// Skips a string starting at `"`, returning its raw contents (escapes left as they are;
    /// enough to match keys, which are compared with the decoded names only when plain).
    fn string(&mut self) -> String {
        let start = self.i + 1;
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => break,
                _ => {}
            }
        }
        let raw = &self.b[start..self.i.saturating_sub(1).max(start)];
        serde_json::from_slice::<String>(&self.b[start - 1..self.i])
            .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
    }

    fn value(&mut self) {
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'[' | b'{') => {
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    match c {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.i += 1;
                }
            }
        }
    }

    fn array_elements(&mut self) -> Vec<usize> {
        let mut starts = Vec::new();
        self.i += 1; // '['
        loop {
            self.ws();
            match self.peek() {
                Some(b']') | None => {
                    self.i += 1;
                    return starts;
                }
                Some(b',') => self.i += 1,
                Some(_) => {
                    starts.push(self.i);
                    self.value();
                }
            }
        }
    }

    fn object_keys(&mut self) -> BTreeMap<String, usize> {
        let mut keys = BTreeMap::new();
        self.i += 1; // '{'
        loop {
            self.ws();
            match self.peek() {
                Some(b'}') | None => {
                    self.i += 1;
                    return keys;
                }
                Some(b',') => self.i += 1,
                Some(b'"') => {
                    let at = self.i;
                    let key = self.string();
                    keys.insert(key, at);
                    self.ws();
                    self.i += 1; // ':'
                    self.ws();
                    self.value();
                }
                Some(_) => self.i += 1,
            }
        }
    }
}
