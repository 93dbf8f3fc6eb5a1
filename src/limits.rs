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

// ---- numbers ------------------------------------------------------------------------------------
