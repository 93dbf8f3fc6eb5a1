//! Which events the Kineto reader steps over unparsed, by their raw bytes: the categories no
//! analysis reads (Python frames, flows, memory instants) and, for a sink that takes no
//! CPU-side events, those too, but for a `cpu_op` that may be a C++ kernel of a CPU run
//! ([`cpu_kernel`]), which every sink takes as a kernel. Most of a trace is
//! these events, so the test is on bytes, before any parsing.

use super::structural::{self, BLOCK};

/// Whether a `cpu_op` is a kernel Inductor generated for the CPU, as the profiler records it
/// with `torch._inductor.config.cpp.enable_kernel_profile`: a range `graph_<N>_cpp_fused_…`
/// (the compiled graph's number, then the kernel's name as the compile log has it). Such a
/// range is the kernel itself, so it is read as a kernel of a CPU device, as a Triton kernel
/// is of a GPU.
pub(super) fn cpu_kernel(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("graph_") else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with("_cpp_")
}

/// Whether a `cpu_op` whose category value ends at `from` in `text` (an event at the head of a
/// longer text, [`dropped_head`]) may be a C++ kernel, so that it must be parsed rather than
/// stepped over. PyTorch writes the name right after the category: that name decides. An
/// event of another layout may be one (it is parsed, and [`Builder::event`] decides); an event
/// of another dropped category is not.
pub(super) fn may_be_cpu_kernel(text: &[u8], from: usize) -> bool {
    if !text[..from].ends_with(b"\"cpu_op\"") {
        return false;
    }
    let name = trim_start(&text[from..])
        .strip_prefix(b",")
        .map(trim_start)
        .and_then(|r| r.strip_prefix(b"\"name\""))
        .map(trim_start)
        .and_then(|r| r.strip_prefix(b":"))
        .map(trim_start)
        .and_then(|r| r.strip_prefix(b"\""));
    let Some(name) = name else { return true };
    let name = &name[..name.len().min(NAME_PREFIX)];
    match name.iter().position(|&b| b == b'"' || b == b'\\') {
        // The whole name, unescaped.
        Some(end) if name[end] == b'"' => std::str::from_utf8(&name[..end]).map_or(true, cpu_kernel),
        // An escape or a name longer than read: parsed, to be sure.
        _ => true,
    }
}

/// How much of a name [`may_be_cpu_kernel`] reads: a longer one is parsed to be sure.
const NAME_PREFIX: usize = 256;

/// The bytes every C++ kernel range's name holds, for [`Builder::item`]'s test before parsing.
const CPU_KERNEL_MARK: &[u8] = b"_cpp_";

/// Cheap test on an event's raw bytes for the categories the analysis drops and that make up
/// most of a trace (Python frames, flows, memory instants; and, for a sink that takes no
/// CPU-side events, those too): skips parsing them at all. Only a complete
/// `"cat": "<category>"` member matches, so a name that merely contains the word does not.
#[cfg(test)]
fn is_dropped_category(bytes: &[u8], dropped: &[&str]) -> bool {
    dropped_category(bytes, dropped).is_some()
}

/// Which of `dropped` the event's category is, if any ([`is_dropped_category`]).
fn dropped_category<'d>(bytes: &[u8], dropped: &[&'d str]) -> Option<&'d str> {
    let at = cat_finder().find(bytes)?;
    if !at_top_of_object(&bytes[..at]) {
        return None;
    }
    let rest = trim_start(&bytes[at + 5..]);
    let rest = trim_start(rest.strip_prefix(b":")?).strip_prefix(b"\"")?;
    dropped.iter().copied().find(|d| rest.strip_prefix(d.as_bytes()).is_some_and(|r| r.starts_with(b"\"")))
}

/// Whether an event of a dropped category is dropped unparsed: all are, but a `cpu_op` that may
/// be a C++ kernel ([`cpu_kernel`]), which every sink takes as a kernel.
pub(super) fn skip_unparsed(bytes: &[u8], dropped: &[&str]) -> bool {
    match dropped_category(bytes, dropped) {
        None => false,
        Some("cpu_op") => memchr::memmem::find(bytes, CPU_KERNEL_MARK).is_none(),
        Some(_) => true,
    }
}

