//! The repeating unit of one forward pass: a decoder layer, found in the pass's kernel-name
//! sequence without any annotation (`docs/trace-analysis.md`, "Serving traces").
//!
//! A forward pass is a prologue (embedding), the same layer once per model layer, and an
//! epilogue (final norm, logits, sampling). The search works on token sequences (one token per
//! distinct kernel name) and stays near-linear in their length:
//!
//! 1. **Layer count.** Names that run once per layer run as often as there are layers, and names
//!    that run k times per layer k times as often; so the candidate counts are the occurrence
//!    counts `c` whose names (occurring `c`, `2c`, `3c` or `4c` times) cover the most kernels,
//!    and those whose names occurring exactly `c` times do; six at most are tried.
//! 2. **Anchor.** For a count, the name occurring that often at the most even spacing (then the
//!    earliest) is the anchor: each layer holds it once. The stretches from one anchor to the
//!    next are the layer read from the anchor; the most frequent stretch is the unit.
//! 3. **Start.** Where the layer starts is grown backwards from the first anchor against the
//!    unit's tail ([`extend`]: equal names pay, equal categories pay less), so the first layer
//!    begins after the prologue (at its input norm, typically). Every other layer starts the
//!    same number of kernels before its anchor, or where its own kernels before the anchor match
//!    best when they differ.
//! 4. **Repeats.** A stretch identical to the unit is an exact repeat; one whose alignment with
//!    it pairs at least [`NEAR_REPEAT`] of the longer one's kernels by name is a near-repeat (a
//!    first layer without a residual add, alternating attention kernels). A stretch that is
//!    neither may still start with a layer ([`fit_prefix`]): the last layer of a pass followed
//!    by the epilogue. Consecutive repeats form runs; only runs of [`MIN_LAYERS`] or more count.
//!
//! A result is kept when the unit occurs exactly at least twice, holds at least
//! [`MIN_LAYER_KERNELS`] kernels, and its layers cover at least [`MIN_COVERAGE`] of the
//! sequence; among the candidate counts the one covering the most kernels wins, or a finer one
//! (more layers) covering nearly as many. Alignments are the only super-linear work: each costs
//! `layer × layer` cells, is done once per distinct stretch, and all of them draw on one
//! [`Budget`].

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::structure::align::{align, extend, fit_prefix, Step};
use classify::category::Category;
use limits::LAYER_MAX_KERNELS;

/// Fewest layers in a run for it to count.
pub const MIN_LAYERS: usize = 2;
/// Fewest kernels in a layer.
pub const MIN_LAYER_KERNELS: usize = 2;
/// Share of the longer stretch's kernels an alignment must pair by name for a near-repeat.
pub const NEAR_REPEAT: f64 = 0.75;
/// Share of the sequence the layers must cover.
pub const MIN_COVERAGE: f64 = 0.5;
/// Candidate layer counts tried: by the kernels their names cover counting multiples, and
/// counting only names that run exactly once per layer.
const CANDIDATE_COUNTS: usize = 4;
const EXACT_CANDIDATE_COUNTS: usize = 2;
/// Most times a name may run in one layer and still count for the layer count.
const MAX_PER_LAYER: usize = 4;
/// A finer unit (more layers) wins when it covers at least this share of the best coverage.
const FINER_WITHIN: f64 = 0.9;

/// Scores when growing a match outwards: equal names pay, equal categories pay a little,
/// anything else costs, so that an unrelated prologue stops the growth.
const EXT_SAME: i64 = 2;
const EXT_SAME_CATEGORY: i64 = 1;
const EXT_OTHER: i64 = -2;
const EXT_GAP: i64 = 2;

/// Alignment cells the search may still spend (see [`limits::LAYER_SEARCH_CELLS`]).
#[derive(Debug, Clone)]
pub struct Budget {
    left: u64,
    /// Set when a request was refused: the report says the search stopped early.
    pub exhausted: bool,
}

impl Budget {
    pub fn new(cells: u64) -> Self {
        Budget { left: cells, exhausted: false }
    }

