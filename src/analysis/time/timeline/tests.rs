use super::*;
use proptest::prelude::*;

fn brute_within(spans: &[(f64, f64)], lo: f64, hi: f64) -> f64 {
    // Length of the union inside [lo, hi] on a 0.5-µs grid (the test spans are on it).
    let mut t = lo;
    let mut total = 0.0;
    while t < hi {
        if spans.iter().any(|&(s, e)| s <= t && t + 0.5 <= e) {
            total += 0.5;
        }
        t += 0.5;
    }
    total
}

proptest! {
    #[test]
    fn union_within_and_minus_agree_with_a_brute_force_count(
        raw in prop::collection::vec((0u32..200, 1u32..40), 0..40),
        other in prop::collection::vec((0u32..200, 1u32..40), 0..40),
        lo in 0u32..250, len in 0u32..250, hint in 0usize..50,
    ) {
        let spans: Vec<(f64, f64)> = raw.iter().map(|&(s, l)| (s as f64 * 0.5, (s + l) as f64 * 0.5)).collect();
        let others: Vec<(f64, f64)> = other.iter().map(|&(s, l)| (s as f64 * 0.5, (s + l) as f64 * 0.5)).collect();
        let (lo, hi) = (lo as f64 * 0.5, (lo + len) as f64 * 0.5);
        let u = Intervals::union(spans.clone());
        prop_assert!((u.within(lo, hi) - brute_within(&spans, lo, hi)).abs() < 1e-9);
        // Searched from any place, the same.
        let mut from = hint;
        prop_assert_eq!(u.within_from(lo, hi, &mut from), u.within(lo, hi));
        prop_assert!((u.length() - brute_within(&spans, 0.0, 200.0)).abs() < 1e-9);
        let o = Intervals::union(others.clone());
        let d = u.minus(&o);
        // |A \ B| = |A ∪ B| − |B|.
        let both: Vec<(f64, f64)> = spans.iter().chain(&others).copied().collect();
        prop_assert!((d.length() - (brute_within(&both, 0.0, 200.0) - o.length())).abs() < 1e-9);
    }
}

proptest! {
    #[test]
    fn a_streamed_union_in_any_order_has_the_union_length(
        raw in prop::collection::vec((0u32..400, 0u32..40), 0..200),
    ) {
        let spans: Vec<(f64, f64)> = raw.iter().map(|&(s, l)| (s as f64 * 0.5, (s + l) as f64 * 0.5)).collect();
        let mut streamed = StreamedUnion::with_cap(1 << 10);
        for &(s, e) in &spans {
            streamed.add(s, e);
        }
        let whole = Intervals::union(spans.clone());
        prop_assert_eq!(streamed.length(), whole.length());
        prop_assert_eq!(streamed.bounds().map(|b| b.0), whole.first_start());
        prop_assert_eq!(streamed.bounds().map(|b| b.1), whole.last_end());
        prop_assert_eq!(streamed.late(), 0);
    }

    #[test]
    fn a_small_streamed_union_is_exact_on_time_ordered_spans(
        raw in prop::collection::vec((0u32..6, 1u32..8), 0..300),
    ) {
        // Start-ordered spans (gaps and overlaps): retiring never loses anything.
        let mut at = 0u32;
        let spans: Vec<(f64, f64)> = raw.iter().map(|&(gap, l)| { at += gap; (at as f64, (at + l) as f64) }).collect();
        let mut streamed = StreamedUnion::with_cap(4);
        for &(s, e) in &spans {
            streamed.add(s, e);
            prop_assert!(streamed.held() <= 4);
        }
        prop_assert_eq!(streamed.late(), 0);
        prop_assert!((streamed.length() - Intervals::union(spans).length()).abs() < 1e-9);
    }
}

#[test]
fn a_span_reaching_before_the_retired_ones_is_clipped_and_counted_late() {
    let mut u = StreamedUnion::with_cap(2);
    for s in [0.0, 10.0, 20.0] {
        u.add(s, s + 5.0);
    }
    // (0, 5) was retired when the third span came: (3, 8) keeps only (5, 8); (1, 2) is lost.
    assert_eq!((u.held(), u.length()), (2, 15.0));
    u.add(3.0, 8.0);
    u.add(1.0, 2.0);
    assert_eq!(u.late(), 2);
    assert_eq!(u.length(), 18.0);
    assert_eq!(u.bounds(), Some((0.0, 25.0)));
}

/// The busy time the timelines hand on is each device's union of all its events, the
/// same as merging them afresh: kernels of two devices, one overlapping another, a copy
/// and a set.
#[test]
fn the_timelines_busy_time_is_every_event_merged() {
    use crate::summary::ClassifiedTrace;
    use classify::Classification;
    use trace::{Kernel, Transfer};
    let mut t = Trace::default();
    let name = t.names.intern("k");
    for (device, ts, dur) in [(0, 0.0, 10.0), (0, 5.0, 10.0), (0, 40.0, 5.0), (3, 2.0, 1.0)] {
        let stream = 7;
        t.kernels.push(Kernel {
            name,
            ts,
            dur,
            device,
            stream,
            correlation: None,
            external_id: None,
            graph_node: false,
        });
    }
    for (kind, ts) in [(TransferKind::Memcpy, 20.0), (TransferKind::Memset, 44.0)] {
        t.transfers.push(Transfer {
            name,
            device: 0,
            stream: Some(7),
            ts,
            dur: 3.0,
            kind,
            bytes: None,
            correlation: None,
            external_id: None,
        });
    }
    let other = |_: &str| Classification { category: Category::Other, components: vec![Category::Other], rule: None };
    let (timelines, busy) = timelines_and_busy(&ClassifiedTrace::with_classifier(&t, &other));
    assert_eq!(timelines.len(), 2);
    assert_eq!(busy, DeviceBusy::of(&t));
    assert_eq!(busy.device(0).unwrap().spans, [(0.0, 15.0), (20.0, 23.0), (40.0, 47.0)]);
}

#[test]
fn exposed_communication_is_what_computation_does_not_cover() {
    let comp = Intervals::union(vec![(0.0, 10.0), (20.0, 30.0)]);
    let comm = Intervals::union(vec![(5.0, 25.0)]);
    let exposed = comm.minus(&comp);
    assert_eq!(exposed.spans, vec![(10.0, 20.0)]);
    assert_eq!(exposed.within(0.0, 15.0), 5.0);
}
