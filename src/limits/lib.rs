//! Every budget an input is held to, in one place. Files and share links come from people the
//! user does not know: each input kind has a size, depth and count it may not exceed, enforced
//! while it is read (not after), and an error that names the input, the limit and where it was
//! hit. The figures are generous next to the largest real inputs (noted beside each), so that
//! no real file is refused, and small enough that a crafted one cannot hang or exhaust the page.

// ---- share links ----------------------------------------------------------------------------

/// The longest op-trace text a share link carries (the view is recomputed from it). Deflate
/// shrinks op traces about 8×, so this keeps such links near 8 KB.
pub const SHARED_OPTRACE_BYTES: usize = 64 * 1024;

/// The most a link's state may inflate to (its JSON, before it is read). A link is a few KB of
/// deflate, and deflate inflates up to ~1000×, so without this a 60 KB link could make the
/// page hold gigabytes. The largest state the tests make is the 500-op random graph's, 58,303
/// bytes; then the DeepSeek-V2 simulator table's, 37,136; the largest trace state is the A100
/// compiled trace's summary, 23,019 bytes, and the largest comparison 22,042 (the share tests
/// measure the graph, every op trace, simulator table, shared trace and pair, and check each is
/// under a tenth of this): 1 MiB leaves 18× room over the largest and stays small enough to read
/// in a few milliseconds.
pub const SHARE_STATE_BYTES: usize = 1 << 20;

/// The most ops a shared op graph may have. A link carries the graph whole (about 100–120
/// bytes of JSON per op); the largest graph the tests share has 500 ops (59 KB of state), and
/// real hand-written graphs have tens. 5,000 ops keeps such a state near 600 KB, under
/// [`SHARE_STATE_BYTES`] (longer names reach that sooner: the state limit still applies);
/// larger graphs are sent as files.
pub const SHARED_GRAPH_OPS: usize = 5_000;

/// The longest simulator-table text a link carries (the page re-reads the table from it). The
/// largest real table (DeepSeek-V2 prefill, `tests/data/ops-csv`) is 36 KB; 256 KiB is 7× that
/// and, deflated about 6×, still a link of tens of KB.
pub const SHARED_SIM_TABLE_BYTES: usize = 256 * 1024;

/// The longest model-config text a link carries ("Model × chip" with a config from a file).
/// The largest real config (`tests/data/models/models/gligen.json`) is 2.2 KB.
pub const SHARED_MODEL_CONFIG_BYTES: usize = 64 * 1024;

/// The longest name a link may carry, in characters: file names, op, tensor and kernel names,
/// the selected op, model and chip preset names, a simulator table's notes. File names are at
/// most 255 bytes on every common file system; op names are short; kernel names are not: a
/// trace summary keeps them whole, and the longest among the shared traces of the tests is
/// 1,817 characters (a templated C++ kernel). 16,384 is 9× that.
pub const SHARED_NAME_CHARS: usize = 16 * 1024;

/// The most notes a shared simulator view may carry (what was assumed reading its file name:
/// at most one per workload field, 6 today).
pub const SHARED_NOTES: usize = 32;

// ---- op traces and simulator tables (text importers) ----------------------------------------

/// The longest line an op trace may have: 1 MiB. A record is one instruction, a few hundred
/// bytes (the longest line in tests/data/optrace is 194 bytes; an op with a thousand operands
/// would take about 30 KB), so no real trace comes near it, and it bounds what one record can
/// cost (at most about 130,000 operands, each as short as `%1:<i8>,`). Every line is held to
/// it, records or not: a megabyte without a line break is not a trace.
pub const OPTRACE_LINE_BYTES: usize = 1 << 20;