    /// Cells still left.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Takes `cells` that a search already known to need no more than are left spent: as
    /// `take` would have, request by request, so nothing is refused.
    pub fn spend(&mut self, cells: u64) {
        debug_assert!(cells <= self.left);
        self.left = self.left.saturating_sub(cells);
    }

    /// Takes `n · m` cells if that many are left.
    fn take(&mut self, n: usize, m: usize) -> bool {
        let cells = (n as u64).saturating_mul(m as u64);
        if cells > self.left {
            self.exhausted = true;
            return false;
        }
        self.left -= cells;
        true
    }
}

/// One layer found: kernels `start..end` of the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    pub start: usize,
    pub end: usize,
    /// Identical to the unit (else a near-repeat).
    pub exact: bool,
}

/// The layers of a sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The unit's tokens, from the layer's first kernel.
    pub unit: Vec<u32>,
    /// Every layer, in order; disjoint.
    pub layers: Vec<Layer>,
    /// Runs of layers that follow each other without a kernel between them, as ranges of
    /// `layers`; each holds at least [`MIN_LAYERS`].
    pub runs: Vec<Range<usize>>,
}

impl Found {
    /// Kernels inside layers.
    pub fn covered(&self) -> usize {
        self.layers.iter().map(|l| l.end - l.start).sum()
    }
}

/// A token sequence and its tokens' categories (indexed by token).
#[derive(Clone, Copy)]
pub struct Tokens<'a> {
    pub tokens: &'a [u32],
    pub categories: &'a [Category],
}

impl Tokens<'_> {
    fn category(&self, t: u32) -> Category {
        self.categories.get(t as usize).copied().unwrap_or(Category::Other)
    }

    fn extension_score(&self, a: u32, b: u32) -> i64 {
        if a == b {
            EXT_SAME
        } else if self.category(a) == self.category(b) {
            EXT_SAME_CATEGORY
        } else {
            EXT_OTHER
        }
    }

    /// Pairing score of the repeat alignment: names first, then categories; kernels of
    /// different categories do not pair.
    fn pair_score(&self, a: u32, b: u32) -> Option<i64> {
        if a == b {
            Some(2)
        } else if self.category(a) == self.category(b) {
            Some(1)
        } else {
            None
        }
    }
}

/// The layers of `seq`, if it has a repeating unit; see the module docs.
pub fn find(seq: Tokens<'_>, budget: &mut Budget) -> Option<Found> {
    let n = seq.tokens.len();
    if n < MIN_LAYERS * MIN_LAYER_KERNELS {
        return None;
    }
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for &t in seq.tokens {
        *counts.entry(t).or_insert(0) += 1;
    }
    let mut covered_by_count: FxHashMap<usize, usize> = FxHashMap::default();
    for &c in counts.values() {
        if c >= MIN_LAYERS {
            *covered_by_count.entry(c).or_insert(0) += c;
        }
    }
    let found: Vec<Found> = candidate_counts(&covered_by_count)
        .into_iter()
        .filter_map(|count| with_count(seq, &counts, count, budget))
        .collect();
    let best = found.iter().map(Found::covered).max()?;
    found
        .into_iter()
        .filter(|f| f.covered() as f64 >= FINER_WITHIN * best as f64)
        .max_by(|a, b| a.layers.len().cmp(&b.layers.len()).then(a.covered().cmp(&b.covered())))
}

