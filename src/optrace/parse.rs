//! The optrace text form (`docs/optrace.md`): one instruction a line,
//!
//! ```text
//! <pid>:<rank>:<stream> <results> = <domain>.<version>.<opname>(<args>)
//! ```
//!
//! A line is a *record* when, somewhere in it, a prefix of three fields (integers or `None`)
//! is followed by results that start with `%` (or by nothing), an `=`, and a callee made of
//! name characters directly followed by `(`. Text before the prefix is stray output glued to
//! the line and is ignored. Lines with no such skeleton are not records: they are skipped and
//! counted. A record whose inside does not follow the grammar is an error naming its line.
//!
//! Results may be written without a type (`%5, %6 = …`); their types may then follow the call
//! (`… ) : <2xf16>, <2xf16>`), or come from a later use of the same id.
//!
//! Op traces come from strangers, so reading is held to the budgets of [`limits`]: a line
//! of at most [`OPTRACE_LINE_BYTES`], brackets nested at most [`OPTRACE_NESTING`] deep (the only
//! recursion, into `list{…}`, is therefore bounded), at most [`OPTRACE_RECORDS`] records; and
//! every step is linear in the line (finding the record in a line included, see `locate`).

use thiserror::Error;

use super::dtype::Dtype;
use limits::{OPTRACE_LINE_BYTES, OPTRACE_NESTING, OPTRACE_RECORDS};
use units::group_digits;

/// A whole op trace: its records in file order and what was skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpTrace {
    pub records: Vec<Record>,
    /// 1-based numbers of the lines that are not records (blank lines included).
    pub skipped_lines: Vec<usize>,
}

/// The `<pid>:<rank>:<stream>` prefix; `None` fields stay `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prefix {
    pub pid: Option<i64>,
    pub rank: Option<i64>,
    pub stream: Option<i64>,
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// 1-based line number in the file.
    pub line: usize,
    pub prefix: Prefix,
    /// The whole callee (`nova_plus.1.0.0.dot`).
    pub callee: String,
    /// The op name: the callee after its last `.` (`dot`, `aten::mm`).
    pub op: String,
    pub results: Vec<TensorRef>,
    pub args: Vec<Arg>,
}

impl Record {
    /// Every tensor of the arguments (lists and keywords included), left to right.
    pub fn operand_tensors(&self) -> Vec<&TensorRef> {
        let mut out = Vec::new();
        for a in &self.args {
            a.value.collect_tensors(&mut out);
        }
        out
    }

    /// The positional arguments (keywords left out), in order: Nova's "operand i".
    pub fn positional(&self) -> impl Iterator<Item = &Value> {
        self.args.iter().filter(|a| a.keyword.is_none()).map(|a| &a.value)
    }
}

/// One argument, with its keyword if it was written `name=value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub keyword: Option<String>,
    pub value: Value,
}

/// An argument value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Tensor(TensorRef),
    /// `value:type`: `2:i32`, `0.1:f32`, `False:pred`, `None:NoneType`.
    Scalar {
        value: String,
        ty: String,
    },
    /// An opaque object: `ScriptObject <…>:ScriptObject`.
    Object {
        text: String,
        ty: String,
    },
    /// `list{a, b, …}`, possibly nested.
    List(Vec<Value>),
}

impl Value {
    fn collect_tensors<'a>(&'a self, out: &mut Vec<&'a TensorRef>) {
        match self {
            Value::Tensor(t) => out.push(t),
            Value::List(items) => items.iter().for_each(|v| v.collect_tensors(out)),
            Value::Scalar { .. } | Value::Object { .. } => {}
        }
    }
}

/// A tensor as it appears at one use: `%236:<12288x4608xf16>{1,12288}+0`.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorRef {
    pub id: u64,
    /// The type at this use (results may be written without one).
    pub ty: Option<TensorType>,
    pub strides: Option<Vec<i64>>,
    /// Element offset (`+12288`).
    pub offset: Option<u64>,
}

/// Shape and element type; a 0-d tensor has an empty shape.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorType {
    pub shape: Vec<u64>,
    pub dtype: Dtype,
}

/// A line that cannot be read: a record that does not follow the grammar, or a line over one
/// of the budgets. `column` (1-based, in characters) is given where it says more than the line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}{}: {kind}", column_text(.column))]
pub struct ParseError {
    pub line: usize,
    pub column: Option<usize>,
    pub kind: ParseErrorKind,
}

