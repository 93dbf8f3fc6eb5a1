//! Kineto's events and top-level keys into the format-neutral trace: which `cat` is a kernel,
//! a memory copy or set, a CPU op, an annotation or a launch call; `External id` and
//! `correlation` as the links between them; c10d's collective args on NCCL/RCCL kernels;
//! `deviceProperties`, `distributedInfo` and the `*_version` keys.
//! Everything else (Python frames, `ac2g` flows, memory instants, metadata) is dropped, the
//! commonest before it is even parsed.

use super::error::{error_offset, strip, TraceError};
use super::extract;
use super::raw::{Num, RawArgs, RawDevice, RawEvent, RawJson};
use super::scan::{Item, ItemSink, Offer, Taken};
use super::structural::{self, BLOCK};
use limits::TRACE_NAME_BYTES;
use trace::compiled::Estimate;
use trace::intern::{NameId, NameTable};
use trace::read::{EventSink, TraceHeader};
use trace::{Annotation, CpuOp, DeviceProperties, Distributed, Kernel, Launch, RecordedShapes, Transfer, TransferKind};

/// Turns items, as the scanner finds them, into the header and the sink's events.
pub(super) struct Builder<S> {
    pub(super) header: TraceHeader,
    pub(super) sink: S,
}

/// Cheap test on an event's raw bytes for the categories the analysis drops and that make up
/// most of a trace (Python frames, flows, memory instants; and, for a sink that takes no
/// CPU-side events, those too): skips parsing them at all. Only a complete
/// `"cat": "<category>"` member matches, so a name that merely contains the word does not.
fn is_dropped_category(bytes: &[u8], dropped: &[&str]) -> bool {
    let Some(at) = cat_finder().find(bytes) else { return false };
    if !at_top_of_object(&bytes[..at]) {
        return false;
    }
    let rest = &bytes[at + 5..];
    let rest = trim_start(rest);
    let Some(rest) = rest.strip_prefix(b":") else { return false };
    let Some(rest) = trim_start(rest).strip_prefix(b"\"") else { return false };
    dropped.iter().any(|d| rest.strip_prefix(d.as_bytes()).is_some_and(|r| r.starts_with(b"\"")))
}