/// The layer counts worth trying: those whose names (occurring once to [`MAX_PER_LAYER`] times
/// per layer) cover the most kernels, and those whose names occurring exactly once per layer
/// do. Eager layers run generic kernels (`elementwise_kernel`, `direct_copy`) several times
/// each, so few names run exactly once per layer; counting the multiples finds their layer
/// count all the same.
fn candidate_counts(covered_by_count: &FxHashMap<usize, usize>) -> Vec<usize> {
    let covered = |c: usize| covered_by_count.get(&c).copied().unwrap_or(0);
    let support = |c: usize| (1..=MAX_PER_LAYER).map(|k| covered(k * c)).sum::<usize>();
    let mut counts: Vec<usize> = covered_by_count.keys().copied().collect();
    counts.sort_unstable();
    let mut by_support = counts.clone();
    by_support.sort_by_key(|&c| std::cmp::Reverse((support(c), c)));
    let mut by_exact = counts;
    by_exact.sort_by_key(|&c| std::cmp::Reverse((covered(c), c)));
    let mut out: Vec<usize> = by_support.into_iter().take(CANDIDATE_COUNTS).collect();
    for c in by_exact.into_iter().take(EXACT_CANDIDATE_COUNTS) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The anchor for a layer count: of the names occurring `count` times, the one at the most
/// even spacing, then the earliest; with its positions.
fn anchor(tokens: &[u32], counts: &FxHashMap<u32, usize>, count: usize) -> Option<Vec<usize>> {
    let mut positions: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut order: Vec<u32> = Vec::new();
    for (i, &t) in tokens.iter().enumerate() {
        if counts.get(&t) == Some(&count) {
            let p = positions.entry(t).or_insert_with(|| {
                order.push(t);
                Vec::with_capacity(count)
            });
            p.push(i);
        }
    }
    let spread = |p: &[usize]| {
        let gaps = p.windows(2).map(|w| w[1] - w[0]);
        gaps.clone().max().unwrap_or(0) - gaps.min().unwrap_or(0)
    };
    // `order` is by first occurrence, so `min_by_key` keeps the earliest of equal spreads.
    let best = order.into_iter().min_by_key(|t| spread(&positions[t]))?;
    positions.remove(&best)
}

/// The most frequent stretch between consecutive anchors (the first seen on ties).
fn most_frequent<'a>(tokens: &'a [u32], anchors: &[usize]) -> &'a [u32] {
    let mut seen: FxHashMap<&[u32], (usize, usize)> = FxHashMap::default();
    for (k, w) in anchors.windows(2).enumerate() {
        seen.entry(&tokens[w[0]..w[1]]).or_insert((0, k)).0 += 1;
    }
    seen.into_iter().max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1))).map(|(s, _)| s).unwrap_or(&[])
}

/// How many kernels before `at` continue `tail` backwards (its last element first): the length
/// of text taken and of `tail` matched, or (0, 0) when nothing pays.
fn grow_back(seq: Tokens<'_>, lo: usize, at: usize, tail: &[u32], budget: &mut Budget) -> (usize, usize) {
    let text = &seq.tokens[lo..at];
    if text.is_empty() || tail.is_empty() || !budget.take(text.len(), tail.len()) {
        return (0, 0);
    }
    let (t, m) = (text.len(), tail.len());
    let (i, j, score) = extend(t, m, |i, j| Some(seq.extension_score(text[t - 1 - i], tail[m - 1 - j])), EXT_GAP);
    if score > 0 {
        (i, j)
    } else {
        (0, 0)
    }
}

/// Whether `stretch` is a near-repeat of `unit` (see [`NEAR_REPEAT`]); remembered per stretch.
struct Similar<'u> {
    unit: &'u [u32],
    known: FxHashMap<Vec<u32>, bool>,
}

impl Similar<'_> {
    fn check(&mut self, seq: Tokens<'_>, stretch: &[u32], budget: &mut Budget) -> bool {
        if stretch == self.unit {
            return true;
        }
        let (short, long) = (stretch.len().min(self.unit.len()), stretch.len().max(self.unit.len()));
        if long == 0 || (short as f64) < NEAR_REPEAT * long as f64 {
            return false;
        }
        if let Some(&known) = self.known.get(stretch) {
            return known;
        }
        let ok = budget.take(stretch.len(), self.unit.len()) && similarity(seq, stretch, self.unit) >= NEAR_REPEAT;
        self.known.insert(stretch.to_vec(), ok);
        ok
    }
}