fn column_text(column: &Option<usize>) -> String {
    column.map(|c| format!(", column {c}")).unwrap_or_default()
}

/// What is wrong with a line. Quoted text is shortened to 60 characters.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseErrorKind {
    #[error("malformed record: '{open}' is never closed")]
    Unclosed { open: char },
    #[error("malformed record: unexpected '{close}'")]
    UnexpectedClose { close: char },
    #[error("malformed record: text after the closing parenthesis: `{text}`")]
    TrailingText { text: String },
    #[error("malformed record: an empty argument (two commas in a row, or a trailing comma)")]
    EmptyArgument,
    #[error("malformed record: argument `{text}` has no `:type` (scalars are written value:type)")]
    MissingType { text: String },
    #[error("malformed record: result `{text}` is not a tensor (%id with an optional :<type>)")]
    BadResult { text: String },
    #[error("malformed record: tensor `{text}`: {reason}")]
    BadTensor { text: String, reason: &'static str },
    /// Over [`OPTRACE_LINE_BYTES`].
    #[error(
        "the line is {} bytes long, over the budget of {} bytes for one op-trace line",
        group_digits(*.bytes as u64),
        group_digits(*.limit as u64)
    )]
    LineTooLong { bytes: usize, limit: usize },
    /// Over [`OPTRACE_NESTING`]; the error's column is the bracket that goes one level too deep.
    #[error("types nested deeper than {limit} levels (`(`, `{{` and `<` open at once; real records nest 3 deep)")]
    TooDeep { limit: usize },
    /// Over [`OPTRACE_RECORDS`]; the error's line is the first record over the budget.
    #[error("more than {} records, the budget of one op trace", group_digits(*.limit as u64))]
    TooManyRecords { limit: usize },
}

/// Reads a whole op trace. Lines that are not records are skipped and counted; the first
/// malformed record, or line over a budget, is an error (the record after the
/// [`OPTRACE_RECORDS`]th included).
pub fn parse_optrace(text: &str) -> Result<OpTrace, ParseError> {
    let mut trace = OpTrace::default();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        match parse_line(line, number)? {
            Some(_) if trace.records.len() == OPTRACE_RECORDS => {
                let kind = ParseErrorKind::TooManyRecords { limit: OPTRACE_RECORDS };
                return Err(ParseError { line: number, column: None, kind });
            }
            Some(record) => trace.records.push(record),
            None => trace.skipped_lines.push(number),
        }
    }
    Ok(trace)
}

/// Whether a text looks like an op trace (for telling dropped files apart): one of its first
/// 200 lines holds a record.
pub fn looks_like_optrace(text: &str) -> bool {
    text.lines().take(200).any(|line| locate(line).is_some())
}