/// The categories [`is_dropped_category`] drops unparsed: those no analysis reads, and for a
/// sink without CPU-side events ([`EventSink::CPU_SIDE`]: the summary-only mode, the ranks
/// fold) the CPU-side ones as well, which [`Builder::event`] would read only to ignore, but
/// for the launch calls where the sink takes them ([`EventSink::LAUNCHES`]).
pub(super) fn dropped(cpu_side: bool, launches: bool) -> &'static [&'static str] {
    const DROPPED: [&str; 9] = [
        "python_function",
        "ac2g",
        "cpu_instant_event",
        "fwdbwd",
        // Read only for a sink that takes CPU-side events.
        "cpu_op",
        "user_annotation",
        "gpu_user_annotation",
        "cuda_runtime",
        "cuda_driver",
    ];
    match (cpu_side, launches) {
        (true, _) => &DROPPED[..4],
        (false, true) => &DROPPED[..7],
        (false, false) => &DROPPED,
    }
}

/// JSON nesting followed byte by byte: strings (with their escapes) are stepped over, and
/// brackets outside them counted.
#[derive(Default)]
struct Nesting {
    depth: u32,
    in_string: bool,
    escape: bool,
}

/// What one byte did to the nesting.
#[derive(PartialEq)]
enum Step {
    Opened,
    Closed,
    Other,
}

impl Nesting {
    #[inline]
    fn step(&mut self, b: u8) -> Step {
        if self.in_string {
            match (self.escape, b) {
                (true, _) => self.escape = false,
                (false, b'\\') => self.escape = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return Step::Other;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                return Step::Opened;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                return Step::Closed;
            }
            _ => {}
        }
        Step::Other
    }
}

/// Whether the end of `prefix` (the start of an event) is directly inside the event object,
/// not inside a string or a nested object such as `args`.
fn at_top_of_object(prefix: &[u8]) -> bool {
    let mut n = Nesting::default();
    prefix.iter().for_each(|&b| {
        n.step(b);
    });
    n.depth == 1 && !n.in_string
}

/// [`is_dropped_category`] for an event at the head of a longer text: where its dropped
/// category's value ends, if it has one and the bytes before nest no deeper than `depth_limit`
/// (the scan takes over from there, at the event's own level). The same verdict as on the
/// event's own bytes: the first `"cat"` of the text is the event's first one unless the event
/// ends before it, which the walk sees.
pub(super) fn dropped_head(text: &[u8], depth_limit: u32, dropped: &[&str]) -> Option<usize> {
    match kineto_category(text).filter(|_| depth_limit >= 1) {
        Some(value) => dropped_value(text, value, dropped),
        None => dropped_head_searched(text, depth_limit, dropped),
    }
}

/// [`dropped_head`] for any event: its first `"cat"` searched for, and the bytes before it
/// looked at.
fn dropped_head_searched(text: &[u8], depth_limit: u32, dropped: &[&str]) -> Option<usize> {
    let at = cat_finder().find(text)?;
    if !plain_top_level(text, at) || depth_limit < 1 {
        let (mut n, mut deepest) = (Nesting::default(), 0u32);
        for &b in &text[..at] {
            match n.step(b) {
                Step::Opened => deepest = deepest.max(n.depth),
                // The event ended with no `"cat"` in it (or the text closed more than it opened).
                Step::Closed if n.depth == 0 => return None,
                _ => {}
            }
        }
        if n.depth != 1 || n.in_string || deepest > depth_limit {
            return None;
        }
    }
    let rest = trim_start(&text[at + 5..]);
    let rest = trim_start(rest.strip_prefix(b":")?).strip_prefix(b"\"")?;
    dropped_value(text, rest, dropped)
}

/// Where the dropped category whose value starts `value` (after its opening quote; a suffix of
/// `text`) ends in `text`, if it is one.
fn dropped_value(text: &[u8], value: &[u8], dropped: &[&str]) -> Option<usize> {
    let name = dropped.iter().find(|d| value.starts_with(d.as_bytes()) && value.get(d.len()) == Some(&b'"'))?;
    Some(text.len() - value.len() + name.len() + 1)
}

/// The category's value (after its opening quote) of an event that starts as PyTorch's profiler
/// writes every event, `{"ph": "X", "cat": "` (any whitespace after the brace, any one-letter
/// phase). Then its first `"cat"` is this one, directly in the event, and [`dropped_head`] needs
/// neither the search nor the look at the bytes before it, which were a tenth of reading a
/// trace in WebAssembly.
fn kineto_category(text: &[u8]) -> Option<&[u8]> {
    let rest = trim_start(text.strip_prefix(b"{")?).strip_prefix(b"\"ph\": \"")?;
    let (_, rest) = rest.split_first().filter(|(phase, _)| phase.is_ascii_alphabetic())?;
    rest.strip_prefix(b"\", \"cat\": \"")
}

