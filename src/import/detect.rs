//! What kind of file this is, from its first bytes only.
//!
//! Files can be hundreds of megabytes, so the kind is decided on a prefix
//! ([`DETECT_BYTES`]) before anything is parsed: a gzip member is inflated as far as the prefix
//! goes, JSON is scanned for its top-level keys without being parsed (the prefix is usually
//! cut mid-document), text is looked at line by line.

use std::io::Read;

use formats::registry::{Format, Registry, BUILTIN};
use formats::Sniff;

/// How many leading bytes detection needs: every Kineto trace in the test data names
/// `traceEvents` within its first 27 KB.
pub const DETECT_BYTES: usize = 64 * 1024;

/// The kinds of input fusionscope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A gzip member whose content could not be inflated far enough to tell more.
    Gzip,
    /// A profiler's trace, of one of the formats of the registry (`formats::interface`): Kineto
    /// JSON, rocprofv3 JSON, SQLite (Nsight Systems or rocpd), XLA's xplane protobuf or
    /// trace-event JSON.
    Trace(&'static Format),
    /// Op-graph JSON (docs/fusion-rules.md): an object with `ops` or an array of ops.
    OpGraph,
    /// Op trace text (docs/optrace.md): lines `N:N:N %id:<shape> = op(...)`.
    OpTrace,
    /// NPU simulator op table: CSV whose header starts with `Fusion index`.
    SimOpsCsv,
    /// Hardware calibration profile JSON (measured GFLOPS, bandwidth, fusion speedups).
    Calibration,
    /// Model configuration JSON (NeuSim format: `model_type` plus the model's sizes).
    ModelConfig,
    /// Chip configuration JSON (NeuSim TPU format, or `peak_flops` + `hbm_bw_GBps`).
    Chip,
    /// A PyTorch Execution Trace (Chakra ET JSON: `schema` and a `nodes` list): not a trace
    /// of its own but the exact data flow of a Kineto trace of the same run
    /// (`analysis::exec_trace`).
    ExecTrace,
    /// A torch.compile structured log (`TORCH_TRACE`): not a trace of its own but the exact
    /// groups of the Inductor kernels of a trace of the same run (`inductor`,
    /// `analysis::provenance`).
    CompileLog,
    /// None of the above; [`unrecognised_reason`] says what the file looks like instead.
    Unknown,
}

impl FileKind {
    /// Kinds whose files can be hundreds of megabytes: the page reads and analyses them in its
    /// analysis worker. The others are small inputs the page's thread opens from their bytes.
    pub fn analysed_off_the_page(self) -> bool {
        matches!(self, FileKind::Trace(_) | FileKind::OpGraph | FileKind::ExecTrace | FileKind::CompileLog)
    }

    /// Kinds read into the format-neutral trace (`trace::Trace`): a profiler's output.
    pub fn is_trace(self) -> bool {
        matches!(self, FileKind::Trace(_))
    }

    /// The trace format, for a profiler's trace.
    pub fn format(self) -> Option<&'static Format> {
        match self {
            FileKind::Trace(format) => Some(format),
            _ => None,
        }
    }

    /// The kind in words, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Gzip => "a gzip file",
            FileKind::Trace(format) => format.describe(),
            FileKind::OpGraph => "an op graph (JSON)",
            FileKind::OpTrace => "an op trace (text)",
            FileKind::SimOpsCsv => "a simulator op table (CSV)",
            FileKind::Calibration => "a hardware calibration profile (JSON)",
            FileKind::ModelConfig => "a model configuration (JSON)",
            FileKind::Chip => "a chip configuration (JSON)",
            FileKind::ExecTrace => "a PyTorch execution trace (Chakra ET JSON)",
            FileKind::CompileLog => "a torch.compile log (TORCH_TRACE)",
            FileKind::Unknown => "an unrecognised file",
        }
    }
}

