//! The scan of one JSON value whose end is being looked for, resumable across chunks: string,
//! escape and nesting state, and the byte classes and 64-byte blocks (`structural`) that let
//! it skip the runs between the bytes that matter.

use super::super::structural::{self, prefix_xor, BLOCK};

/// How scanning part of a value ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Advance {
    /// The value ends before this index.
    Ended(usize),
    /// The bytes ran out, at this index, before the value ended.
    Open(usize),
    /// The array or object opening at this index nests deeper than the limit.
    TooDeep(usize),
}

/// Progress through one value whose end is being looked for. It is all the state the scan
/// needs, so the next chunk's scan starts where this one stopped.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ValueScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// A number, `true`, `false` or `null`: ends at the next delimiter.
    scalar: bool,
}

impl ValueScan {
    pub(super) fn begin(first: u8) -> Self {
        match first {
            b'{' | b'[' => ValueScan { depth: 1, ..Default::default() },
            b'"' => ValueScan { in_string: true, ..Default::default() },
            _ => ValueScan { scalar: true, ..Default::default() },
        }
    }

    /// Advances over `buf[i..]`, nesting no deeper than `max_depth`. `buf[start]` (the opening
    /// byte) was already consumed by `begin`.
    pub(super) fn advance(&mut self, buf: &[u8], mut i: usize, max_depth: u32) -> Advance {
        if self.scalar {
            while i < buf.len() {
                if matches!(buf[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    return Advance::Ended(i);
                }
                i += 1;
            }
            return Advance::Open(i);
        }
        let n = buf.len();
        while i < n {
            // Inside a container, not just after a backslash, a whole block ahead: its brackets
            // outside strings, from its masks, unless a backslash makes the quotes ambiguous.
            if self.depth > 0 && !self.escape {
                if let Some(block) = buf[i..].first_chunk::<BLOCK>() {
                    let m = structural::masks(block);
                    let end = i + BLOCK;
                    if m.backslash != 0 {
                        i = match self.bytes(buf, i, end, max_depth) {
                            Ok(next) => next,
                            Err(done) => return done,
                        };
                        continue;
                    }
                    let strings = prefix_xor(m.quote) ^ if self.in_string { u64::MAX } else { 0 };
                    let mut brackets = (m.open | m.close) & !strings;
                    while brackets != 0 {
                        let at = brackets.trailing_zeros() as usize;
                        brackets &= brackets - 1;
                        if m.open >> at & 1 == 1 {
                            if self.depth >= max_depth {
                                return Advance::TooDeep(i + at);
                            }
                            self.depth += 1;
                        } else {
                            self.depth -= 1;
                            if self.depth == 0 {
                                self.in_string = false;
                                return Advance::Ended(i + at + 1);
                            }
                        }
                    }
                    self.in_string = strings >> 63 == 1;
                    i = end;
                    continue;
                }
            }
            i = match self.bytes(buf, i, n, max_depth) {
                Ok(next) => next,
                Err(done) => return done,
            };
        }
        Advance::Open(i)
    }

    /// Advances byte by byte over `buf[i..end]`: `Ok(end)` when the value goes on past it,
    /// `Err` when it ends or nests too deep there.
    fn bytes(&mut self, buf: &[u8], mut i: usize, end: usize, max_depth: u32) -> Result<usize, Advance> {
        while i < end {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                // Most strings of a trace are short keys and numbers' neighbours: look at a few
                // bytes inline before paying for a vectorised search's set-up.
                let inline_end = end.min(i + 24);
                while i < inline_end && BYTE_CLASS[buf[i] as usize] & IN_STRING == 0 {
                    i += 1;
                }
                if i == inline_end {
                    match memchr::memchr2(b'"', b'\\', &buf[i..end]) {
                        None => {
                            i = end;
                            continue;
                        }
                        Some(p) => i += p,
                    }
                }
                if buf[i] == b'\\' {
                    self.escape = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Err(Advance::Ended(i + 1));
                    }
                }
                i += 1;
            } else {
                while i < end && BYTE_CLASS[buf[i] as usize] & STRUCTURAL == 0 {
                    i += 1;
                }
                if i == end {
                    break;
                }
                let b = buf[i];
                i += 1;
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => {
                        if self.depth >= max_depth {
                            return Err(Advance::TooDeep(i - 1));
                        }
                        self.depth += 1;
                    }
                    _ => {
                        // `}` or `]`
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return Err(Advance::Ended(i));
                        }
                    }
                }
            }
        }
        Ok(i)
    }
}

/// [`BYTE_CLASS`] bit: a byte that ends a run inside a string (`"`, `\\`).
const IN_STRING: u8 = 1;
/// [`BYTE_CLASS`] bit: a byte that matters outside strings (`"`, `{`, `[`, `}`, `]`).
const STRUCTURAL: u8 = 2;

/// What each byte value means to [`ValueScan::advance`]: one table look-up a byte instead of a
/// chain of comparisons, so the runs between the bytes that matter are skipped in a tight loop.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = IN_STRING | STRUCTURAL;
    t[b'\\' as usize] = IN_STRING;
    t[b'{' as usize] = STRUCTURAL;
    t[b'[' as usize] = STRUCTURAL;
    t[b'}' as usize] = STRUCTURAL;
    t[b']' as usize] = STRUCTURAL;
    t
};
