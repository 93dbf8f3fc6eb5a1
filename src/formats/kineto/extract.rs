//! One pass over an event's bytes that reads the keys the analysis uses straight into a
//! [`RawEvent`], without serde: the same view `serde_json` gives, in about a third of the work.
//!
//! **It answers only when it can vouch for serde's answer.** [`event`] returns `None` whenever
//! the bytes hold anything it does not handle exactly as `serde_json` does, and the caller then
//! parses them with serde; so the trace read is the same whichever path an event takes, and
//! every error message is still serde's. `None` is returned for:
//! - an event that is not an object (serde reads an array positionally);
//! - any JSON syntax error, anywhere in the event;
//! - a key written with an escape (serde matches the key after unescaping);
//! - a known key written twice, at the event's top or in its `args` (serde fails with
//!   "duplicate field"; an unknown key written twice is ignored by both);
//! - a string holding a control character, an invalid escape, a surrogate `\u` escape, or bytes
//!   that are not UTF-8 (serde rejects some of these only where it decodes the string, so the
//!   extractor, which rejects them everywhere, hands every such event to serde);
//! - nesting deeper than 64 levels (the scanner rejects that first);
//! - a number that the fast arithmetic below does not reproduce bit for bit: those are parsed
//!   alone by serde_json, which gives the value (or the error, e.g. `1e999` out of range) it
//!   gives in place, since its number parsing does not depend on what surrounds the number.
//!
//! Numbers: serde_json (without its `float_roundtrip` feature, as this crate builds it) reads an
//! integer into a `u64` and a decimal as `significand as f64 / 10^k`. The extractor computes the
//! same for up to 19 digits and no exponent, with the same operations, so the bits agree; a
//! negative integer is `-(significand as f64)` either way (serde's `i64` path rounds the same,
//! and `-0` is `-0.0` in both).
//!
//! Values the analysis does not read are checked for syntax and skipped, never materialised;
//! strings are borrowed from the event's bytes unless they hold an escape.

use std::borrow::Cow;

use super::raw::{MaybeArgs, Num, RawArgs, RawEvent, RawJson, Text};
use super::structural::string_special;

/// The event's fields, or `None` when serde must read it (see the module docs). `bytes` is the
/// whole event, as the scanner gives it.
pub fn event(bytes: &[u8]) -> Option<RawEvent<'_>> {
    let mut p = Parser { b: bytes, i: 0, level: 1, deepest: 1 };
    p.ws();
    let mut event = RawEvent::default();
    let head = read_head(&bytes[p.i..], &mut event)?;
    p.i += head.len;
    p.ws();
    (p.i == bytes.len()).then_some(event)
}

/// Where an event read at the head of a text by [`read_head`] ends, and how deep it nests.
#[derive(Debug, Clone, Copy)]
pub struct Head {
    /// The event's length in bytes, from its `{` to its `}`.
    pub len: usize,
    /// How deep arrays and objects nest in it, the event itself being level 1.
    pub depth: u32,
}

/// Reads the event that starts the text (at its `{`; any bytes may follow it) into `event`
/// (which must be empty), or `None` when serde must read it or it does not end within the text:
/// one pass that both finds the event's end and reads its fields, for a reader that has the
/// event inside a larger slice of text. The fields are written in place: an event's view is a
/// few hundred bytes, and moving it per event showed in profiles.
pub fn read_head<'a>(text: &'a [u8], e: &mut RawEvent<'a>) -> Option<Head> {
    let mut p = Parser { b: text, i: 0, level: 1, deepest: 1 };
    if p.peek()? != b'{' {
        return None;
    }
    p.i += 1;
    let mut seen = 0u32;
    p.object(|p, key| {
        let field = match key {
            b"ph" => 0,
            b"cat" => 1,
            b"name" => 2,
            b"pid" => 3,
            b"tid" => 4,
            b"ts" => 5,
            b"dur" => 6,
            b"args" => 7,
            _ => return p.skip_value(),
        };
        if seen & (1 << field) != 0 {
            return None;
        }
        seen |= 1 << field;
        match field {
            0 => e.ph = p.text()?,
            1 => e.cat = p.text()?,
            2 => e.name = p.text()?,
            3 => e.pid = p.num()?,
            4 => e.tid = p.num()?,
            5 => e.ts = p.num()?,
            6 => e.dur = p.num()?,
            _ => p.args(&mut e.args)?,
        }
        Some(())
    })?;
    Some(Head { len: p.i, depth: p.deepest })
}

/// A value at a known key, as serde's visitors see it.
enum Value<'a> {
    Str(Cow<'a, str>),
    Num(f64),
    /// `true`, `false`, `null`, an array or an object (checked and skipped).
    Other,
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    /// Nesting level of the object whose members are being read (the event is level 1).
    level: u32,
    /// Deepest nesting level reached.
    deepest: u32,
}