/// The result of looking at a file's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    pub kind: FileKind,
    /// The kind is that of the gzip member's content.
    pub gzipped: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The kind of a file from its first bytes (at least [`DETECT_BYTES`] of them when the file
/// is that long; fewer bytes may give [`FileKind::Unknown`] or [`FileKind::Gzip`]).
pub fn detect_kind(first_bytes: &[u8]) -> FileKind {
    detect(first_bytes).kind
}

/// Like [`detect_kind`], and says whether the content was gzip-compressed.
pub fn detect(first_bytes: &[u8]) -> Detected {
    detect_in(BUILTIN, first_bytes)
}

/// [`detect`], with the trace formats of `registry`.
pub fn detect_in(registry: Registry, first_bytes: &[u8]) -> Detected {
    if first_bytes.starts_with(&GZIP_MAGIC) {
        let inner = inflate_prefix(first_bytes, DETECT_BYTES);
        let kind = match detect_plain(registry, &inner) {
            FileKind::Unknown if inner.is_empty() => FileKind::Gzip,
            k => k,
        };
        return Detected { kind, gzipped: true };
    }
    Detected { kind: detect_plain(registry, first_bytes), gzipped: false }
}

/// Inflates as much of a (possibly cut) gzip stream as the bytes allow, up to `limit` bytes.
fn inflate_prefix(gz: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(limit.min(gz.len() * 4));
    let mut decoder = flate2::read::GzDecoder::new(gz);
    let mut buf = [0u8; 8192];
    while out.len() < limit {
        match decoder.read(&mut buf) {
            Ok(0) | Err(_) => break, // end, or the prefix ends mid-stream
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out.truncate(limit);
    out
}

/// The registry's trace formats first (each knows its own marks), then the other kinds.
fn detect_plain(registry: Registry, head: &[u8]) -> FileKind {
    let bytes = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
    let keys = if start.map(|i| bytes[i]) == Some(b'{') { top_level_keys(bytes) } else { Vec::new() };
    if let Some(format) = registry.detect(&Sniff { head, json_keys: &keys }) {
        return FileKind::Trace(format);
    }
    if inductor::looks_like(bytes) {
        return FileKind::CompileLog;
    }
    match start.map(|i| bytes[i]) {
        Some(b'{') => {
            let has = |k: &str| keys.iter().any(|x| x == k);
            if has("ops") {
                FileKind::OpGraph
            } else if has("nodes") && (has("schema") || has("pid")) {
                FileKind::ExecTrace
            } else if CALIBRATION_KEYS.iter().any(|k| has(k)) {
                FileKind::Calibration
            } else if has("model_type") && MODEL_SIZE_KEYS.iter().any(|k| has(k)) {
                FileKind::ModelConfig
            } else if has("hbm_bw_GBps") && ((has("num_sa") && has("sa_dim")) || has("peak_flops")) {
                FileKind::Chip
            } else {
                FileKind::Unknown
            }
        }
        Some(b'[') => {
            let keys = first_element_keys(bytes);
            if keys.iter().any(|k| k == "op_type") {
                FileKind::OpGraph
            } else {
                FileKind::Unknown
            }
        }
        Some(_) => detect_text(bytes),
        None => FileKind::Unknown,
    }
}

/// Top-level keys that only calibration profiles (and measured-subgraph files) have.
const CALIBRATION_KEYS: [&str; 6] = [
    "theoretical_peak_gflops",
    "theoretical_bandwidth_gbps",
    "theoretical_peak_flops",
    "measurement_type",
    "fusion_profiles",
    "operation_profiles",
];

/// With `model_type`, one of the size fields the workload generators read (LLM, DLRM, GLIGEN).
const MODEL_SIZE_KEYS: [&str; 3] = ["d_model", "embedding_dim", "unet_config"];

/// Op traces and simulator tables are text: decided by their lines.
fn detect_text(bytes: &[u8]) -> FileKind {
    let text = String::from_utf8_lossy(bytes);
    // Each text format knows its own grammar; the op-trace one finds records behind stray
    // text and `None` prefix fields, as real dumps have them.
    if simcsv::looks_like_sim_csv(&text) {
        FileKind::SimOpsCsv
    } else if optrace::looks_like_optrace(&text) {
        FileKind::OpTrace
    } else {
        FileKind::Unknown
    }
}

/// A tiny JSON scanner that survives a cut-off document: it tracks strings and nesting and
/// reports the keys of the object (or array element) at `key_depth`.
struct KeyScanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> KeyScanner<'a> {
    /// Keys at nesting depth `key_depth` (1 = the top-level object), stopping when the
    /// container that holds them closes.
    fn keys_at(mut self, key_depth: usize) -> Vec<String> {
        let mut keys = Vec::new();
        let mut depth = 0usize;
        let mut last_string: Option<String> = None;
        while self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            self.pos += 1;
            match b {
                b'"' => {
                    let s = self.string();
                    last_string = if depth == key_depth { Some(s) } else { None };
                    continue;
                }
                b':' => {
                    if let Some(k) = last_string.take() {
                        keys.push(k);
                    }
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    if depth == key_depth {
                        break;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() {
                last_string = None;
            }
        }
        keys
    }

    /// Reads a string whose opening quote was just consumed.
    fn string(&mut self) -> String {
        let start = self.pos;
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    let s = String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
                    self.pos += 1;
                    return s;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.bytes.len();
        String::new()
    }
}

/// Keys of the top-level JSON object (as far as the bytes go).
pub fn top_level_keys(bytes: &[u8]) -> Vec<String> {
    KeyScanner { bytes, pos: 0 }.keys_at(1)
}

/// Keys of the first element of a top-level JSON array, if it is an object.
fn first_element_keys(bytes: &[u8]) -> Vec<String> {
    KeyScanner { bytes, pos: 0 }.keys_at(2)
}

/// What an unrecognised file looks like, for the message that says it cannot be read.
pub fn unrecognised_reason(first_bytes: &[u8]) -> String {
    let bytes = if first_bytes.starts_with(&GZIP_MAGIC) {
        let inner = inflate_prefix(first_bytes, DETECT_BYTES);
        if inner.is_empty() {
            return "it is gzip-compressed but its content could not be inflated".to_string();
        }
        inner
    } else {
        first_bytes.to_vec()
    };
    let trimmed = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let Some(start) = trimmed.iter().position(|b| !b.is_ascii_whitespace()) else {
        return "it is empty".to_string();
    };
    let head = &trimmed[start..trimmed.len().min(start + 48)];
    let binary = head.iter().any(|&b| b < 0x09 || (0x0e..0x20).contains(&b));
    if binary {
        let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return format!("it is binary data (first bytes {})", hex.join(" "));
    }
    match trimmed[start] {
        b'{' => {
            let keys = top_level_keys(trimmed);
            if keys.is_empty() {
                "it is a JSON object with no keys".to_string()
            } else {
                let shown: Vec<String> = keys.iter().take(6).map(|k| format!("\"{k}\"")).collect();
                format!(
                    "it is a JSON object with keys {}{} but none that marks a known kind (\"ops\", \"traceEvents\", \"rocprofiler-sdk-tool\", calibration figures)",
                    shown.join(", "),
                    if keys.len() > 6 { ", …" } else { "" }
                )
            }
        }
        b'[' => "it is a JSON array whose first element is not an op (no \"op_type\")".to_string(),
        _ => {
            let line = String::from_utf8_lossy(head);
            let line = line.lines().next().unwrap_or("");
            format!("it is text starting with \"{line}\"")
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The kind of the registry's trace format named `name`.
    pub(crate) fn trace_kind(name: &str) -> FileKind {
        FileKind::Trace(BUILTIN.named(name).expect("a format of the registry"))
    }

    fn data(path: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap()
    }

    /// The first [`DETECT_BYTES`] of a test data file, as the page passes them.
    fn prefix(path: &str) -> Vec<u8> {
        let mut d = data(path);
        d.truncate(DETECT_BYTES);
        d
    }

    #[test]
    fn every_shared_trace_is_a_gzipped_kineto_trace() {
        for dir in ["amd", "nvidia"] {
            let folder = format!("{}/tests/data/traces/{dir}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                // Beside the capture traces: which batch size and graph mode each recorded.
                if path.to_string_lossy().ends_with(".details.json") {
                    continue;
                }
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.truncate(DETECT_BYTES);
                assert_eq!(
                    detect(&bytes),
                    Detected { kind: trace_kind("kineto"), gzipped: true },
                    "{}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn plain_kineto_json_is_recognised_from_its_keys() {
        assert_eq!(detect_kind(br#"{"schemaVersion": 1, "traceEvents": [{"ph": "X"#), trace_kind("kineto"));
        assert_eq!(detect_kind(br#"{"schemaVersion": 1, "deviceProperties": [{"#), trace_kind("kineto"));
        // A key named traceEvents nested deeper does not count.
        assert_eq!(detect_kind(br#"{"x": {"traceEvents": []}}"#), FileKind::Unknown);
    }

    #[test]
    fn op_graphs_in_both_forms() {
        assert_eq!(detect_kind(&data("graphs/worked_example.json")), FileKind::OpGraph);
        assert_eq!(detect_kind(br#"  {"tensors": {"x": {"shape": [1]}}, "ops": []}"#), FileKind::OpGraph);
        assert_eq!(detect_kind(br#"[{"name": "a", "op_type": "matmul""#), FileKind::OpGraph);
        assert_eq!(detect_kind(b"[1, 2, 3]"), FileKind::Unknown);
    }

    #[test]
    fn execution_traces_by_their_schema_and_nodes() {
        for f in ["param_linear_et", "hta_simple_add_et"] {
            let bytes = prefix(&format!("exec-trace/{f}.json.gz"));
            assert_eq!(detect(&bytes), Detected { kind: FileKind::ExecTrace, gzipped: true }, "{f}");
        }
        // Their Kineto traces stay traces.
        assert_eq!(detect_kind(&prefix("exec-trace/param_linear_kineto.json.gz")), trace_kind("kineto"));
        assert_eq!(detect_kind(br#"{"schema": "1.0.1", "pid": 7, "nodes": [{"name": "#), FileKind::ExecTrace);
        // A "nodes" list alone is not enough (a graph of another tool).
        assert_eq!(detect_kind(br#"{"nodes": [], "edges": []}"#), FileKind::Unknown);
        // Not a trace of its own, but read in the worker, where the traces are.
        assert!(FileKind::ExecTrace.analysed_off_the_page() && !FileKind::ExecTrace.is_trace());
    }

    #[test]
    fn calibration_profiles() {
        for f in ["i7_12700k_with_fusion", "jetson_orin_nano_gpu_pytorch", "resnet18_b1", "test_fusion_integration"] {
            assert_eq!(detect_kind(&prefix(&format!("calibration/{f}.json"))), FileKind::Calibration, "{f}");
        }
    }

    #[test]
    fn simulator_csv_and_op_trace_text() {
        let folder = format!("{}/tests/data/ops-csv", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.truncate(DETECT_BYTES);
            assert_eq!(detect_kind(&bytes), FileKind::SimOpsCsv, "{}", path.display());
        }
        let optrace = "# header\n0:0:0 %2:<1x128x768xf16> = nova_plus.1.0.0.embedding(%0:<1x128xi32>)\n";
        assert_eq!(detect_kind(optrace.as_bytes()), FileKind::OpTrace);
        // Real dumps: stray text glued before the record, `None` prefix fields.
        let stray = "for debug!! in forward 58388:None:0 %3:<2xf16> = torch.2_1_0.aten::gelu(%2:<2xf16>)\n";
        assert_eq!(detect_kind(stray.as_bytes()), FileKind::OpTrace);
        assert_eq!(detect_kind(b"0:0 %2\n0:a:0 %2\n"), FileKind::Unknown);
        for f in ["spec_example", "gpt2_block_tp_rank1", "malformed_line4"] {
            assert_eq!(detect_kind(&prefix(&format!("optrace/{f}.optrace"))), FileKind::OpTrace, "{f}");
        }
        assert_eq!(detect_kind(b"name,value\n1,2\n"), FileKind::Unknown);
    }

    #[test]
    fn model_and_chip_configs() {
        for dir in ["models/chips", "models/models"] {
            let folder = format!("{}/tests/data/{dir}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                let want = if dir == "models/chips" { FileKind::Chip } else { FileKind::ModelConfig };
                assert_eq!(detect_kind(&std::fs::read(&path).unwrap()), want, "{}", path.display());
            }
        }
        assert_eq!(detect_kind(br#"{"name": "x", "peak_flops": 1e15, "hbm_bw_GBps": 1000}"#), FileKind::Chip);
        // Keys nested deeper do not count.
        assert_eq!(detect_kind(br#"{"meta": {"model_type": "llm", "d_model": 1}}"#), FileKind::Unknown);
    }

    #[test]
    fn strings_with_braces_and_escapes_do_not_confuse_the_scanner() {
        let json = br#"{"a": "}{\"ops\":", "b\"": [1, {"c": 2}], "ops": []}"#;
        assert_eq!(top_level_keys(json), vec!["a", "b\\\"", "ops"]);
    }

    #[test]
    fn unknown_files_are_described() {
        assert_eq!(unrecognised_reason(b""), "it is empty");
        assert_eq!(unrecognised_reason(b"\x00\x01\x02PK"), "it is binary data (first bytes 00 01 02 50 4b)");
        assert!(unrecognised_reason(br#"{"model_name": "llama"}"#).contains("\"model_name\""));
        assert_eq!(unrecognised_reason(b"hello world\nmore"), "it is text starting with \"hello world\"");
        assert_eq!(detect(&GZIP_MAGIC), Detected { kind: FileKind::Gzip, gzipped: true });
    }

    #[test]
    fn gzipped_graph_is_seen_through() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&data("graphs/worked_example.json")).unwrap();
        let gz = enc.finish().unwrap();
        assert_eq!(detect(&gz), Detected { kind: FileKind::OpGraph, gzipped: true });
        // Cut in the middle of the stream: still enough to tell.
        assert_eq!(detect(&gz[..gz.len() / 2]).kind, FileKind::OpGraph);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let _ = detect(&bytes);
            let _ = unrecognised_reason(&bytes);
        }
    }

    #[test]
    fn other_profilers_outputs_by_content() {
        // A rocprofv3 results file, cut anywhere after its key.
        let head = br#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 908, "command": ["python"#;
        assert_eq!(detect_kind(head), trace_kind("rocprof-json"));
        // SQLite by its magic, whatever follows.
        assert_eq!(detect_kind(b"SQLite format 3\0\x10\x00\x01\x01"), trace_kind("sqlite"));
        assert_eq!(detect_kind(b"SQLite format 2\0"), FileKind::Unknown);
        // An XSpace whose first plane has an id, then a name.
        assert_eq!(detect_kind(b"\x0a\x20\x08\x01\x12\x0d/device:GPU:0"), trace_kind("xplane"));
        assert_eq!(detect_kind(b"\x0a\xa1\xf0\x08\x12\x0e/host:metadata"), trace_kind("xplane"));
        // Text that starts with a line break (0x0a, protobuf's field-1 tag) stays text.
        let optrace = b"\n0:0:0 %1:<2xf16> = a.b.add(%0:<2xf16>)\n";
        assert_eq!(detect_kind(optrace), FileKind::OpTrace);
        // Protobuf of another shape is no profile.
        assert_eq!(detect_kind(b"\x0a\x05\x12\x03abc"), FileKind::Unknown);
        for kind in [trace_kind("rocprof-json"), trace_kind("xplane"), trace_kind("sqlite")] {
            assert!(kind.is_trace() && kind.analysed_off_the_page(), "{kind:?}");
        }
        // The shared files, each by its first 64 KiB.
        for (path, kind) in [
            ("formats/rocprofv3/tracelens_mi350x_results.json.gz", trace_kind("rocprof-json")),
            ("formats/xplane/tracelens_jax_conv_mi300x.xplane.pb", trace_kind("xplane")),
            ("formats/nsys/pipit_saxpy_mpi_a100.sqlite", trace_kind("sqlite")),
        ] {
            let bytes = data(path);
            assert_eq!(detect_kind(&bytes[..DETECT_BYTES]), kind, "{path}");
        }
    }
}