/// Share of the longer sequence's kernels that the alignment of `a` and `b` pairs by name.
pub fn similarity(seq: Tokens<'_>, a: &[u32], b: &[u32]) -> f64 {
    let long = a.len().max(b.len());
    if long == 0 {
        return 1.0;
    }
    let steps = align(a.len(), b.len(), |i, j| seq.pair_score(a[i], b[j]), 1, usize::MAX);
    let same = steps.iter().filter(|s| matches!(s, Step::Pair(i, j) if a[*i] == b[*j])).count();
    same as f64 / long as f64
}

/// The layers for one candidate layer count (see the module docs, steps 2–4).
fn with_count(seq: Tokens<'_>, counts: &FxHashMap<u32, usize>, count: usize, budget: &mut Budget) -> Option<Found> {
    let tokens = seq.tokens;
    let anchors = anchor(tokens, counts, count)?;
    let stretch = most_frequent(tokens, &anchors);
    let p = stretch.len();
    if !(MIN_LAYER_KERNELS..=LAYER_MAX_KERNELS).contains(&p) {
        return None;
    }
    // The layer's start: grown back from the first anchor against the stretch's tail. A prologue
    // kernel may pass for the layer's last one by its category; if the first layer then is no
    // repeat, the layer starts at the anchor instead, whichever covers more.
    let first = anchors[0];
    let (taken, before) = grow_back(seq, first.saturating_sub(p), first, &stretch[1..], budget);
    let grown = layers_from(seq, &anchors, stretch, (taken, before), budget);
    let found = match grown {
        Some(f) if before > 0 && f.layers.first().is_none_or(|l| l.start != first - taken) => {
            let plain = layers_from(seq, &anchors, stretch, (0, 0), budget);
            match plain {
                Some(g) if g.covered() > f.covered() => g,
                _ => f,
            }
        }
        Some(f) => f,
        None if before > 0 => layers_from(seq, &anchors, stretch, (0, 0), budget)?,
        None => return None,
    };
    let exact = found.layers.iter().filter(|l| l.exact).count();
    let ok = exact >= 2 && !found.runs.is_empty() && found.covered() as f64 >= MIN_COVERAGE * tokens.len() as f64;
    ok.then_some(found)
}

/// The layers when each starts `before` kernels of the unit ahead of its anchor (the first one
/// `taken` kernels ahead): the unit is the stretch rotated accordingly.
fn layers_from(
    seq: Tokens<'_>,
    anchors: &[usize],
    stretch: &[u32],
    (taken, before): (usize, usize),
    budget: &mut Budget,
) -> Option<Found> {
    let tokens = seq.tokens;
    let n = tokens.len();
    let p = stretch.len();
    let unit: Vec<u32> = stretch[p - before..].iter().chain(&stretch[..p - before]).copied().collect();
    let pre = &stretch[p - before..];
    let mut starts = Vec::with_capacity(anchors.len());
    starts.push(anchors[0] - taken);
    for w in anchors.windows(2) {
        let (prev, at) = (w[0], w[1]);
        let lo = prev + 1;
        let start = if before == 0 {
            at
        } else if at >= lo + before && tokens[at - before..at] == *pre {
            at - before
        } else {
            let lo = lo.max(at.saturating_sub(before + before / 2 + 2));
            at - grow_back(seq, lo, at, pre, budget).0
        };
        starts.push(start);
    }
    let mut similar = Similar { unit: &unit, known: FxHashMap::default() };
    let mut layers: Vec<Layer> = Vec::new();
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut run_start = 0;
    for (k, &a) in starts.iter().enumerate() {
        let next = starts.get(k + 1).copied();
        let limit = next.unwrap_or_else(|| n.min(a + p + p / 2 + 2));
        let whole = &tokens[a..limit];
        let window = &whole[..whole.len().min(p + p / 2 + 2)];
        let layer = if next.is_some() && similar.check(seq, whole, budget) {
            Some(Layer { start: a, end: limit, exact: whole == unit.as_slice() })
        } else if budget.take(p, window.len()) {
            // A layer followed by other kernels (the last of a pass, then its epilogue).
            let (j, _) = fit_prefix(p, window.len(), |i, j| seq.pair_score(unit[i], window[j]), 1);
            let cut = &whole[..j];
            similar.check(seq, cut, budget).then_some(Layer { start: a, end: a + j, exact: cut == unit.as_slice() })
        } else {
            None
        };
        let contiguous = layers.last().is_some_and(|l: &Layer| l.end == a);
        match layer {
            Some(l) if contiguous => layers.push(l),
            Some(l) => {
                close_run(&mut layers, &mut runs, run_start);
                run_start = layers.len();
                layers.push(l);
            }
            None => {
                close_run(&mut layers, &mut runs, run_start);
                run_start = layers.len();
            }
        }
    }
    close_run(&mut layers, &mut runs, run_start);
    (!runs.is_empty()).then_some(Found { unit, layers, runs })
}