/// Powers of ten exactly as serde_json's table holds them (all exact in `f64` up to 10^22).
const POW10: [f64; 20] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19];

/// Deepest nesting [`Parser::skip_value`] follows (the scanner allows 64 levels in all).
const MAX_DEPTH: u32 = 64;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.i += 1;
        }
    }

    /// The members of an object whose `{` was consumed, each key handed to `member` with the
    /// parser at its value; ends after the `}`.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            self.i += 1;
            let key = self.key()?;
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A key after its opening quote, as raw bytes; `None` if it holds an escape.
    fn key(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        let (end, escaped) = self.string_end()?;
        self.i = end + 1;
        (!escaped).then_some(&self.b[start..end])
    }

    /// Finds the closing quote of a string whose opening quote was consumed, checking what
    /// serde checks: no control characters, valid escapes (no surrogates), UTF-8. Returns the
    /// index of the closing quote and whether the string holds an escape, leaving `self.i`
    /// unchanged.
    fn string_end(&self) -> Option<(usize, bool)> {
        let b = self.b;
        let mut i = self.i;
        let (mut non_ascii, mut escaped) = (false, false);
        loop {
            i = string_special(b, i)?;
            match b[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match *b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            let code = hex4(b.get(i + 2..i + 6)?)?;
                            if (0xD800..=0xDFFF).contains(&code) {
                                return None;
                            }
                            i += 6;
                        }
                        _ => return None,
                    }
                }
                c if c >= 0x80 => {
                    non_ascii = true;
                    i += 1;
                }
                _ => return None, // a control character
            }
        }
        if non_ascii && std::str::from_utf8(&b[self.i..i]).is_err() {
            return None;
        }
        Some((i, escaped))
    }

    /// A string after its opening quote, unescaped (borrowed when it holds no escape).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.i;
        let (end, escaped) = self.string_end()?;
        self.i = end + 1;
        let raw = &self.b[start..end];
        // `string_end` checked the bytes are UTF-8 (or ASCII).
        let text = std::str::from_utf8(raw).ok()?;
        if !escaped {
            return Some(Cow::Borrowed(text));
        }
        let mut out = String::with_capacity(raw.len());
        let mut chars = text.char_indices();
        while let Some((at, c)) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let (_, e) = chars.next()?;
            out.push(match e {
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => {
                    let code = hex4(raw.get(at + 2..at + 6)?)?;
                    for _ in 0..4 {
                        chars.next();
                    }
                    char::from_u32(code)?
                }
                other => other, // `"`, `\\`, `/`
            });
        }
        Some(Cow::Owned(out))
    }

    /// Any value at a known key.
    fn value(&mut self) -> Option<Value<'a>> {
        match self.peek()? {
            b'"' => {
                self.i += 1;
                self.string().map(Value::Str)
            }
            b'-' | b'0'..=b'9' => self.number().map(Value::Num),
            _ => self.skip_value().map(|()| Value::Other),
        }
    }

    /// A string field ([`Text`]): any other value reads as absent.
    fn text(&mut self) -> Option<Text<'a>> {
        Some(Text(match self.value()? {
            Value::Str(s) => Some(s),
            _ => None,
        }))
    }

    /// A number field ([`Num`]): a numeric string reads as its number, as serde's visitor does.
    fn num(&mut self) -> Option<Num> {
        Some(Num(match self.value()? {
            Value::Num(v) => Some(v),
            Value::Str(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
            Value::Other => None,
        }))
    }

    /// `args`: the keys of [`RawArgs`] when it is an object, else absent. Filled in place: the
    /// args are most of a [`RawEvent`]'s size, and moving them per event cost more than reading
    /// some of their keys.
    fn args(&mut self, slot: &mut MaybeArgs<'a>) -> Option<()> {
        if self.peek()? != b'{' {
            return match self.value()? {
                Value::Str(_) | Value::Num(_) | Value::Other => Some(()),
            };
        }
        self.i += 1;
        self.level += 1;
        self.deepest = self.deepest.max(self.level);
        let a = slot.0.insert(RawArgs::default());
        let mut seen = 0u32;
        self.object(|p, key| {
            let field = match key {
                b"External id" => 0,
                b"correlation" => 1,
                b"device" => 2,
                b"stream" => 3,
                b"bytes" => 4,
                b"kind" => 5,
                b"kernel" => 6,
                b"Input Dims" => 7,
                b"Input type" => 8,
                b"Concrete Inputs" => 9,
                b"Collective name" => 10,
                b"In msg nelems" => 11,
                b"Out msg nelems" => 12,
                b"Group size" => 13,
                b"dtype" => 14,
                b"Process Group Name" => 15,
                b"Process Group Description" => 16,
                b"Process Group Ranks" => 17,
                b"kernel_num_gb" => 18,
                b"kernel_flop" => 19,
                b"Input Strides" => 20,
                _ => return p.skip_value(),
            };
            if seen & (1 << field) != 0 {
                return None;
            }
            seen |= 1 << field;
            match field {
                0 => a.external_id = p.num()?,
                1 => a.correlation = p.num()?,
                2 => a.device = p.num()?,
                3 => a.stream = p.num()?,
                4 => a.bytes = p.num()?,
                5 => a.kind = p.text()?,
                6 => a.kernel = p.text()?,
                7 => a.input_dims = p.raw()?,
                8 => a.input_types = p.raw()?,
                9 => a.concrete_inputs = p.raw()?,
                20 => a.input_strides = p.raw()?,
                10 => a.collective_name = p.text()?,
                11 => a.in_msg_nelems = p.num()?,
                12 => a.out_msg_nelems = p.num()?,
                13 => a.group_size = p.num()?,
                14 => a.dtype = p.text()?,
                15 => a.pg_name = p.text()?,
                16 => a.pg_desc = p.text()?,
                17 => a.pg_ranks = p.text()?,
                18 => a.kernel_num_gb = p.num()?,
                _ => a.kernel_flop = p.num()?,
            }
            Some(())
        })?;
        self.level -= 1;
        Some(())
    }

    /// A value kept as its JSON text (`null` reads as absent, as serde's `Option` does).
    fn raw(&mut self) -> Option<Option<RawJson<'a>>> {
        let start = self.i;
        self.skip_value()?;
        let text = &self.b[start..self.i];
        if text == b"null" {
            return Some(None);
        }
        std::str::from_utf8(text).ok().map(|t| Some(RawJson(t)))
    }

    /// A number at a known key, as serde_json's value (see the module docs).
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let int_start = self.i;
        let mut significand: u64 = 0;
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                while let Some(c @ b'0'..=b'9') = self.peek() {
                    significand = significand.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    self.i += 1;
                }
            }
            _ => return None,
        }
        let int_digits = self.i - int_start;
        let mut frac_digits = 0;
        if self.peek() == Some(b'.') {
            self.i += 1;
            while let Some(c @ b'0'..=b'9') = self.peek() {
                significand = significand.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                self.i += 1;
                frac_digits += 1;
            }
            if frac_digits == 0 {
                return None;
            }
        }
        let exponent = matches!(self.peek(), Some(b'e' | b'E'));
        if exponent {
            self.exponent()?;
        }
        if matches!(self.peek(), Some(b'0'..=b'9')) {
            return None; // a leading zero followed by digits
        }
        if exponent || int_digits + frac_digits > 19 {
            return serde_json::from_slice::<Num>(&self.b[start..self.i]).ok()?.0;
        }
        let magnitude = significand as f64;
        let magnitude = if frac_digits == 0 { magnitude } else { magnitude / POW10[frac_digits] };
        Some(if negative { -magnitude } else { magnitude })
    }

    /// `[eE][+-]?[0-9]+` at the parser.
    fn exponent(&mut self) -> Option<()> {
        self.i += 1;
        if let Some(b'+' | b'-') = self.peek() {
            self.i += 1;
        }
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        Some(())
    }

    /// Checks and steps over one value of any kind, nested ones included, materialising none.
    fn skip_value(&mut self) -> Option<()> {
        // Bit `d` of `objects`: whether the container at depth `d + 1` is an object.
        let (mut depth, mut objects) = (0u32, 0u64);
        loop {
            // A value.
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    self.i = self.string_end()?.0 + 1;
                }
                b'-' | b'0'..=b'9' => self.skip_number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                open @ (b'[' | b'{') => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    self.i += 1;
                    self.deepest = self.deepest.max(self.level + depth + 1);
                    self.ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.i += 1;
                    } else {
                        objects = (objects & !(1 << depth)) | (u64::from(open == b'{') << depth);
                        depth += 1;
                        if open == b'{' {
                            self.member_key()?;
                        }
                        continue;
                    }
                }
                _ => return None,
            }
            // After a value: close containers or move to the next element.
            loop {
                if depth == 0 {
                    return Some(());
                }
                let in_object = objects & (1 << (depth - 1)) != 0;
                self.ws();
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        self.ws();
                        if in_object {
                            self.member_key()?;
                        }
                        break;
                    }
                    b'}' if in_object => {
                        self.i += 1;
                        depth -= 1;
                    }
                    b']' if !in_object => {
                        self.i += 1;
                        depth -= 1;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// `"key" :` inside a skipped object, leaving the parser at the value.
    fn member_key(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        self.i = self.string_end()?.0 + 1;
        self.ws();
        if self.peek()? != b':' {
            return None;
        }
        self.i += 1;
        self.ws();
        Some(())
    }

    /// A number's syntax, as serde_json checks a number it ignores (no range check).
    fn skip_number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => {
                self.i += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return None;
                }
            }
            b'1'..=b'9' => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.i += 1;
                }
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.i += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.exponent()?;
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }
}

/// Four hex digits as a number.
fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?))
}

#[cfg(test)]
mod tests;