/// How deep brackets (`(`, `{`, `<`, of any kind) may nest in an op-trace record. A nested
/// `list{…}` is parsed by recursion, so without a budget a list nested 100,000 deep overflows
/// the stack (a signal on the command line, a trap on the page). Real records nest 3 deep
/// (`sum(…, list{list{0:i64, 1:i64}, 2:i64})` in tests/data/optrace/gpt2_block_tp_rank1.optrace,
/// the deepest there), so 64 leaves room for any real type and keeps the parser's stack small.
pub const OPTRACE_NESTING: usize = 64;

/// The most records one op trace may hold. Each record costs about 3 KB once parsed, placed,
/// viewed, converted and analysed (the op graph and its report included; measured on records
/// of three operands), so this keeps a trace near 600 MB on the page. Real traces hold one
/// record per op of a model's forward pass: the largest in tests/data/optrace has 22, a
/// 96-layer transformer about 2,000; this is 100 times that.
pub const OPTRACE_RECORDS: usize = 200_000;

/// The most data rows (the header not counted) a simulator op table may hold. The simulator
/// writes one row per op of each layer kind, with the number of runs in `Count`, so tables
/// stay small: the largest in tests/data/ops-csv (DeepSeek-V2 236B prefill) has 55 rows, the
/// others 10 to 28. 100,000 is nearly 2,000 times that, and bounds the memory of a table that
/// a share link (where 200,000 identical rows compress into a few hundred bytes) or a file
/// can bring.
pub const SIM_CSV_ROWS: usize = 100_000;

/// The most fields one simulator-table record may have. The simulator writes 70 columns (every
/// table in tests/data/ops-csv); each field costs a string even when empty, so a line of a
/// million commas would take 24 MB for nothing. 1,000 is 14 times the real width.
pub const SIM_CSV_FIELDS: usize = 1_000;

// ---- traces and compressed files ------------------------------------------------------------

/// The longest single item of a Kineto trace the streaming reader holds: one event, or one
/// top-level value other than the events array (`deviceProperties`, `metadata`, ...). The reader
/// keeps only the item in progress, so this bounds its memory whatever the file's size (a
/// `.json.gz` holding one 3 GB string is refused when its 64 MiB'th byte is reached, not
/// buffered). Real items are tiny next to it: the largest event in tests/data/traces is
/// 2,796 bytes (a kernel in `nvidia/hta_a100_compiled_rank0`), the largest top-level value
/// 26,239 bytes (`metadata` in `nvidia/hf_qwen1.5-0.5b_eager_h100`); a profiler writes events of
/// a few KB (names and shapes), so 64 MiB is over 20,000× the largest real event.
pub const TRACE_ITEM_BYTES: usize = 64 * 1024 * 1024;

/// The distinct names a trace may hold in all (kernels, CPU ops, annotations), each counted
/// once. Each event is bounded by [`TRACE_ITEM_BYTES`], but a file of many events with long,
/// distinct names would otherwise grow without bound (60 MB of gzip can hold 60,000 distinct
/// 1 MiB names). Real traces hold a few MB of names: a 10 GB synthetic trace with 4.26 M
/// kernels reads within 1.05 GB in all; 512 MiB of names is far above real traces and fits in
/// the worker's 4 GiB.
pub const TRACE_NAME_BYTES: usize = 512 * 1024 * 1024;

/// The GPU devices (process ids of kernels and copies) the summary-only mode keeps a timeline
/// for (`fusionscope trace --summary-only`, `analysis::summary_only`). Each costs up to five
/// unions of [`SUMMARY_ONLY_SPANS`] spans; real traces have one device (a rank's trace) to 8.
/// GPU events of further devices still count in every total, but have no timeline.
pub const SUMMARY_ONLY_DEVICES: usize = 64;

/// The disjoint spans one streamed union holds before it retires its earliest half (adding
/// their length to a running total). Kernels arrive nearly in time order, so a span reaching
/// back past the retired ones is rare: it is clipped and the timeline marked approximate. 16,384
/// spans are about 0.5 MB.
pub const SUMMARY_ONLY_SPANS: usize = 16 * 1024;

