//! Global sequence alignment (Needleman–Wunsch) of two sequences under a caller's scoring,
//! restricted to a band around the diagonal when the full table would be too large, so that
//! aligning the op or kernel sequences of two long traces stays linear in their length.

/// One column of an alignment: an element of each side, or of one side against a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Pair(usize, usize),
    OnlyA(usize),
    OnlyB(usize),
}

const DIAG: u8 = 1;
const UP: u8 = 2;
const LEFT: u8 = 3;
const NEG: i64 = i64::MIN / 4;

/// Aligns `a` (length `n`) with `b` (length `m`) maximising the sum of `score(i, j)` over
/// paired elements minus `gap` per unpaired element. `score` returns `None` for elements that
/// must not be paired. At most about `max_cells` table cells are used: beyond that the search
/// keeps to a band around the diagonal (wide enough to follow any length difference).
pub fn align(n: usize, m: usize, score: impl Fn(usize, usize) -> Option<i64>, gap: i64, max_cells: usize) -> Vec<Step> {
    if n == 0 || m == 0 {
        return (0..n).map(Step::OnlyA).chain((0..m).map(Step::OnlyB)).collect();
    }
    let full = (n + 1).saturating_mul(m + 1) <= max_cells;
    // Half-width of the band around the diagonal line j = i·m/n.
    let w = if full {
        m + 1
    } else {
        let step = m.div_ceil(n) + 2;
        (max_cells / (n + 1) / 2).max(step).max(32)
    };
    let center = |i: usize| ((i as u128 * m as u128) / n as u128) as usize;
    let lo = |i: usize| center(i).saturating_sub(w);
    let hi = |i: usize| (center(i) + w).min(m);
    let width = 2 * w + 2;
    let mut dirs = vec![0u8; (n + 1) * width];
    let mut prev = vec![NEG; width];
    let mut cur = vec![NEG; width];
    // Row 0: only gaps in a.
    for j in lo(0)..=hi(0) {
        prev[j - lo(0)] = -(j as i64) * gap;
        dirs[j - lo(0)] = LEFT;
    }
    for i in 1..=n {
        let (l, h, pl, ph) = (lo(i), hi(i), lo(i - 1), hi(i - 1));
        let prev_at = |prev: &[i64], j: usize| if j >= pl && j <= ph { prev[j - pl] } else { NEG };
        for j in l..=h {
            let mut best = NEG;
            let mut dir = 0;
            if j > 0 {
                if let Some(s) = score(i - 1, j - 1) {
                    let d = prev_at(&prev, j - 1);
                    if d > NEG {
                        best = d + s;
                        dir = DIAG;
                    }
                }
            }
            let up = prev_at(&prev, j);
            if up > NEG && up - gap > best {
                best = up - gap;
                dir = UP;
            }
            if j > l {
                let left = cur[j - 1 - l];
                if left > NEG && left - gap > best {
                    best = left - gap;
                    dir = LEFT;
                }
            }
            cur[j - l] = best;
            dirs[i * width + (j - l)] = dir;
        }
        std::mem::swap(&mut prev, &mut cur);
        cur.fill(NEG);
    }
    // Trace back from (n, m).
    let mut steps = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let dir = if j >= lo(i) && j <= hi(i) { dirs[i * width + (j - lo(i))] } else { 0 };
        match dir {
            DIAG => {
                steps.push(Step::Pair(i - 1, j - 1));
                i -= 1;
                j -= 1;
            }
            UP => {
                steps.push(Step::OnlyA(i - 1));
                i -= 1;
            }
            LEFT if j > 0 => {
                steps.push(Step::OnlyB(j - 1));
                j -= 1;
            }
            // Outside the band (cannot happen with the widths above): finish with gaps.
            _ => {
                if i > 0 {
                    steps.push(Step::OnlyA(i - 1));
                    i -= 1;
                } else {
                    steps.push(Step::OnlyB(j - 1));
                    j -= 1;
                }
            }
        }
    }
    steps.reverse();
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_eq<'a>(a: &'a [u8], b: &'a [u8]) -> impl Fn(usize, usize) -> Option<i64> + 'a {
        move |i, j| (a[i] == b[j]).then_some(2)
    }

    #[test]
    fn aligns_with_gaps() {
        let (a, b) = (b"abcd", b"abxcd");
        let s = align(4, 5, by_eq(a, b), 1, usize::MAX);
        assert_eq!(s, vec![Step::Pair(0, 0), Step::Pair(1, 1), Step::OnlyB(2), Step::Pair(2, 3), Step::Pair(3, 4)]);
        assert_eq!(align(2, 0, by_eq(a, b), 1, 100), vec![Step::OnlyA(0), Step::OnlyA(1)]);
    }

    #[test]
    fn banded_matches_full_on_similar_sequences() {
        let a: Vec<u8> = (0..3000).map(|i| (i % 7) as u8).collect();
        let mut b = a.clone();
        b.remove(1500);
        b.insert(10, 9);
        let full = align(a.len(), b.len(), by_eq(&a, &b), 1, usize::MAX);
        let banded = align(a.len(), b.len(), by_eq(&a, &b), 1, 200_000);
        let pairs = |s: &[Step]| s.iter().filter(|x| matches!(x, Step::Pair(..))).count();
        assert_eq!(pairs(&banded), pairs(&full));
        assert_eq!(pairs(&full), 2999);
    }

    proptest! {
        /// Every element of both sides appears exactly once, in order, and pairs are allowed.
        #[test]
        fn alignment_is_a_valid_merge(a in proptest::collection::vec(0u8..4, 0..60),
                                      b in proptest::collection::vec(0u8..4, 0..60),
                                      cells in 1usize..5000) {
            let s = align(a.len(), b.len(), by_eq(&a, &b), 1, cells);
            let (mut ia, mut ib) = (0, 0);
            for step in s {
                match step {
                    Step::Pair(i, j) => { prop_assert_eq!((i, j), (ia, ib)); prop_assert_eq!(a[i], b[j]); ia += 1; ib += 1; }
                    Step::OnlyA(i) => { prop_assert_eq!(i, ia); ia += 1; }
                    Step::OnlyB(j) => { prop_assert_eq!(j, ib); ib += 1; }
                }
            }
            prop_assert_eq!((ia, ib), (a.len(), b.len()));
        }
    }
}
