//! Clock offsets between ranks, estimated from collective ends (`docs/ranks.md`, "Clocks").
//!
//! Each rank's trace times come from its own host's clock; on different hosts they may be
//! offset by microseconds to seconds. A synchronising collective (all-reduce, all-gather,
//! reduce-scatter, broadcast, all-to-all) ends on every rank at nearly the same moment (its
//! last data arrives everywhere together), so the offset of rank r from the reference rank is
//! the median, over their shared collectives, of `end_r − end_ref`. Point-to-point kernels
//! (send/recv) do not end together and are used only when a pair shares nothing else.

use serde::{Deserialize, Serialize};

use super::collectives::CollectiveKind;

/// Ends farther apart than this after alignment say the collectives did not end together, or
/// the match is wrong: a note says so.
pub const END_TOLERANCE_US: f64 = 100.0;
/// An offset at least this large is named in a note (times are aligned whatever its size).
pub const NOTED_OFFSET_US: f64 = 1_000.0;
/// Clocks this far apart (10 s) are said to be far apart: files of different jobs look so.
pub const FAR_APART_US: f64 = 10_000_000.0;

/// One rank's clock against the reference rank's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Subtract from this rank's times to get the reference rank's clock.
    pub offset_us: f64,
    /// Collective ends the estimate rests on (0: none shared, offset 0).
    pub from_collectives: usize,
    /// Largest |end_r − end_ref − offset| over them: how well the ends agree after alignment.
    pub max_residual_us: f64,
    /// Only point-to-point kernels were shared (they do not end together: a rough estimate).
    pub point_to_point: bool,
}

/// Whether a kind's kernels end together on every rank.
pub fn synchronising(kind: CollectiveKind) -> bool {
    !matches!(kind, CollectiveKind::SendRecv | CollectiveKind::Send | CollectiveKind::Recv | CollectiveKind::Other)
}

/// The offset from end pairs `(kind, end_r, end_ref)` of the collectives a rank shares with the
/// reference rank.
pub fn estimate(pairs: &[(CollectiveKind, f64, f64)]) -> ClockOffset {
    let sync: Vec<f64> = pairs.iter().filter(|p| synchronising(p.0)).map(|p| p.1 - p.2).collect();
    let (diffs, point_to_point) = if sync.is_empty() && !pairs.is_empty() {
        (pairs.iter().map(|p| p.1 - p.2).collect::<Vec<f64>>(), true)
    } else {
        (sync, false)
    };
    let Some(offset) = median(&diffs) else {
        return ClockOffset { offset_us: 0.0, from_collectives: 0, max_residual_us: 0.0, point_to_point: false };
    };
    let max_residual = diffs.iter().map(|d| (d - offset).abs()).fold(0.0, f64::max);
    ClockOffset { offset_us: offset, from_collectives: diffs.len(), max_residual_us: max_residual, point_to_point }
}

/// The median (the mean of the middle two for an even count); `None` for no values.
fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollectiveKind::*;

    #[test]
    fn the_median_of_synchronising_ends_wins_over_outliers_and_point_to_point() {
        let pairs =
            [(AllReduce, 105.0, 5.0), (AllReduce, 210.0, 110.0), (AllGather, 400.0, 290.0), (SendRecv, 0.0, 900.0)];
        let c = estimate(&pairs);
        assert_eq!((c.offset_us, c.from_collectives, c.max_residual_us, c.point_to_point), (100.0, 3, 10.0, false));
        let p2p = estimate(&[(SendRecv, 10.0, 4.0), (SendRecv, 30.0, 20.0)]);
        assert_eq!((p2p.offset_us, p2p.point_to_point), (8.0, true));
        assert_eq!(estimate(&[]).from_collectives, 0);
    }
}
