//! Share links: the page's state in the URL fragment, so that a link shows a colleague the
//! same view with no file to send.
//!
//! A fragment is `s=<format>.<payload>`: the payload is the state as JSON, deflated and
//! written in base64url without padding. `<format>` is [`FORMAT_VERSION`]; a link from a later
//! format is refused with a message that says so instead of being misread. The fragment never
//! reaches a server, so nothing is uploaded.
//!
//! Formats: 1 held the transformer block, op graphs and trace views. 2 adds "Model × chip"
//! (its parameters, not its graph) and the time view's chip (a preset by name, a chip from a
//! file by its figures). Every format-1 link is a valid format-2 state and still opens
//! (fixtures in `tests/data/share/`). A view this page does not know, or a format above
//! [`FORMAT_VERSION`], is refused as made by a newer version.
//!
//! Links come from strangers, so opening one is bounded at every step: the state may inflate to
//! at most [`SHARE_STATE_BYTES`] (checked while inflating), is read straight into its types
//! (no untyped JSON tree; `share/read.rs` says how), and is then held to every per-view limit a page
//! holds a link to when it makes one ([`check_limits`]: op-trace text, graph ops, kernel lists,
//! names). Every failure is a [`ShareError`] saying what was wrong, which the page shows over
//! its default view.

mod caps;
pub mod compact;
mod read;
mod state;
mod trim;

pub use caps::{check_limits, check_shareable};
pub use state::{ShareError, SharedState, SharedView, FORMAT_VERSION, FRAGMENT_KEY};
pub use trim::{
    fusion_pair, trim_comparison, trim_fusion, trim_gap, trim_structure, trim_summary, trim_time, SHARED_FUSION_GROUPS,
    SHARED_GAP_ROWS, SHARED_GROUP_OPS, SHARED_KERNELS_PER_CATEGORY, SHARED_KERNELS_PER_ROW, SHARED_OPPORTUNITIES,
    SHARED_OPPORTUNITY_KERNELS, SHARED_OP_ROWS, SHARED_STEPS, SHARED_STRUCTURE_EDGES, SHARED_STRUCTURE_STEPS,
};
pub use trim::{trim_ranks, SHARED_COLLECTIVE_ROWS, SHARED_UNMATCHED_ROWS};

use std::io::{Read, Write};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use fusion::json::{build, GraphFile};
use fusion::{GraphError, OpGraph};
pub use limits::SHARE_STATE_BYTES;
use state::{state_json, VIEWS};

/// Rebuilds a shared graph; the errors are those of a graph file (without positions).
pub fn graph_of(file: &GraphFile) -> Result<OpGraph, GraphError> {
    build(file, &|_| None, &|_| None)
}

/// The fragment (without `#`) for a state. A page checks [`check_shareable`] first: a state over
/// the limits makes a link that will not open.
pub fn encode(state: &SharedState) -> String {
    let json = state_json(state);
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&json).expect("writing to a Vec cannot fail");
    let deflated = enc.finish().expect("writing to a Vec cannot fail");
    format!("{FRAGMENT_KEY}{FORMAT_VERSION}.{}", URL_SAFE_NO_PAD.encode(deflated))
}

/// The state a fragment holds (with or without its leading `#`).
pub fn decode(fragment: &str) -> Result<SharedState, ShareError> {
    let body = fragment.strip_prefix('#').unwrap_or(fragment);
    let body = body.strip_prefix(FRAGMENT_KEY).ok_or(ShareError::NotAShareLink)?;
    let (version, payload) = body.split_once('.').unwrap_or((body, ""));
    let version: u32 = version.parse().map_err(|_| ShareError::BadVersion(version.chars().take(20).collect()))?;
    match version {
        0 => return Err(ShareError::Unknown(0)),
        v if v > FORMAT_VERSION => return Err(ShareError::Newer(v)),
        _ => {}
    }
    let deflated = URL_SAFE_NO_PAD.decode(payload.trim_end()).map_err(|e| ShareError::Base64(e.to_string()))?;
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(deflated.as_slice())
        .take(SHARE_STATE_BYTES as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|e| ShareError::Deflate(e.to_string()))?;
    if json.len() > SHARE_STATE_BYTES {
        return Err(ShareError::TooLarge);
    }
    let json_error = |e: serde_json::Error| ShareError::Json { version, message: e.to_string() };
    // A view this format does not have comes from a newer page (one that added a view
    // without a new format number), not from a damaged link.
    let view = read::view_tag(&json).map_err(json_error)?;
    let view = view.ok_or_else(|| ShareError::Json { version, message: "the state has no `view`".into() })?;
    if !VIEWS[version as usize - 1].contains(&view.as_str()) {
        return Err(ShareError::NewerView { version, view: view.chars().take(40).collect() });
    }
    let envelope = read::envelope(&json, &view).map_err(json_error)?;
    if envelope.v != version {
        return Err(ShareError::Json {
            version,
            message: format!("the state says format {} but the link says {version}", envelope.v),
        });
    }
    let state =
        SharedState { view: envelope.state, selected_op: envelope.selected_op, chip: envelope.chip, tab: envelope.tab };
    check_limits(&state)?;
    Ok(state)
}

/// The length a typical link stays under, so that it pastes into chat and review tools.
pub const TYPICAL_LINK_BYTES: usize = 8 * 1024;