/// One line: `Ok(None)` when it holds no record. A line longer than [`OPTRACE_LINE_BYTES`] is
/// an error whatever it holds, and so is a record nested deeper than [`OPTRACE_NESTING`]
/// (checked before anything recurses).
pub fn parse_line(line: &str, number: usize) -> Result<Option<Record>, ParseError> {
    if line.len() > OPTRACE_LINE_BYTES {
        let kind = ParseErrorKind::LineTooLong { bytes: line.len(), limit: OPTRACE_LINE_BYTES };
        return Err(ParseError { line: number, column: None, kind });
    }
    let Some(skeleton) = locate(line) else { return Ok(None) };
    if let Some(at) = too_deep(&line[skeleton.start..], OPTRACE_NESTING) {
        let column = line[..skeleton.start + at].chars().count() + 1;
        let kind = ParseErrorKind::TooDeep { limit: OPTRACE_NESTING };
        return Err(ParseError { line: number, column: Some(column), kind });
    }
    let err = |kind| ParseError { line: number, column: None, kind };
    let results: Vec<TensorRef> = if skeleton.results.trim().is_empty() {
        Vec::new()
    } else {
        split_top_level(skeleton.results)
            .map_err(err)?
            .into_iter()
            .map(|r| parse_result(r.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?
    };
    let body = skeleton.after_paren;
    let close = matching_close(body).map_err(err)?;
    let mut results = results;
    apply_trailing_result_types(body[close + 1..].trim(), &mut results).map_err(err)?;
    let inner = &body[..close];
    let args = if inner.trim().is_empty() {
        Vec::new()
    } else {
        split_top_level(inner)
            .map_err(err)?
            .into_iter()
            .map(|a| parse_arg(a.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?
    };
    let op = skeleton.callee.rsplit('.').next().unwrap_or(skeleton.callee).to_string();
    Ok(Some(Record { line: number, prefix: skeleton.prefix, callee: skeleton.callee.to_string(), op, results, args }))
}

/// Result types written after the call (`… = d.v.split(%4:<4xf16>) : <2xf16>, <2xf16>`, with
/// `:` or `->` or nothing before them): one `<type>` per result, filling in the results written
/// without one. Any other text after the call is an error.
fn apply_trailing_result_types(trailing: &str, results: &mut [TensorRef]) -> Result<(), ParseErrorKind> {
    let types = trailing.strip_prefix("->").or_else(|| trailing.strip_prefix(':')).unwrap_or(trailing).trim();
    if types.is_empty() {
        return Ok(());
    }
    let trailing_error = || ParseErrorKind::TrailingText { text: shorten(trailing) };
    let parts = split_top_level(types).map_err(|_| trailing_error())?;
    if parts.len() != results.len() {
        return Err(trailing_error());
    }
    for (part, result) in parts.iter().zip(results.iter_mut()) {
        let inner = part.trim().strip_prefix('<').and_then(|p| p.strip_suffix('>')).ok_or_else(trailing_error)?;
        let ty = parse_tensor_type(inner).map_err(|_| trailing_error())?;
        result.ty.get_or_insert(ty);
    }
    Ok(())
}

/// Where brackets first nest deeper than `limit`: the byte index of the bracket that opens
/// level `limit + 1`, if any. Any closing bracket lowers the level (never below 0), whatever it
/// closes: this bounds the nesting, the grammar is checked later. A `list{…}` nested `d` deep
/// in a record that passes holds at least `d` open brackets, so the parser's recursion is
/// bounded by `limit` too.
fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'{' | b'<' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b')' | b'}' | b'>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The parts of a line that make it a record.
struct Skeleton<'a> {
    /// Byte index of the prefix in the line (what comes before it is stray text).
    start: usize,
    prefix: Prefix,
    results: &'a str,
    callee: &'a str,
    /// Everything after the callee's `(`.
    after_paren: &'a str,
}

/// Finds the first position where a record starts (see the module docs).
///
/// Every position that could start a prefix is tried, left to right, and must stay cheap: a
/// line of 100,000 prefixes (`0:0:0 0:0:0 …`) has 100,000 of them. Each parses only its own
/// prefix (a few bytes). The search for the `=` after a prefix and the check of the callee
/// after that `=` would each run to the end of the line, once per position, which is
/// quadratic; they are remembered instead ([`Tails`]) and shared by every position that leads
/// to the same `=`, so that the whole line is read a bounded number of times.
fn locate(line: &str) -> Option<Skeleton<'_>> {
    let bytes = line.as_bytes();
    let mut tails = Tails::default();
    (0..bytes.len())
        .filter(|&p| p == 0 || !bytes[p - 1].is_ascii_digit())
        .filter(|&p| bytes[p].is_ascii_digit() || bytes[p] == b'N' || bytes[p] == b'-')
        .find_map(|p| skeleton_at(line, p, &mut tails))
}

fn skeleton_at<'a>(line: &'a str, start: usize, tails: &mut Tails) -> Option<Skeleton<'a>> {
    let s = &line[start..];
    let (pid, s) = prefix_field(s)?;
    let s = s.strip_prefix(':')?;
    let (rank, s) = prefix_field(s)?;
    let s = s.strip_prefix(':')?;
    let (stream, s) = prefix_field(s)?;
    if !s.starts_with(|c: char| c.is_whitespace()) {
        return None;
    }
    // The results start at `from`; they are empty (`=` right there) or start with `%`.
    let from = line.len() - s.trim_start().len();
    let eq = tails.next_eq(line, from)?;
    if !(eq == from || line.as_bytes()[from] == b'%') {
        return None;
    }
    let (callee_start, paren) = tails.callee_after(line, eq)?;
    Some(Skeleton {
        start,
        prefix: Prefix { pid, rank, stream },
        results: &line[from..eq],
        callee: &line[callee_start..paren],
        after_paren: &line[paren + 1..],
    })
}