/// Kernels and copies each stream holds back while the idle split streams (the summary-only
/// mode, the ranks fold: `analysis::time::streamed_waits`), to retire them in start order:
/// as many as a streamed union's spans ([`SUMMARY_ONLY_SPANS`]), about 0.6 MB per stream.
pub const WAITS_HELD: usize = SUMMARY_ONLY_SPANS;

/// Streams the streamed idle split keeps figures for; events of further streams are left out
/// and a note says so. Most traces have 1 to 8 streams per device, but a rocprofv3 run can
/// number a stream per HIP stream object (the shared MI350X results have 570); a stream holds
/// nothing but its own events, so 4,096 costs nothing until they are used.
pub const WAITS_STREAMS: usize = 4096;

/// Launch calls the streamed idle split keeps waiting for their kernel (at most about 110 bytes
/// each, with their place in arrival order and that order's room for claimed calls: 7 MB); past
/// it the oldest is given up. A real trace's kernels reach the reader within a
/// few thousand calls of their launch.
pub const WAITS_LAUNCHES: usize = 1 << 16;

/// The longest top-level key of a trace (`traceEvents`, `deviceProperties`, ...), which the
/// reader keeps while it reads the key's value. Real keys are at most 20 bytes
/// (`cuda_runtime_version`); 4 KiB is 200× that.
pub const TRACE_KEY_BYTES: usize = 4 * 1024;

/// How deeply arrays and objects may nest inside one event or top-level value, the item itself
/// being level 1. Real events nest 5 levels (an event, its `args`, lists of input shapes) and
/// top-level values 4; 64 is far above that and below serde_json's own recursion limit (128),
/// so a crafted `[[[[…` is refused by the scanner with the place, before anything parses it.
pub const TRACE_NESTING_DEPTH: u32 = 64;

/// The longest JSON text (after decompression) of a rocprofv3 results file. Its dispatches name
/// their kernels and GPUs by ids resolved elsewhere in the file, so the text is held whole while
/// it is parsed (into typed records, no JSON tree), about 850 bytes per dispatch: the MI350X
/// training run in tests/data/formats (43,915 dispatches) is 37.5 MB. 1 GiB is 28× that
/// (about 1.2 M dispatches) and, with the records parsed from it, fits the page worker's 4 GiB.
pub const ROCPROF_JSON_BYTES: usize = 1 << 30;

/// The largest XLA profile (`*.xplane.pb`, after decompression). Protobuf is decoded whole (a
/// message's fields may come in any order), into about three times its size; the 8-GPU JAX
/// profile in tests/data/formats is 268 KB, and a profile of a long training step tens of MB.
/// 512 MiB keeps the decoded messages within the page worker's 4 GiB. A length that claims
/// more than the bytes left is refused by the decoder before anything is allocated for it.
pub const XPLANE_BYTES: usize = 512 * 1024 * 1024;

/// Instructions of one HLO module an XLA profile records (a large model's optimized module has
/// tens of thousands).
pub const HLO_INSTRUCTIONS: usize = 4_000_000;

/// The longest XLA trace-event JSON (JAX's `perfetto_trace.json.gz`, after decompression). It
/// is gathered whole before it is read, as the other formats read whole are (its reader itself
/// streams). XLA's converter keeps at most 1,000,000 events (`GetTraceViewerMaxEvents`), about
/// 200–400 bytes each with their args: 400 MB at most; 1 GiB leaves room for longer args and,
/// with the trace read from it, fits the page worker's 4 GiB.
pub const XLA_TRACE_JSON_BYTES: usize = 1 << 30;

/// The largest SQLite database (an Nsight Systems export) read. SQLite reads it from memory, so
/// it is held whole: the A100 export in tests/data/formats is 1.6 MB; an export of a long
/// multi-GPU run is hundreds of MB. 2 GiB leaves room for those and fits a 64-bit process.
pub const SQLITE_BYTES: usize = 2 << 30;