/// Whether `prefix` is an event's `{` followed by no bracket, no backslash and an even number of
/// quotes: then its end is directly inside the event, outside any string, one level deep (the
/// verdict of the byte-by-byte [`Nesting`] walk, which only the rare other prefixes need). The
/// bytes are looked at a block at a time where `text` (the prefix and what follows it) holds
/// whole blocks.
fn plain_top_level(text: &[u8], prefix: usize) -> bool {
    if text.first() != Some(&b'{') {
        return false;
    }
    let (mut quotes, mut start) = (0u32, 0usize);
    while start < prefix {
        let Some(block) = text[start..].first_chunk::<BLOCK>() else { break };
        let m = structural::masks(block);
        let within = if prefix - start >= BLOCK { u64::MAX } else { (1u64 << (prefix - start)) - 1 };
        let opening = u64::from(start == 0); // the event's own `{`
        if (m.open | m.close | m.backslash) & within & !opening != 0 {
            return false;
        }
        quotes += (m.quote & within).count_ones();
        start += BLOCK;
    }
    for &b in text.get(start.max(1)..prefix).unwrap_or_default() {
        quotes += u32::from(b == b'"');
        if matches!(b | 0x20, b'{' | b'}') || b == b'\\' {
            return false;
        }
    }
    quotes % 2 == 0
}