/// What follows the prefixes [`locate`] tries, remembered from one to the next.
///
/// The prefixes that parse end in the order they start (one starting inside another fails,
/// except a field's digits after its `-`, which ends at the same place), so the `=` looked for
/// is never before the last one found: remembering the last search answers the next one
/// unless it starts past the `=` found, and each `=`'s callee is checked once. The line is
/// thus read once for `=` and once for callees, however many prefixes it holds.
#[derive(Default)]
struct Tails {
    /// The last search for `=`: where it started, and the `=` it found (the first at or after
    /// the start; `None` when there is none to the end of the line).
    eq: Option<(usize, Option<usize>)>,
    /// The last callee checked: the `=` it follows, and its start and `(` when it is one.
    callee: Option<(usize, Option<(usize, usize)>)>,
}

impl Tails {
    /// The first `=` at or after `from`.
    fn next_eq(&mut self, line: &str, from: usize) -> Option<usize> {
        if let Some((start, found)) = self.eq {
            if start <= from && found.is_none_or(|f| from <= f) {
                return found;
            }
        }
        let found = line.as_bytes()[from..].iter().position(|&b| b == b'=').map(|i| from + i);
        self.eq = Some((from, found));
        found
    }

    /// The callee after the `=` at `eq` (blanks skipped): its start and the index of its `(`,
    /// when it is one or more name characters (letters, digits, `_ . : -`) directly followed by
    /// `(`.
    fn callee_after(&mut self, line: &str, eq: usize) -> Option<(usize, usize)> {
        if let Some((at, callee)) = self.callee {
            if at == eq {
                return callee;
            }
        }
        let rest = line[eq + 1..].trim_start();
        let start = line.len() - rest.len();
        let name_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(*b, b'_' | b'.' | b':' | b'-');
        let len = rest.bytes().take_while(name_byte).count();
        let callee = (len > 0 && rest.as_bytes().get(len) == Some(&b'(')).then_some((start, start + len));
        self.callee = Some((eq, callee));
        callee
    }
}

/// An integer or `None`, and the rest of the text.
fn prefix_field(s: &str) -> Option<(Option<i64>, &str)> {
    if let Some(rest) = s.strip_prefix("None") {
        return Some((None, rest));
    }
    let digits_start = usize::from(s.starts_with('-'));
    let end = digits_start + s[digits_start..].bytes().take_while(u8::is_ascii_digit).count();
    if end == digits_start {
        return None;
    }
    Some((Some(s[..end].parse().ok()?), &s[end..]))
}

fn opening(close: u8) -> u8 {
    match close {
        b')' => b'(',
        b'}' => b'{',
        _ => b'<',
    }
}

/// Index of the `)` that closes the argument list `s` starts inside of.
fn matching_close(s: &str) -> Result<usize, ParseErrorKind> {
    let mut stack = vec![b'('];
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'{' | b'<' => stack.push(b),
            b')' | b'}' | b'>' => {
                if stack.last() != Some(&opening(b)) {
                    return Err(ParseErrorKind::UnexpectedClose { close: b as char });
                }
                stack.pop();
                if stack.is_empty() {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err(ParseErrorKind::Unclosed { open: stack.last().copied().unwrap_or(b'(') as char })
}

/// Splits on commas outside any `()`, `{}` or `<>`.
fn split_top_level(s: &str) -> Result<Vec<&str>, ParseErrorKind> {
    let mut parts = Vec::new();
    let mut stack: Vec<u8> = Vec::new();
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'{' | b'<' => stack.push(b),
            b')' | b'}' | b'>' if stack.pop() != Some(opening(b)) => {
                return Err(ParseErrorKind::UnexpectedClose { close: b as char });
            }
            b',' if stack.is_empty() => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if let Some(&open) = stack.last() {
        return Err(ParseErrorKind::Unclosed { open: open as char });
    }
    parts.push(&s[start..]);
    Ok(parts)
}

fn parse_result(text: &str) -> Result<TensorRef, ParseErrorKind> {
    if !text.starts_with('%') {
        return Err(ParseErrorKind::BadResult { text: shorten(text) });
    }
    parse_tensor(text)
}

fn parse_arg(text: &str) -> Result<Arg, ParseErrorKind> {
    let ident_len = text.bytes().take_while(|&b| b.is_ascii_alphanumeric() || b == b'_').count();
    let starts_ident = text.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if starts_ident && text[ident_len..].starts_with('=') {
        let value = parse_value(text[ident_len + 1..].trim())?;
        return Ok(Arg { keyword: Some(text[..ident_len].to_string()), value });
    }
    Ok(Arg { keyword: None, value: parse_value(text)? })
}

fn parse_value(text: &str) -> Result<Value, ParseErrorKind> {
    if text.is_empty() {
        return Err(ParseErrorKind::EmptyArgument);
    }
    if text.starts_with('%') {
        let t = parse_tensor(text)?;
        if t.ty.is_none() {
            return Err(ParseErrorKind::BadTensor {
                text: shorten(text),
                reason: "an operand needs its type (:<dims x dtype>)",
            });
        }
        return Ok(Value::Tensor(t));
    }
    if let Some(inner) = text.strip_prefix("list{").and_then(|r| r.strip_suffix('}')) {
        if inner.trim().is_empty() {
            return Ok(Value::List(Vec::new()));
        }
        let items = split_top_level(inner)?.into_iter().map(|i| parse_value(i.trim())).collect::<Result<_, _>>()?;
        return Ok(Value::List(items));
    }
    let colon = last_top_level_colon(text).ok_or_else(|| ParseErrorKind::MissingType { text: shorten(text) })?;
    let (value, ty) = (text[..colon].trim(), text[colon + 1..].trim());
    if value.is_empty() || ty.is_empty() || !ty.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
        return Err(ParseErrorKind::MissingType { text: shorten(text) });
    }
    if value.contains(['<', ' ']) {
        Ok(Value::Object { text: value.to_string(), ty: ty.to_string() })
    } else {
        Ok(Value::Scalar { value: value.to_string(), ty: ty.to_string() })
    }
}

fn last_top_level_colon(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut found = None;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'{' | b'<' => depth += 1,
            b')' | b'}' | b'>' => depth -= 1,
            b':' if depth == 0 => found = Some(i),
            _ => {}
        }
    }
    found
}

