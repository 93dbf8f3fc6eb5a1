//! Every budget an input is held to, in one place. Files and share links come from people the
//! user does not know: each input kind has a size, depth and count it may not exceed, enforced
//! while it is read (not after), and an error that names the input, the limit and where it was
//! hit. The figures are generous next to the largest real inputs (noted beside each), so that
//! no real file is refused, and small enough that a crafted one cannot hang or exhaust the page.

// ---- share links ----------------------------------------------------------------------------

/// The longest op-trace text a share link carries (the view is recomputed from it). Deflate
/// shrinks op traces about 8×, so this keeps such links near 8 KB.
pub const SHARED_OPTRACE_BYTES: usize = 64 * 1024;

// ---- op traces and simulator tables (text importers) ----------------------------------------

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

/// The longest top-level key of a trace (`traceEvents`, `deviceProperties`, ...), which the
/// reader keeps while it reads the key's value. Real keys are at most 20 bytes
/// (`cuda_runtime_version`); 4 KiB is 200× that.
pub const TRACE_KEY_BYTES: usize = 4 * 1024;

/// How deeply arrays and objects may nest inside one event or top-level value, the item itself
/// being level 1. Real events nest 5 levels (an event, its `args`, lists of input shapes) and
/// top-level values 4; 64 is far above that and below serde_json's own recursion limit (128),
/// so a crafted `[[[[…` is refused by the scanner with the place, before anything parses it.
pub const TRACE_NESTING_DEPTH: u32 = 64;

/// The longest text a file read whole may have (every kind but a trace, which is streamed and
/// bounded per item by [`TRACE_ITEM_BYTES`]): op graphs, op traces, simulator tables,
/// calibration profiles, model and chip configurations. It is enforced while a gzip file is
/// inflated (a 10 MB `.gz` can inflate to 10 GB) and on the bytes gathered of a plain file.
/// The largest such file in tests/data is a 221 KB calibration profile (simulator tables there
/// are at most 36 KB, op traces and graphs a few KB); 256 MiB is over 1,000× that and still
/// fits a page's memory next to the parsed result.
pub const WHOLE_FILE_TEXT_BYTES: usize = 256 * 1024 * 1024;

// ---- numbers ------------------------------------------------------------------------------------
