//! A union of spans that arrive one by one, held as disjoint spans in start order and merged as
//! they come: the store under the streamed timelines ([`super::timeline::StreamedUnion`]) and
//! a rank's exact computation spans (`trace::ranks`).
//!
//! **Why two stores.** Kernels mostly reach the reader in time order, and a trace has hundreds
//! of thousands of them, each added to several unions while the file is read. A span that
//! starts at or after the last one held can only touch that one, so it is appended to a deque
//! (`tail`) in constant time. Only a span that reaches back goes into an ordered map
//! (`placed`), and with it the tail before it (each span moves at most once), so spans that
//! come out of order cost a logarithmic search, never a shift of the spans after them: no
//! input order makes adding quadratic. Keeping every span in the map, as before, cost about
//! a third of reading a real 59 MB serving trace in WebAssembly (map inserts and node
//! rebalancing for spans that only ever went at the end).

use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

/// A span's start as a map key, ordered by `total_cmp` (starts are finite).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Start(f64);

impl Eq for Start {}

impl PartialOrd for Start {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Start {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Disjoint spans in start order; a span added is merged with every span it touches (ends
/// meeting count as touching).
#[derive(Debug, Clone, Default)]
pub struct DisjointSpans {
    /// Spans that came out of start order, and every span held before them.
    placed: BTreeMap<Start, f64>,
    /// Spans after every span of `placed`, in start order.
    tail: VecDeque<(f64, f64)>,
}

impl DisjointSpans {
    /// Adds `[start, end]`, which the caller has checked: finite, and `end > start`.
    pub fn add(&mut self, start: f64, end: f64) {
        match self.tail.back_mut() {
            Some(last) if Start(start) >= Start(last.0) => {
                if last.1 >= start {
                    last.1 = last.1.max(end);
                } else {
                    self.tail.push_back((start, end));
                }
                return;
            }
            // Out of order: the tail joins the map, where the span is merged.
            Some(_) => self.placed.extend(self.tail.drain(..).map(|(s, e)| (Start(s), e))),
            None => match self.placed.last_entry() {
                Some(mut last) if Start(start) >= *last.key() => {
                    let held_end = *last.get();
                    if held_end >= start {
                        *last.get_mut() = held_end.max(end);
                    } else {
                        self.tail.push_back((start, end));
                    }
                    return;
                }
                Some(_) => {}
                None => return self.tail.push_back((start, end)),
            },
        }
        self.merge_placed(start, end);
    }

    /// Merges `[s, e]` into `placed` (the tail is empty).
    fn merge_placed(&mut self, mut s: f64, mut e: f64) {
        if let Some((&k, &held_end)) = self.placed.range(..=Start(s)).next_back() {
            if held_end >= s {
                if held_end >= e {
                    return;
                }
                s = k.0;
                self.placed.remove(&k);
            }
        }
        while let Some((&k, &held_end)) = self.placed.range(Start(s)..).next() {
            if k.0 > e {
                break;
            }
            e = e.max(held_end);
            self.placed.remove(&k);
        }
        self.placed.insert(Start(s), e);
    }

    /// Disjoint spans held.
    pub fn len(&self) -> usize {
        self.placed.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes and returns the earliest span.
    pub fn pop_first(&mut self) -> Option<(f64, f64)> {
        match self.placed.pop_first() {
            Some((s, e)) => Some((s.0, e)),
            None => self.tail.pop_front(),
        }
    }

    /// The spans in start order.
    pub fn iter(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.placed.iter().map(|(s, &e)| (s.0, e)).chain(self.tail.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::timeline::Intervals;
    use proptest::prelude::*;

    /// The spans of a union as `Intervals` makes them (sorted, merged where they touch).
    fn merged(spans: &[(f64, f64)]) -> Vec<(f64, f64)> {
        let mut sorted = spans.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(f64, f64)> = Vec::new();
        for (s, e) in sorted {
            match out.last_mut() {
                Some(last) if last.1 >= s => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        out
    }

    fn spans_strategy() -> impl Strategy<Value = Vec<(f64, f64)>> {
        // Integer-valued starts and lengths: touching and nested spans are frequent.
        prop::collection::vec((0u32..400, 1u32..30), 0..300)
            .prop_map(|v| v.into_iter().map(|(s, l)| (f64::from(s), f64::from(s + l))).collect())
    }

    proptest! {
        /// In any order (and in time order, mostly in order, reversed), the spans held are the
        /// merged union, in start order, with the union's length.
        #[test]
        fn the_spans_held_are_the_union_in_any_order(spans in spans_strategy(), swaps in prop::collection::vec((0usize..300, 0usize..300), 0..8)) {
            let want = merged(&spans);
            let mut in_order = spans.clone();
            in_order.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut nearly = in_order.clone();
            for (i, j) in swaps {
                if !nearly.is_empty() {
                    let n = nearly.len();
                    nearly.swap(i % n, j % n);
                }
            }
            let reversed: Vec<_> = in_order.iter().rev().copied().collect();
            for order in [&spans, &in_order, &nearly, &reversed] {
                let mut set = DisjointSpans::default();
                for &(s, e) in order.iter() {
                    set.add(s, e);
                }
                let held: Vec<_> = set.iter().collect();
                prop_assert_eq!(&held, &want);
                prop_assert_eq!(set.len(), want.len());
                let union = Intervals::union(order.clone());
                let length: f64 = held.iter().map(|(s, e)| e - s).sum();
                prop_assert!((length - union.length()).abs() < 1e-9);
            }
        }

        /// Popping gives the spans earliest first, whichever store holds them.
        #[test]
        fn spans_pop_earliest_first(spans in spans_strategy()) {
            let mut set = DisjointSpans::default();
            for &(s, e) in &spans {
                set.add(s, e);
            }
            let mut popped = Vec::new();
            while let Some(span) = set.pop_first() {
                popped.push(span);
            }
            prop_assert_eq!(popped, merged(&spans));
            prop_assert!(set.is_empty());
        }
    }

    #[test]
    fn in_order_spans_never_enter_the_map_and_a_late_one_takes_the_tail_with_it() {
        let mut set = DisjointSpans::default();
        for (s, e) in [(0.0, 1.0), (1.0, 2.0), (3.0, 4.0), (5.0, 6.0)] {
            set.add(s, e);
        }
        assert!(set.placed.is_empty());
        assert_eq!(set.tail.len(), 3); // [0, 2] merged where the ends meet
        set.add(2.5, 3.5); // reaches back into [3, 4]
        assert!(set.tail.is_empty());
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![(0.0, 2.0), (2.5, 4.0), (5.0, 6.0)]);
        set.add(7.0, 8.0); // in order again: after the map's last span
        assert_eq!(set.tail.len(), 1);
        assert_eq!(set.iter().last(), Some((7.0, 8.0)));
    }
}