/// The most rows one table of an SQLite export may have; each is counted before it is read,
/// so a database claiming billions of rows is refused at once instead of read for hours. A
/// long training run's export has a few million kernel rows; 50 M is over 10× that.
pub const NSYS_TABLE_ROWS: u64 = 50_000_000;

/// The SQLite virtual-machine steps all the queries reading one SQLite trace may take. Reading
/// a table costs a few dozen steps a row, so a real export of [`NSYS_TABLE_ROWS`] rows takes
/// about 2 G; 2^34 (17 G, about a minute natively) is 10× that. Without it a crafted view (a
/// recursive query with no end, which a row count cannot see) would run for ever.
pub const SQLITE_STEPS: u64 = 1 << 34;

/// The longest text a file read whole may have (every kind but a trace, which is streamed and
/// bounded per item by [`TRACE_ITEM_BYTES`]): op graphs, op traces, simulator tables,
/// calibration profiles, model and chip configurations. It is enforced while a gzip file is
/// inflated (a 10 MB `.gz` can inflate to 10 GB) and on the bytes gathered of a plain file.
/// The largest such file in tests/data is a 221 KB calibration profile (simulator tables there
/// are at most 36 KB, op traces and graphs a few KB); 256 MiB is over 1,000× that and still
/// fits a page's memory next to the parsed result.
pub const WHOLE_FILE_TEXT_BYTES: usize = 256 * 1024 * 1024;

// ---- recorded op arguments (per-op cost formulas) ----------------------------------------

/// The longest text of one recorded op argument (`args["Input Dims"]`, `["Input type"]` or
/// `["Concrete Inputs"]`) the cost formulas read. The text is parsed whole into JSON
/// values, several times its length in memory, so it gets its own budget under the event's
/// ([`TRACE_ITEM_BYTES`]). The longest in tests/data/traces is 1,327 bytes (the Input Dims of
/// an fbgemm op with 133 inputs in `nvidia/hta_a100_compiled_rank0`); 1 MiB is 790× that.
pub const PERF_ARGS_TEXT_BYTES: usize = 1 << 20;

/// The most inputs one recorded op may list. The most in tests/data/traces is 133 (a compiled
/// region's wrapper op); 4,096 is 30× that.
pub const PERF_ARGS_INPUTS: usize = 4096;

/// The most tensors one `TensorList` input may list. A foreach optimizer step lists one tensor
/// per parameter: hundreds to a few thousand in real models (tests/data/traces has at most 4);
/// 65,536 covers the largest.
pub const PERF_ARGS_LIST_TENSORS: usize = 65_536;

/// The most dimensions one recorded tensor may have. Real tensors have at most 5 in
/// tests/data/traces; PyTorch's own kernels stop at 25 (TensorIterator); 64 is above both.
pub const PERF_ARGS_RANK: usize = 64;

// ---- serving-trace structure --------------------------------------------------------------------

/// The most kernels a repeating unit (a decoder layer) may hold for the structure search to
/// consider it. Real decoder layers hold 15–20 kernels (vLLM and SGLang decode on MI300X in
/// tests/data/traces), eager ones a few dozen; 1,024 is 50× that, and keeps each alignment of
/// one layer against another to at most ~1.5 M cells.
pub const LAYER_MAX_KERNELS: usize = 1024;

/// The alignment cells the search for steps, phases and layers may spend on one trace in all.
/// Layers that repeat exactly cost nothing (they are compared by their kernel names); only
/// near-repeats are aligned, once per distinct variant. The serving traces in tests/data spend
/// 2,000–12,000 cells per search, the eager Qwen traces under 60,000; a crafted or mutated
/// stream that keeps producing new near-repeats stops being searched at this budget (~0.7 s
/// natively) and the report says so.
pub const LAYER_SEARCH_CELLS: u64 = 1 << 27;

/// The most captured ops joining a capture trace to its replays may copy (each replay gets its
/// own copy of its graph's ops). The vLLM full-graph decode capture in tests/data holds 3,800
/// ops for one 421-kernel graph; 4 M copies (~250 MB) is a thousand such replays.
pub const CAPTURE_COPIED_OPS: usize = 4 << 20;

