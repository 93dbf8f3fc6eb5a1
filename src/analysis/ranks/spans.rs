//! The exact computation spans of a device, kept to measure the computation before each
//! collective (`docs/ranks.md`, "Stragglers"), up to a budget.

use crate::time::disjoint_spans::DisjointSpans;
use crate::time::timeline::Intervals;
use limits::RANKS_COMPUTE_SPANS;

/// Exact union of spans, merged as they come, fewer than a cap of disjoint spans; reaching it
/// the set gives up (its figures are then unknown, never approximate). Giving up at the cap
/// rather than past it matters: the store's deque holds exactly the cap's power of two when
/// full, and one span more would double it (2 MB to 4 MB) only to be dropped.
#[derive(Debug, Default)]
pub(super) struct SpanSet {
    spans: DisjointSpans,
    overflowed: bool,
}

impl SpanSet {
    pub(super) fn add(&mut self, s: f64, e: f64) {
        if self.overflowed || !(s.is_finite() && e.is_finite() && e > s) {
            return;
        }
        self.spans.add(s, e);
        if self.spans.len() >= RANKS_COMPUTE_SPANS {
            self.overflowed = true;
            self.spans = DisjointSpans::default();
        }
    }

    pub(super) fn intervals(&self) -> Option<Intervals> {
        (!self.overflowed).then(|| Intervals::union(self.spans.iter().collect()))
    }
}
