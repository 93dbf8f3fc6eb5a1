//! Finding a place in a sorted list of events, starting from a guess of where it is.
//!
//! The analyses look events up in the order they happened, and launch calls up by ids that the
//! runtime counted: each lookup lands near a place known beforehand (where the last one
//! landed, or where an even spread of the ids puts it). Stepping out from there by doubling and
//! then searching the bracket costs a few steps when the guess is close, where a binary search
//! over the whole list takes its full depth, a cache miss at most of them; a far guess costs at
//! most about twice a binary search.

/// The index of the first item for which `pred` is false, as [`slice::partition_point`] gives
/// it (`items` partitioned: `pred` true, then false), searched from `guess` outwards.
pub fn partition_point_from<T>(items: &[T], guess: usize, pred: impl Fn(&T) -> bool) -> usize {
    let Some(last) = items.len().checked_sub(1) else { return 0 };
    let guess = guess.min(last);
    // The answer lies in `lo..=hi`.
    let (mut lo, mut hi) = (0, items.len());
    let mut step = 1;
    if pred(&items[guess]) {
        lo = guess + 1;
        while guess + step < items.len() {
            if !pred(&items[guess + step]) {
                hi = guess + step;
                break;
            }
            lo = guess + step + 1;
            step *= 2;
        }
    } else {
        hi = guess;
        while step <= guess {
            if pred(&items[guess - step]) {
                lo = guess - step + 1;
                break;
            }
            hi = guess - step;
            step *= 2;
        }
    }
    lo + items[lo..hi].partition_point(pred)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// From any guess, in or past the list, the place is the one a binary search finds.
        #[test]
        fn finds_what_a_binary_search_finds(
            mut items in proptest::collection::vec(0u32..50, 0..80),
            guess in 0usize..100,
            below in 0u32..52,
        ) {
            items.sort_unstable();
            prop_assert_eq!(partition_point_from(&items, guess, |&x| x < below), items.partition_point(|&x| x < below));
        }
    }
}