// ---- numbers ------------------------------------------------------------------------------------

/// The largest size or count a model config or workload parameter may give: any two multiply
/// without overflowing 64 bits, so shape arithmetic in the generators cannot overflow. Real
/// configs stay below: the largest number in tests/data/models is 40,000,000 (the rows of a
/// DLRM embedding table), 50× under it.
pub const MODEL_DIM: u64 = 1 << 31;

/// Peak FLOP/s a chip may have, whatever its source (a chip file, a link). The presets span
/// 4.6e13 (TPU v2) to 2.25e15 (B200 dense bf16); the largest published single device, a
/// wafer-scale engine (Cerebras WSE-3), claims 1.25e17. 1e6 (a microcontroller) to 1e21 (a
/// zettaFLOP/s, 10⁴ × that) admits every real chip and any plausible future one, and keeps the
/// roofline's axes within a few dozen decades.
pub const CHIP_PEAK_FLOPS: std::ops::RangeInclusive<f64> = 1e6..=1e21;

/// Memory bandwidth a chip may have, bytes/s. The presets span 6e11 (TPU v2) to 8e12 (B200);
/// the largest published figure, a wafer-scale engine's on-chip SRAM, is 2.1e16 (21 PB/s).
/// 1e6 (1 MB/s) to 1e17 (100 PB/s) admits them all with room.
pub const CHIP_BANDWIDTH: std::ops::RangeInclusive<f64> = 1e6..=1e17;

/// Per-kernel launch overhead a chip may have, µs. Presets use 0.5 (TPU) and 2 (GPU); an eager
/// launch from Python costs tens of µs. 0 to 1e6 (one second, 10⁴ × a slow launch) admits any
/// real figure.
pub const CHIP_LAUNCH_OVERHEAD_US: std::ops::RangeInclusive<f64> = 0.0..=1e6;

/// The longest chip name, in characters. Preset names are at most 13 ("A100 SXM 80GB"); the
/// name is shown in the chip picker and chart titles, where 200 is already more than fits.
pub const CHIP_NAME_CHARS: usize = 200;

/// The longest note of where a chip's figures come from, in characters. The longest preset's
/// is 110 characters (a TPU's NeuSim formula); 500 leaves room for a datasheet citation.
pub const CHIP_SOURCE_CHARS: usize = 500;

/// Decades the roofline chart spans at most on each axis: a grid line and a label per decade
/// are drawn, so without a bound a chip of 1e308 FLOP/s made a loop of 2³¹ steps and hung the
/// page. Charts of real workloads span about 10 (groups achieving 1e6 FLOP/s up to a peak of
/// 1e15, with margins); beyond 30 the chart keeps the decades nearest the peak and draws lower
/// points on its bottom edge.
pub const ROOFLINE_DECADES: i32 = 30;

/// The most routed experts a MoE workload builds on one chip (one small op chain each). The
/// largest real MoE model in the configs, DeepSeek-V3, has 256 routed experts; a config with
/// 2³¹ of them would otherwise make billions of ops and hang the page that opened its link.
pub const WORKLOAD_EXPERTS_PER_CHIP: u64 = 4096;

// ---- Ranks of one job (`fusionscope ranks`, `analysis::ranks`, docs/ranks.md)

/// Trace files of one job opened together. Each is read in bounded memory and only its
/// summary kept; 4,096 ranks' summaries are a few hundred MB at most.
pub const RANKS_FILES: usize = 4096;

/// Collective kernels one rank's fold records (about 100 bytes each). Past this, a note says
/// so and the rank's later collectives are not matched. Real traces of a few steps hold tens to
/// thousands; a million is far above them.
pub const RANKS_COLLECTIVES: usize = 1 << 20;