/// The categories [`is_dropped_category`] drops unparsed: those no analysis reads, and for a
/// sink without CPU-side events ([`EventSink::CPU_SIDE`]: the summary-only mode, the ranks
/// fold) the CPU-side ones as well, which [`Builder::event`] would read only to ignore, but
/// for the launch calls where the sink takes them ([`EventSink::LAUNCHES`]).
fn dropped(cpu_side: bool, launches: bool) -> &'static [&'static str] {
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
fn dropped_head(text: &[u8], depth_limit: u32, dropped: &[&str]) -> Option<usize> {
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

/// The scanner offers each event where it starts: a dropped one is counted and left to the scan
/// to step over, a kept one is read in one pass ([`extract::read_head`]), which also finds its
/// end; anything else goes the way of [`Builder::item`]. The outcome is that of `item` on the
/// event's bytes: the same prefilter verdict, and an event the extractor reads is one serde
/// reads the same.
impl<S: EventSink> ItemSink<TraceError> for Builder<S> {
    fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        Builder::item(self, item)
    }

    fn head(&mut self, offer: Offer<'_>) -> Result<Taken, TraceError> {
        if let Some(from) = dropped_head(offer.text, offer.limits.depth, dropped(S::CPU_SIDE, S::LAUNCHES)) {
            self.header.event_count += 1;
            return Ok(Taken::Skip { from });
        }
        let mut event = RawEvent::default();
        let Some(head) = extract::read_head(offer.text, &mut event) else { return Ok(Taken::Nothing) };
        if head.len > offer.limits.item_bytes || head.depth > offer.limits.depth {
            return Ok(Taken::Nothing); // the scan gives the error
        }
        self.header.event_count += 1;
        self.event(&event);
        if self.header.names.bytes() > TRACE_NAME_BYTES {
            return Err(TraceError::TooManyNames { offset: offer.offset, limit: TRACE_NAME_BYTES });
        }
        Ok(Taken::Whole { len: head.len })
    }
}

impl<S: EventSink> Builder<S> {
    pub(super) fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        match item {
            Item::Event { bytes, offset } => {
                self.header.event_count += 1;
                if is_dropped_category(bytes, dropped(S::CPU_SIDE, S::LAUNCHES)) {
                    return Ok(());
                }
                // The one-pass extractor when it can vouch for serde's reading, else serde (which
                // also words every error).
                let event = match extract::event(bytes) {
                    Some(event) => event,
                    None => serde_json::from_slice::<RawEvent>(bytes).map_err(|e| TraceError::Event {
                        offset: offset + error_offset(bytes, &e),
                        message: strip(&e),
                    })?,
                };
                self.event(&event);
                if self.header.names.bytes() > TRACE_NAME_BYTES {
                    return Err(TraceError::TooManyNames { offset, limit: TRACE_NAME_BYTES });
                }
                Ok(())
            }
            Item::Field { key, value, offset } => self.field(key, value, offset),
        }
    }

    fn event(&mut self, e: &RawEvent<'_>) {
        if e.ph.as_str() != Some("X") {
            return;
        }
        let (Some(cat), Some(name)) = (e.cat.as_str(), e.name.as_str()) else { return };
        let (names, compiled, sink) = (&mut self.header.names, &mut self.header.compiled, &mut self.sink);
        let ts = e.ts.0.unwrap_or(0.0);
        let dur = e.dur.0.filter(|d| *d >= 0.0).unwrap_or(0.0);
        let no_args;
        let args = match &e.args.0 {
            Some(args) => args,
            None => {
                no_args = RawArgs::default();
                &no_args
            }
        };
        match cat {
            "kernel" => {
                let kernel = Kernel {
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    stream: args.stream.int().or(e.tid.int()).unwrap_or(-1),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                    graph_node: args.kind.as_str() == Some("Dispatch Task"),
                };
                match args.collective() {
                    Some(collective) => sink.collective_kernel(names, kernel, &collective),
                    None => sink.kernel(names, kernel),
                }
            }
            "gpu_memcpy" | "gpu_memset" => {
                let transfer = Transfer {
                    kind: if cat == "gpu_memcpy" { TransferKind::Memcpy } else { TransferKind::Memset },
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    stream: args.stream.int().or(e.tid.int()),
                    bytes: args.bytes.id(),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                };
                sink.transfer(names, transfer);
            }
            "cpu_op" | "user_annotation" if S::CPU_SIDE => {
                if cat == "user_annotation" {
                    sink.annotation(Annotation {
                        name: names.intern(name),
                        ts,
                        dur,
                        gpu: false,
                        pid: e.pid.int().unwrap_or(-1),
                    });
                }
                if let Some(external_id) = args.external_id.id() {
                    if let Some(estimate) = inductor_estimate(args) {
                        compiled.estimate(external_id, estimate);
                    }
                    sink.cpu_op(CpuOp {
                        name: names.intern(name),
                        ts,
                        dur,
                        tid: e.tid.int().unwrap_or(-1),
                        pid: e.pid.int().unwrap_or(-1),
                        external_id,
                        annotation: cat == "user_annotation",
                        shapes: if cat == "cpu_op" {
                            RecordedShapes {
                                dims: array_text(names, args.input_dims),
                                types: array_text(names, args.input_types),
                                concrete: array_text(names, args.concrete_inputs),
                            }
                        } else {
                            RecordedShapes::default()
                        },
                    });
                }
            }
            "gpu_user_annotation" if S::CPU_SIDE => {
                sink.annotation(Annotation {
                    name: names.intern(name),
                    ts,
                    dur,
                    gpu: true,
                    pid: e.pid.int().unwrap_or(-1),
                });
            }
            "cuda_runtime" | "cuda_driver" if S::LAUNCHES => {
                if let Some(c) = args.correlation.id() {
                    let launch = Launch {
                        name: names.intern(name),
                        kernel: args.kernel.as_str().map(|k| names.intern(k)),
                        external_id: args.external_id.id(),
                        ts,
                        dur,
                        tid: e.tid.int().unwrap_or(-1),
                    };
                    sink.launch(c, launch);
                }
            }
            _ => {}
        }
    }

    fn field(&mut self, key: &[u8], value: &[u8], offset: u64) -> Result<(), TraceError> {
        let key_str = String::from_utf8_lossy(key);
        let err = |e: serde_json::Error| TraceError::Field {
            key: key_str.to_string(),
            offset: offset + error_offset(value, &e),
            message: strip(&e),
        };
        let versions = &mut self.header.versions;
        let slot = match key {
            b"deviceProperties" => {
                let devices: Vec<RawDevice> = match serde_json::from_slice(value) {
                    Ok(d) => d,
                    // Not a list: validate the JSON, then ignore the key.
                    Err(_) => {
                        serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                        Vec::new()
                    }
                };
                self.header.devices = devices
                    .into_iter()
                    .map(|d| DeviceProperties {
                        id: d.id.int(),
                        name: d.name.as_str().unwrap_or("").trim().to_string(),
                        warp_size: small(d.warp_size),
                        compute_major: small(d.compute_major),
                        compute_minor: small(d.compute_minor),
                        num_sms: small(d.num_sms),
                    })
                    .collect();
                return Ok(());
            }
            b"distributedInfo" => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                self.header.distributed = Some(
                    std::str::from_utf8(value)
                        .ok()
                        .and_then(super::distributed::parse_distributed_info)
                        .map_or(Distributed::Unreadable, Distributed::Info),
                );
                return Ok(());
            }
            b"cupti_version" => &mut versions.cupti_version,
            b"cuda_runtime_version" => &mut versions.cuda_runtime_version,
            b"cuda_driver_version" => &mut versions.cuda_driver_version,
            b"roctracer_version" => &mut versions.roctracer_version,
            b"hip_runtime_version" => &mut versions.hip_runtime_version,
            b"hip_driver_version" => &mut versions.hip_driver_version,
            _ => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                return Ok(());
            }
        };
        let v: serde_json::Value = serde_json::from_slice(value).map_err(err)?;
        *slot = match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s),
            other => Some(other.to_string()),
        };
        Ok(())
    }
}

/// Interns a recorded-shapes value when it is a JSON array (anything else reads as absent).
fn array_text(names: &mut NameTable, value: Option<RawJson<'_>>) -> Option<NameId> {
    let text = value?.0;
    text.starts_with('[').then(|| names.intern(text))
}

fn small(n: Num) -> Option<u32> {
    n.int().and_then(|v| u32::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::{dropped, dropped_head, dropped_head_searched, is_dropped_category, kineto_category};
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

/// Inductor's own estimate on a Triton launch's op (`kernel_num_gb`, `kernel_flop`), where
/// the launch records one: GB as Inductor writes them (10⁹ bytes), rounded to whole bytes.
fn inductor_estimate(args: &RawArgs<'_>) -> Option<Estimate> {
    let bytes = args.kernel_num_gb.0.filter(|gb| gb.is_finite() && *gb >= 0.0 && *gb < 1.8e10);
    let estimate = Estimate { bytes: bytes.map(|gb| (gb * 1e9).round() as u64), flops: args.kernel_flop.id() };
    (estimate.bytes.is_some() || estimate.flops.is_some()).then_some(estimate)
}
