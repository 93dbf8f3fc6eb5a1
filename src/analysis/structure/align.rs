//! Global sequence alignment (Needleman–Wunsch) of two sequences under a caller's scoring,
//! restricted to a band around the diagonal when the full table would be too large, so that
//! aligning the op or kernel sequences of two long traces stays linear in their length; and
//! three small relatives for short sequences (decoder layers of a few hundred kernels): an
//! extension that stops where a match stops paying ([`extend`]), a fit of a pattern at the start
//! of a text ([`fit_prefix`]) and the best rotation of a cyclic sequence ([`best_rotation`]).

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

/// How far an alignment of `a[..i]` against `b[..j]` that starts at both beginnings can go
/// before it stops paying: the end `(i, j)` with the best score (pairs scored by `score`, gaps
/// cost `gap`), and that score; `(0, 0, 0)` when no extension scores above zero. Used to grow a
/// match outwards from a known anchor (read backwards by the caller), where what lies beyond
/// the match is unrelated and must not be forced into the alignment. Costs `n · m` cells.
pub fn extend(n: usize, m: usize, score: impl Fn(usize, usize) -> Option<i64>, gap: i64) -> (usize, usize, i64) {
    let mut best = (0, 0, 0);
    score_rows(n, m, score, gap, |i, j, v| {
        if v > best.2 {
            best = (i, j, v);
        }
    });
    best
}

/// The global-alignment scores of `a[..i]` against `b[..j]` for every `i ≤ n`, `j ≤ m`, computed
/// row by row in two rows of memory (pairs scored by `score`, gaps cost `gap`): calls
/// `cell(i, j, score)` for each inner cell and returns the last row.
fn score_rows(
    n: usize,
    m: usize,
    score: impl Fn(usize, usize) -> Option<i64>,
    gap: i64,
    mut cell: impl FnMut(usize, usize, i64),
) -> Vec<i64> {
    let mut prev: Vec<i64> = (0..=m).map(|j| -(j as i64) * gap).collect();
    let mut cur = vec![NEG; m + 1];
    for i in 1..=n {
        cur[0] = -(i as i64) * gap;
        for j in 1..=m {
            let mut v = (prev[j] - gap).max(cur[j - 1] - gap);
            if let Some(s) = score(i - 1, j - 1) {
                v = v.max(prev[j - 1] + s);
            }
            cur[j] = v;
            cell(i, j, v);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev
}

/// Where `pattern` (length `n`, every element aligned or gapped) fits best at the start of a
/// text (length `m`) whose end is free: the text length `j` that maximises the global alignment
/// score of the pattern against `text[..j]`, with that score. The first such `j` wins ties, so
/// the fit takes no more text than it needs. Costs `n · m` cells.
pub fn fit_prefix(n: usize, m: usize, score: impl Fn(usize, usize) -> Option<i64>, gap: i64) -> (usize, i64) {
    let prev = score_rows(n, m, score, gap, |_, _, _| {});
    let mut best = (0, prev[0]);
    for (j, &v) in prev.iter().enumerate() {
        if v > best.1 {
            best = (j, v);
        }
    }
    best
}

/// The rotation `r` of a cyclic sequence `b` (length `m`) under which `a` (length `n`) aligns
/// best: `a` is aligned against any stretch of `b` written twice (`b b`), ends free, and the
/// rotation is where the best stretch starts. Two repeating units (decoder layers) found on
/// two traces may start at different kernels; this finds the shift in `n · 2m` cells instead of
/// trying all `m` rotations. Ties go to the smallest rotation.
pub fn best_rotation(n: usize, m: usize, score: impl Fn(usize, usize) -> Option<i64>, gap: i64) -> usize {
    if n == 0 || m == 0 {
        return 0;
    }
    let w = 2 * m;
    // Row 0: starting anywhere in `b b` is free; each cell remembers where its path started.
    let mut prev: Vec<(i64, usize)> = (0..=w).map(|j| (0, j)).collect();
    let mut cur: Vec<(i64, usize)> = vec![(NEG, 0); w + 1];
    for i in 1..=n {
        cur[0] = (-(i as i64) * gap, 0);
        for j in 1..=w {
            let mut v = (prev[j].0 - gap, prev[j].1);
            let left = (cur[j - 1].0 - gap, cur[j - 1].1);
            if left.0 > v.0 || (left.0 == v.0 && left.1 < v.1) {
                v = left;
            }
            if let Some(s) = score(i - 1, (j - 1) % m) {
                let d = (prev[j - 1].0 + s, prev[j - 1].1);
                if d.0 > v.0 || (d.0 == v.0 && d.1 <= v.1) {
                    v = d;
                }
            }
            cur[j] = v;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let mut best = (NEG, usize::MAX);
    for &(v, start) in &prev[1..] {
        let r = start % m;
        if v > best.0 || (v == best.0 && r < best.1) {
            best = (v, r);
        }
    }
    if best.1 == usize::MAX {
        0
    } else {
        best.1
    }
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

    #[test]
    fn extension_stops_where_the_match_stops_paying() {
        // "abc" then unrelated text against "abx…": the best end is after "ab".
        let (a, b) = (b"abqqq", b"abxyz");
        assert_eq!(extend(5, 5, by_eq(a, b), 1), (2, 2, 4));
        // A missing element is bridged when the match goes on after it.
        let (a, b) = (b"acd", b"abcd");
        assert_eq!(extend(3, 4, by_eq(a, b), 1), (3, 4, 5));
        assert_eq!(extend(2, 2, by_eq(b"xy", b"ab"), 1), (0, 0, 0));
    }

    #[test]
    fn prefix_fit_takes_as_much_text_as_the_pattern_needs() {
        let (p, t) = (b"abcd", b"abcdabcd");
        assert_eq!(fit_prefix(4, 8, by_eq(p, t), 1), (4, 8));
        // One element missing from the text: the fit still ends after "d".
        let (p, t) = (b"abcd", b"abdxxxx");
        assert_eq!(fit_prefix(4, 7, by_eq(p, t), 1).0, 3);
    }

    #[test]
    fn rotation_is_found_in_the_doubled_sequence() {
        let a = b"abcdef";
        let b = b"defabc";
        assert_eq!(best_rotation(6, 6, by_eq(a, b), 1), 3);
        assert_eq!(best_rotation(6, 6, by_eq(a, a), 1), 0);
        assert_eq!(best_rotation(0, 3, by_eq(a, b), 1), 0);
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