/// GPU devices of one rank's trace given a timeline; events of further devices count in no
/// timeline and a note says so. A rank's trace has one device (sometimes up to 8 listed).
pub const RANKS_DEVICES: usize = 16;

/// Streams of one rank given their own figures (each three unions of [`RANKS_STREAM_SPANS`]).
/// Real ranks run kernels on 2 to 6 streams.
pub const RANKS_STREAMS: usize = 32;

/// Disjoint spans a stream's union holds before retiring its earliest half: as many as a
/// device's ([`SUMMARY_ONLY_SPANS`]), since kernels reach the reader far from time order (a real
/// A100 trace's compute stream needs more than 4,096 held to come out exact). A union only
/// grows as its spans do: 32 streams × 3 full unions would be about 60 MB, real ranks a few MB.
pub const RANKS_STREAM_SPANS: usize = SUMMARY_ONLY_SPANS;

/// Disjoint computation spans kept per device, exactly, to measure the computation before each
/// collective (about 40 bytes each: 5 MB). A launch-bound trace whose kernels never touch can
/// pass it: the per-collective computation is then left out for that device, and a note says so.
pub const RANKS_COMPUTE_SPANS: usize = 1 << 17;

/// Distinct process groups (or, without them, collective streams) of one rank.
pub const RANKS_GROUPS: usize = 4096;

/// Group members one rank's fold keeps in all, from its kernels' `Process Group Ranks` (4 bytes
/// each: 16 MB). A list past what is left is not kept (that group's members are then unknown,
/// noted): 4,096 groups could otherwise each hold a 64 MB list.
pub const RANKS_GROUP_MEMBERS: usize = 1 << 22;

/// The largest fusion rule file (`--fusion-rules FILE`), bytes. A rule set is a few join rules
/// of a few hundred bytes each; 1 MiB is thousands of times that.
pub const FUSION_RULE_FILE_BYTES: usize = 1 << 20;

/// The most join rules a rule file may hold. The built-in sets have at most 4; every rule is
/// tried for every kernel of a trace, so the count bounds the what-if's work per kernel.
pub const FUSION_RULES: usize = 256;

/// The most kernels one what-if run may hold. Real fusions hold a handful (FlashAttention's
/// six eager kernels, a norm with its pointwise neighbours); the bound keeps one run's
/// `run_has` checks, linear in its length, from making the walk quadratic on a trace of
/// millions of small pointwise kernels.
pub const FUSION_RUN_KERNELS: usize = 64;

/// The largest execution trace (`--exec-trace`), bytes of JSON text. The shared pairs' are
/// 22 kB (compressed) to a few MB; an ET of one training iteration of a large model is a few
/// hundred MB. Read whole (its nodes are linked by id), so bounded like a whole-file read.
pub const EXEC_TRACE_BYTES: usize = 512 * 1024 * 1024;

/// The most nodes an execution trace may hold: one per op call of one iteration; 4 M is a few
/// times the largest model iterations seen (hundreds of thousands of ops).
pub const EXEC_TRACE_NODES: usize = 4 << 20;

/// The most inputs or outputs one execution-trace node may list (a `cat` of thousands of
/// tensors, an optimizer's foreach op over every parameter, fit well below).
pub const EXEC_TRACE_VALUES: usize = 65_536;

/// The largest torch.compile structured log (`TORCH_TRACE`), bytes of text after
/// decompression. A large model's log with every artifact (graphs, output code, guards) runs to
/// tens of MB per rank; it is read whole, so it is bounded as a whole-file read is.
pub const COMPILE_LOG_BYTES: usize = WHOLE_FILE_TEXT_BYTES;

/// The most nodes one compiled graph of a compile log may hold (a large model's post-grad
/// graph has tens of thousands).
pub const COMPILE_LOG_NODES: usize = 1 << 20;

/// The most compiled graphs one compile log may hold (one per graph break and recompile, per
/// forward and backward).
pub const COMPILE_LOG_GRAPHS: usize = 4096;