/// Ends the run that started at layer `from`: kept as a run if long enough, dropped otherwise.
fn close_run(layers: &mut Vec<Layer>, runs: &mut Vec<Range<usize>>, from: usize) {
    if layers.len() - from >= MIN_LAYERS {
        runs.push(from..layers.len());
    } else {
        layers.truncate(from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Tokens from letters; categories: lowercase letters by the letter's position mod 4.
    fn cats() -> Vec<Category> {
        (0..128u32)
            .map(|t| [Category::Gemm, Category::Norm, Category::Attention, Category::Elementwise][(t % 4) as usize])
            .collect()
    }

    fn toks(s: &str) -> Vec<u32> {
        s.bytes().map(u32::from).collect()
    }

    /// The unit as letters, the layers as (start, end, exact), and the number of runs.
    type Outcome = (String, Vec<(usize, usize, bool)>, usize);

    fn run(s: &str) -> Option<Outcome> {
        let t = toks(s);
        let c = cats();
        let f = find(Tokens { tokens: &t, categories: &c }, &mut Budget::new(1 << 24))?;
        let unit: String = f.unit.iter().map(|&b| b as u8 as char).collect();
        Some((unit, f.layers.iter().map(|l| (l.start, l.end, l.exact)).collect(), f.runs.len()))
    }

    #[test]
    fn plain_repeats_after_a_prologue_and_before_an_epilogue() {
        // Prologue "E", four layers "nqaonmd", epilogue "nLS".
        let (unit, layers, runs) = run("Enqaonmdnqaonmdnqaonmdnqaonmdn LS").unwrap();
        assert_eq!(unit, "nqaonmd");
        assert_eq!(layers.len(), 4);
        assert_eq!(layers[0], (1, 8, true));
        assert_eq!(layers[3], (22, 29, true));
        assert_eq!(runs, 1);
    }

    #[test]
    fn a_first_layer_that_differs_is_a_near_repeat() {
        // The first layer lacks its "c" (no residual add before the first norm).
        let s = "XEnqaomlfdcnqaomlfdcnqaomlfdcnqaomlfdnZ";
        let (unit, layers, _) = run(s).unwrap();
        assert_eq!(layers.len(), 4, "{layers:?}");
        assert_eq!(layers[0].0, 2);
        assert_eq!(layers.iter().filter(|l| l.2).count(), 3, "{layers:?}");
        assert!(unit.starts_with('n'), "{unit}");
    }

    #[test]
    fn alternating_layers_count_one_each() {
        // Layers alternate between one attention kernel "a" and two "bk" (split attention).
        let mut s = String::from("E");
        for l in 0..8 {
            s += if l % 2 == 0 { "nqrao" } else { "nqrbko" };
            s += "mgud";
        }
        s += "nL";
        let (_, layers, runs) = run(&s).unwrap();
        assert_eq!(layers.len(), 8);
        assert_eq!(runs, 1);
    }

    #[test]
    fn several_passes_give_one_run_each() {
        // Twelve layers a pass: the layer covers nearly all, so it wins over the whole pass.
        let pass = format!("PE{}nLS", "nqaomd".repeat(12));
        let s = pass.repeat(3);
        let (unit, layers, runs) = run(&s).unwrap();
        assert_eq!(unit.len(), 6);
        assert_eq!(runs, 3);
        assert_eq!(layers.len(), 36);
        // With four layers a pass, the pass itself is the better-covering unit.
        let pass = format!("PE{}nLS", "nqaomd".repeat(4));
        let (unit, layers, _) = run(&pass.repeat(3)).unwrap();
        assert_eq!((unit.len(), layers.len()), (pass.len(), 3));
    }

    #[test]
    fn no_repeat_no_layer() {
        assert_eq!(run("abcdefghijklmnopqrstuvwxyz"), None);
        assert_eq!(run(""), None);
        assert_eq!(run("aaaa").map(|r| r.1.len()), None, "one-kernel units are not layers");
    }

    /// A random sequence, possibly with a planted repeat.
    fn stream() -> impl Strategy<Value = Vec<u32>> {
        let random = proptest::collection::vec(0u32..12, 0..300);
        let planted = (
            proptest::collection::vec(0u32..40, 2..20),
            2usize..20,
            proptest::collection::vec(0u32..40, 0..10),
            proptest::collection::vec(0u32..40, 0..10),
        )
            .prop_map(|(unit, times, pre, post)| {
                let mut s = pre;
                for _ in 0..times {
                    s.extend(&unit);
                }
                s.extend(post);
                s
            });
        prop_oneof![random, planted]
    }

    proptest! {
        /// Never a panic; a found unit really repeats: at least two exact copies, every layer a
        /// near-repeat of it, layers disjoint and in order, runs contiguous and long enough.
        #[test]
        fn found_layers_really_repeat(t in stream(), shuffle_seed in any::<u64>(), shuffle: bool) {
            let mut t = t;
            if shuffle {
                // A deterministic shuffle: a layer structure must not survive it by accident
                // without still repeating.
                let mut x = shuffle_seed | 1;
                for i in (1..t.len()).rev() {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    t.swap(i, (x % (i as u64 + 1)) as usize);
                }
            }
            let c = cats();
            let seq = Tokens { tokens: &t, categories: &c };
            if let Some(f) = find(seq, &mut Budget::new(1 << 22)) {
                prop_assert!(f.unit.len() >= MIN_LAYER_KERNELS);
                let exact = f.layers.iter().filter(|l| l.exact).count();
                prop_assert!(exact >= 2);
                for w in f.layers.windows(2) {
                    prop_assert!(w[0].end <= w[1].start);
                }
                for l in &f.layers {
                    let s = &t[l.start..l.end];
                    prop_assert_eq!(l.exact, s == f.unit.as_slice());
                    prop_assert!(similarity(seq, s, &f.unit) >= NEAR_REPEAT);
                }
                for r in &f.runs {
                    prop_assert!(r.len() >= MIN_LAYERS);
                    for k in r.start + 1..r.end {
                        prop_assert_eq!(f.layers[k - 1].end, f.layers[k].start);
                    }
                }
                prop_assert_eq!(f.runs.iter().map(|r| r.len()).sum::<usize>(), f.layers.len());
                prop_assert!(f.covered() as f64 >= MIN_COVERAGE * t.len() as f64);
            }
        }

        /// A planted unit of distinct kernels repeated three times or more is found, with at
        /// least as many layers as planted copies minus the ones a prologue may blur.
        #[test]
        fn planted_units_are_found(len in 3usize..12, times in 3usize..30, pre in 0usize..4) {
            let unit: Vec<u32> = (0..len as u32).collect();
            let mut t: Vec<u32> = (100..100 + pre as u32).collect();
            for _ in 0..times { t.extend(&unit); }
            t.push(99);
            let c = cats();
            let f = find(Tokens { tokens: &t, categories: &c }, &mut Budget::new(1 << 22));
            let f = f.expect("planted unit found");
            prop_assert!(f.layers.len() + 1 >= times && f.layers.len() <= times, "{} of {}", f.layers.len(), times);
            prop_assert_eq!(f.unit.len(), len);
        }
    }
}