fn cat_finder() -> &'static memchr::memmem::Finder<'static> {
    // One searcher for the whole run: building one per event cost as much as the search.
    static CAT: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    CAT.get_or_init(|| memchr::memmem::Finder::new(b"\"cat\""))
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t')).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::{
        dropped, dropped_head, dropped_head_searched, is_dropped_category, kineto_category, may_be_cpu_kernel,
    };

    #[test]
    fn a_cpu_op_is_stepped_over_unless_its_name_may_be_a_cpp_kernel() {
        let verdict = |text: &str| {
            let from = dropped_head(text.as_bytes(), 64, dropped(false, false)).unwrap();
            may_be_cpu_kernel(text.as_bytes(), from)
        };
        let op = |name: &str| format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1}} , {{}}"#);
        assert!(verdict(&op("graph_0_cpp_fused_add_0")));
        assert!(!verdict(&op("aten::add")));
        assert!(!verdict(&op("graph_0_triton_poi_fused_add_0")));
        // An escape, or a name past what is read, is parsed to be sure.
        assert!(verdict(&op(r"graph_0_cpp_fused")));
        assert!(verdict(&op(&"a".repeat(300))));
        // Another layout: the name elsewhere.
        assert!(verdict(r#"{"ph": "X", "cat": "cpu_op", "pid": 1, "name": "aten::add"}"#));
        // Another dropped category never is.
        assert!(!verdict(r#"{"ph": "X", "cat": "python_function", "name": "graph_0_cpp_fused_add_0"}"#));
    }
    use crate::kineto::{read_trace, TraceError};
    use proptest::prelude::*;

    /// The shortcut for PyTorch's event layout gives the verdict of the search, on that layout
    /// and on texts close to it.
    #[test]
    fn kineto_layout_shortcut_agrees_with_the_search() {
        let kineto = [
            "{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\"},",
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\"}",
            "{ \"ph\": \"f\", \"cat\": \"ac2g\", \"id\": 1}",
            "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"args\": {\"cat\": \"ac2g\"}}",
            "{\"ph\": \"X\", \"cat\": \"ac2gx\"}",
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\"",
        ];
        for text in kineto {
            assert!(kineto_category(text.as_bytes()).is_some(), "{text}");
            for cpu_side in [false, true] {
                let (fast, searched) = (
                    dropped_head(text.as_bytes(), 1, dropped(cpu_side, false)),
                    dropped_head_searched(text.as_bytes(), 1, dropped(cpu_side, false)),
                );
                assert_eq!(fast, searched, "{text}");
            }
        }
        assert_eq!(
            dropped_head(kineto[0].as_bytes(), 64, dropped(true, true)),
            Some(kineto[0].find("n\",").unwrap() + 2)
        );
        // Not the layout: the search decides.
        for text in [
            "{\"ph\": \"\\u0058\", \"cat\": \"ac2g\"}",
            "{\"ph\": \"XX\", \"cat\": \"ac2g\"}",
            "[\"ph\": \"X\", \"cat\": \"ac2g\"]",
        ] {
            assert!(kineto_category(text.as_bytes()).is_none(), "{text}");
        }
    }

    proptest! {
        /// On event heads in the layout and near it (other spacing, phases, keys, categories),
        /// both ways agree.
        #[test]
        fn shortcut_never_changes_the_verdict(
            ws in prop::sample::select(vec!["", " ", "\n    "]),
            key in prop::sample::select(vec!["\"ph\": \"", "\"ph\":\"", "\"name\": \""]),
            phase in prop::sample::select(vec!["X", "f", "XX", "\\u0058", "{", ""]),
            sep in prop::sample::select(vec!["\", \"cat\": \"", "\", \"cat\" : \"", "\",\"cat\":\"", "\", \"args\": {\"cat\": \""]),
            cat in prop::sample::select(vec!["python_function", "ac2g", "cpu_op", "cuda_runtime", "kernel", "ac2gx", ""]),
            tail in prop::sample::select(vec!["\"}", "\", \"name\": \"k\"}", "", "x\"}"]),
            cpu_side in any::<bool>(),
            depth in 0u32..3,
        ) {
            let text = format!("{{{ws}{key}{phase}{sep}{cat}{tail}");
            let searched = dropped_head_searched(text.as_bytes(), depth, dropped(cpu_side, false));
            prop_assert_eq!(dropped_head(text.as_bytes(), depth, dropped(cpu_side, false)), searched, "{}", text);
        }
    }

    /// The extractor stopping at a dropped category keeps the prefilter's verdicts: a dropped
    /// event is never parsed (so its malformed rest is no error), unless the prefilter does not
    /// see it as dropped, when serde judges it as before.
    #[test]
    fn dropped_categories_read_as_the_prefilter_drops_them() {
        let trace = |event: &str| read_trace(format!("{{\"traceEvents\": [{event}]}}").as_bytes());
        assert_eq!(trace(r#"{"ph": "X", "cat": "python_function", "name": tru}"#).unwrap().event_count, 1);
        assert_eq!(trace(r#"{"ph": "X", "cat": "fwdbwd", "args": {,}}"#).unwrap().event_count, 1);
        // The first `"cat"` is a name, so the prefilter does not drop the event: serde reads it.
        assert!(matches!(
            trace(r#"{"name": "cat", "cat": "python_function", "x": tru}"#),
            Err(TraceError::Event { message, .. }) if message == "expected ident"
        ));
        assert_eq!(trace(r#"{"name": "cat", "cat": "ac2g", "ph": "X"}"#).unwrap().kernels.len(), 0);
        assert!(trace(r#"{"ph": "X", "cat": "kernel", "name": tru}"#).is_err());
    }

    #[test]
    fn prefilter_matches_only_the_category_member() {
        assert!(is_dropped_category(
            br#"{"ph": "X", "cat" : "python_function", "name": "a.py(1): f"}"#,
            dropped(true, true)
        ));
        assert!(!is_dropped_category(
            br#"{"ph": "X", "cat": "cpu_op", "name": "python_function"}"#,
            dropped(true, true)
        ));
        assert!(!is_dropped_category(br#"{"name": "\"cat\": \"ac2g\"", "cat": "kernel"}"#, dropped(true, true)));
        assert!(!is_dropped_category(
            br#"{"name": "k", "args": {"cat": "ac2g"}, "cat": "kernel"}"#,
            dropped(true, true)
        ));
        assert!(!is_dropped_category(br#"{"ph": "X", "cat": "kernel"}"#, dropped(true, true)));
        // CPU-side categories only for a sink without CPU-side events.
        assert!(!is_dropped_category(br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}"#, dropped(true, true)));
        assert!(is_dropped_category(br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}"#, dropped(false, false)));
        assert!(is_dropped_category(br#"{"cat": "cuda_runtime", "ph": "X"}"#, dropped(false, false)));
        assert!(!is_dropped_category(br#"{"cat": "cuda_runtime_x", "ph": "X"}"#, dropped(false, false)));
        assert!(!is_dropped_category(br#"{"ph": "X", "cat": "kernel"}"#, dropped(false, false)));
        // A fold that takes launch calls alone keeps them and drops the rest of the CPU side.
        assert!(!is_dropped_category(br#"{"cat": "cuda_runtime", "ph": "X"}"#, dropped(false, true)));
        assert!(!is_dropped_category(br#"{"cat": "cuda_driver", "ph": "X"}"#, dropped(false, true)));
        assert!(is_dropped_category(br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}"#, dropped(false, true)));
    }
}