/// `%<id>` with optional `:<dims x dtype>`, `{strides}` and `+offset`, nothing else.
fn parse_tensor(text: &str) -> Result<TensorRef, ParseErrorKind> {
    let bad = |reason| ParseErrorKind::BadTensor { text: shorten(text), reason };
    let rest = &text[1..];
    let id_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let id: u64 = rest[..id_len].parse().map_err(|_| bad("the id after % is not a whole number"))?;
    let mut rest = &rest[id_len..];
    let mut ty = None;
    if let Some(r) = rest.strip_prefix(":<") {
        let end = r.find('>').ok_or_else(|| bad("the type has no closing >"))?;
        ty = Some(parse_tensor_type(&r[..end]).map_err(bad)?);
        rest = &r[end + 1..];
    }
    let mut strides = None;
    if let Some(r) = rest.strip_prefix('{') {
        let end = r.find('}').ok_or_else(|| bad("the strides have no closing }"))?;
        let parsed: Result<Vec<i64>, _> = r[..end].split(',').map(|s| s.trim().parse::<i64>()).collect();
        strides = Some(parsed.map_err(|_| bad("a stride is not a whole number"))?);
        rest = &r[end + 1..];
    }
    let mut offset = None;
    if let Some(r) = rest.strip_prefix('+') {
        offset = Some(r.trim().parse::<u64>().map_err(|_| bad("the offset after + is not a whole number"))?);
        rest = "";
    }
    if !rest.trim().is_empty() {
        return Err(bad("unexpected text after the tensor"));
    }
    Ok(TensorRef { id, ty, strides, offset })
}

/// `1x128xf16` → `[1, 128]` and f16; `f32` → a 0-d f32.
fn parse_tensor_type(inner: &str) -> Result<TensorType, &'static str> {
    let inner = inner.trim();
    let (dims, dtype) = match inner.rsplit_once('x') {
        // `x` inside a dtype name would be odd, but a name must not start with a digit.
        Some((dims, dtype)) if !dtype.is_empty() && !dtype.starts_with(|c: char| c.is_ascii_digit()) => {
            (Some(dims), dtype)
        }
        _ => (None, inner),
    };
    if dtype.is_empty() || !dtype.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err("the element type is missing or not a name");
    }
    if dtype.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("the type has no element type after its dimensions");
    }
    let shape = match dims {
        None => Vec::new(),
        Some(d) => d
            .split('x')
            .map(|s| s.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| "a dimension is not a whole number")?,
    };
    Ok(TensorType { shape, dtype: Dtype::parse(dtype) })
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
