//! The structured log `torch.compile` writes with `TORCH_TRACE=DIR`: one header line per entry
//! (a glog-style prefix, `] `, then a JSON object), and, where the header has `has_payload`, the
//! payload on the lines after it, each beginning with one tab.

use std::fmt;

use serde::Deserialize;

use crate::error::LogError;

/// Which compiled graph an entry is about: the frame Dynamo compiled, which compile of it, and
/// which attempt (`0/0`, `1/2_1`), as tlparse and the profiler's `Torch-Compiled Region: 0/0`
/// ranges write it. AOTInductor logs carry none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct CompileId {
    pub frame: Option<u64>,
    pub compile: Option<u64>,
    pub attempt: Option<u64>,
}

impl fmt::Display for CompileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.frame, self.compile) {
            (Some(frame), Some(compile)) => {
                write!(f, "{frame}/{compile}")?;
                match self.attempt {
                    Some(a) if a > 0 => write!(f, "_{a}"),
                    _ => Ok(()),
                }
            }
            _ => f.write_str("(no compile id)"),
        }
    }
}

/// One artifact of the log: its name, the graph it is about, where its header is, and its
/// payload with the leading tabs taken off.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub name: String,
    pub compile: CompileId,
    /// The header's line, counted from 1.
    pub line: usize,
    pub payload: String,
}

#[derive(Deserialize)]
struct Header {
    artifact: Option<ArtifactHeader>,
    frame_id: Option<u64>,
    frame_compile_id: Option<u64>,
    attempt: Option<u64>,
}

#[derive(Deserialize)]
struct ArtifactHeader {
    name: String,
}

/// Whether `head` (a file's first bytes) begins as a structured log does: a glog prefix
/// (`V0521 11:50:39.474000 3054118 path:line] `) and a JSON object after it.
pub fn looks_like(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    // A first line cut inside a character is judged by the part before the cut.
    let line = String::from_utf8_lossy(line);
    if !matches!(line.bytes().next(), Some(b'V' | b'I' | b'W' | b'E' | b'F')) {
        return false;
    }
    let date_time = line.get(1..21).unwrap_or_default();
    let shape_ok = date_time.len() == 20
        && date_time.bytes().enumerate().all(|(i, c)| match i {
            4 | 13 => c == b' ' || c == b'.',
            7 | 10 => c == b':',
            _ => c.is_ascii_digit(),
        });
    shape_ok && line.contains("] {")
}

/// Every artifact of `text` whose name `wanted` accepts, in the log's order. A header whose
/// JSON is broken (a log cut off mid-line) is skipped and counted in `skipped`.
pub fn artifacts(text: &str, wanted: impl Fn(&str) -> bool) -> Result<(Vec<Artifact>, Skipped), LogError> {
    let mut out = Vec::new();
    let mut skipped = Skipped::default();
    let mut current: Option<Artifact> = None;
    let mut any_header = false;
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(payload) = line.strip_prefix('\t') {
            if let Some(a) = current.as_mut() {
                if !a.payload.is_empty() {
                    a.payload.push('\n');
                }
                a.payload.push_str(payload);
            }
            continue;
        }
        out.extend(current.take());
        if line.is_empty() {
            continue;
        }
        let Some(at) = line.find("] {") else {
            if !any_header && i >= 8 {
                return Err(LogError::NotALog);
            }
            skipped.lines += 1;
            continue;
        };
        any_header = true;
        let json = &line[at + 2..];
        // Most entries are not artifacts; only those are parsed in full.
        if !json.contains("\"artifact\"") {
            continue;
        }
        let header: Header = match serde_json::from_str(json) {
            Ok(h) => h,
            Err(_) => {
                skipped.headers.get_or_insert(i + 1);
                skipped.lines += 1;
                continue;
            }
        };
        let Some(artifact) = header.artifact else { continue };
        if !wanted(&artifact.name) {
            continue;
        }
        current = Some(Artifact {
            name: artifact.name,
            compile: CompileId { frame: header.frame_id, compile: header.frame_compile_id, attempt: header.attempt },
            line: i + 1,
            payload: String::new(),
        });
    }
    out.extend(current);
    if !any_header {
        return Err(LogError::NotALog);
    }
    Ok((out, skipped))
}

/// Lines the reader could not use: how many, and the first broken header's line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    pub lines: usize,
    pub headers: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "V0521 11:50:39.804000 3054118 /x/compile_fx.py:2045] ";

    #[test]
    fn payload_lines_join_under_their_header() {
        let text = format!(
            "{HEAD}{{\"artifact\": {{\"name\": \"a\", \"encoding\": \"json\"}}, \"frame_id\": 1, \"frame_compile_id\": 2, \"attempt\": 0, \"has_payload\": \"x\"}}\n\t{{\"k\":\n\t 1}}\n{HEAD}{{\"str\": [\"f\", 0]}}\n"
        );
        let (got, skipped) = artifacts(&text, |_| true).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].payload, "{\"k\":\n 1}");
        assert_eq!(got[0].compile.to_string(), "1/2");
        assert_eq!(got[0].line, 1);
        assert_eq!(skipped, Skipped::default());
    }

    #[test]
    fn a_broken_header_is_skipped_and_counted() {
        let text = format!(
            "{HEAD}{{\"artifact\": {{\"name\": \"a\"\n\tpayload\n{HEAD}{{\"artifact\": {{\"name\": \"b\"}}}}\n"
        );
        let (got, skipped) = artifacts(&text, |_| true).unwrap();
        assert_eq!(got.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(skipped.headers, Some(1));
    }

    #[test]
    fn text_without_headers_is_not_a_log() {
        let text = "hello\n".repeat(20);
        assert!(matches!(artifacts(&text, |_| true), Err(LogError::NotALog)));
        assert!(!looks_like(text.as_bytes()));
        assert!(looks_like(format!("{HEAD}{{\"str\": 1}}").as_bytes()));
        assert!(!looks_like(b"{\"traceEvents\": []}"));
    }
}
