//! The exact computation spans of a device, kept to measure the computation before each
//! collective (`docs/ranks.md`, "Stragglers"), up to a budget.

use std::collections::BTreeMap;

use crate::limits::RANKS_COMPUTE_SPANS;
use crate::trace::time::timeline::Intervals;

/// Exact union of spans, merged as they come, up to a cap of disjoint spans; past it the set
/// gives up (its figures are then unknown, never approximate).
#[derive(Debug, Default)]
pub(super) struct SpanSet {
    spans: BTreeMap<u64, (f64, f64)>,
    overflowed: bool,
}

/// Orders finite floats as their bits order them (sign-flipped for negatives).
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

impl SpanSet {
    pub(super) fn add(&mut self, s: f64, e: f64) {
        if self.overflowed || !(s.is_finite() && e.is_finite() && e > s) {
            return;
        }
        let (mut s, mut e) = (s, e);
        if let Some((&k, &(ps, pe))) = self.spans.range(..=key(s)).next_back() {
            if pe >= s {
                if pe >= e {
                    return;
                }
                s = ps;
                self.spans.remove(&k);
            }
        }
        while let Some((&k, &(ns, ne))) = self.spans.range(key(s)..).next() {
            if ns > e {
                break;
            }
            e = e.max(ne);
            self.spans.remove(&k);
        }
        self.spans.insert(key(s), (s, e));
        if self.spans.len() > RANKS_COMPUTE_SPANS {
            self.overflowed = true;
            self.spans = BTreeMap::new();
        }
    }

    pub(super) fn intervals(&self) -> Option<Intervals> {
        (!self.overflowed).then(|| Intervals::union(self.spans.values().copied().collect()))
    }
}
