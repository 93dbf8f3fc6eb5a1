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

// ---- numbers ------------------------------------------------------------------------------------