/// Findings a link's overview keeps whatever else it gives up.
const MIN_FINDINGS: usize = 3;

/// Gap rows a link keeps before it gives up category kernel names to fit.
const MIN_GAP_ROWS: usize = 4;

/// The state cut to keep its link under [`TYPICAL_LINK_BYTES`]: a summary halves its op rows,
/// then leaves its structure out, then halves its fusion groups (down to the longest two) and
/// leaves its streams out, then halves the kernels each category lists (down to the longest);
/// a comparison halves its gap rows down to `MIN_GAP_ROWS` (4),
/// then leaves its aligned layers out, then halves the kernels each category lists per side
/// (down to 2: the headline and the largest differences matter more than a category's eighth
/// kernel), then its sides' fusion opportunities and groups (after halving them to the longest
/// four and the two opportunities that save most before anything else) down to each side's
/// longest group, then the findings that explain least (down to three), then those groups,
/// then their fusion totals, then the carried overview (the page computes one from what is
/// left), then the rest of the gap rows. The timeline, coverage and headline always stay; a
/// view that loses anything says it was trimmed.
pub fn fit_time_rows(mut state: SharedState) -> SharedState {
    while encode(&state).len() >= TYPICAL_LINK_BYTES {
        match &mut state.view {
            SharedView::TraceSummary { time: Some(t), trimmed, .. } if !t.ops.is_empty() => {
                t.ops.truncate(t.ops.len() / 2);
                *trimmed = true;
            }
            SharedView::TraceSummary { summary, trimmed, .. } if summary.structure.is_some() => {
                summary.structure = None;
                *trimmed = true;
            }
            // Then the fusion groups and streams, halved down to the longest two.
            SharedView::TraceSummary { time: Some(t), trimmed, .. }
                if t.fusion.as_ref().is_some_and(|f| f.groups.len() > 2) || !t.streams.is_empty() =>
            {
                match t.fusion.as_mut().filter(|f| f.groups.len() > 2) {
                    Some(f) => {
                        f.groups.truncate(f.groups.len() / 2);
                        f.opportunities.truncate(f.opportunities.len().div_ceil(2));
                    }
                    None => t.streams.clear(),
                }
                *trimmed = true;
            }
            // Last, the kernels each category lists, halved down to its longest one.
            SharedView::TraceSummary { summary, trimmed, .. }
                if summary.categories.iter().any(|r| r.trace.kernels.len() > 1) =>
            {
                for r in &mut summary.categories {
                    r.trace.kernels.truncate(r.trace.kernels.len().div_ceil(2));
                }
                *trimmed = true;
            }
            // A comparison first halves its sides' fusion groups and opportunities down to the
            // longest four and the two that save most.
            SharedView::TraceComparison { fusion: Some(f), trimmed, .. }
                if f.iter().any(|s| s.groups.len() > 4 || s.opportunities.len() > 2) =>
            {
                for s in f.iter_mut() {
                    s.groups.truncate((s.groups.len() / 2).max(4));
                    s.opportunities.truncate((s.opportunities.len() / 2).max(2));
                }
                *trimmed = true;
            }
            SharedView::TraceComparison { gap, comparison, trimmed, fusion, overview, .. } => {
                let longest =
                    comparison.categories.iter().flat_map(|r| r.sides.values()).map(|s| s.kernels.len()).max();
                let rows = gap.as_ref().map_or(0, |g| g.rows.len());
                if rows > MIN_GAP_ROWS {
                    gap.iter_mut().for_each(|g| g.rows.truncate((rows / 2).max(MIN_GAP_ROWS)));
                } else if !comparison.layer_alignment.is_empty() {
                    comparison.layer_alignment.clear();
                } else if let Some(n) = longest.filter(|n| *n > 2) {
                    for side in comparison.categories.iter_mut().flat_map(|r| r.sides.values_mut()) {
                        side.kernels.truncate(n.div_ceil(2).max(2));
                    }
                } else if let Some(f) =
                    fusion.as_mut().filter(|f| f.iter().any(|s| s.groups.len() > 1 || !s.opportunities.is_empty()))
                {
                    // Then each side's fusion: an opportunity at a time, then groups down to
                    // the longest one (the totals stay).
                    for s in f.iter_mut() {
                        if s.opportunities.pop().is_none() {
                            s.groups.truncate((s.groups.len() / 2).max(1));
                        }
                    }
                } else if let Some(o) = overview.as_mut().filter(|o| o.findings.len() > MIN_FINDINGS) {
                    // Then the findings that explain least (the verdict and the first three stay).
                    o.findings.pop();
                } else if let Some(f) = fusion.as_mut().filter(|f| f.iter().any(|s| !s.groups.is_empty())) {
                    // Then the groups: the totals (the headline and the total bars) stay.
                    f.iter_mut().for_each(|s| s.groups.clear());
                } else if fusion.is_some() {
                    // The gap's four largest rows come before the fusion totals.
                    *fusion = None;
                } else if overview.is_some() {
                    // The page computes an overview from what the link holds.
                    *overview = None;
                } else if rows > 0 {
                    gap.iter_mut().for_each(|g| g.rows.truncate(rows / 2));
                } else {
                    break;
                }
                *trimmed = true;
            }
            _ => break,
        }
    }
    state
}

#[cfg(test)]
mod tests;
