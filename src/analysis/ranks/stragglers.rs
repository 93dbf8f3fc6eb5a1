//! Stragglers: the ranks the others wait for (`docs/ranks.md`, "Stragglers"). In each matched
//! collective the last rank to arrive (latest aligned start) makes every other rank wait; the
//! ranks are ranked by the wait they cause in all, with the work that made them late: their
//! lead-in (time since their previous collective ended) and computation in it, beside the
//! other ranks' mean over the same collectives.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::summary::round3;

/// One rank that arrived last at some collective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    pub rank: u32,
    /// Sum, over the collectives it arrived last at, of every other rank's wait.
    pub caused_wait_us: f64,
    pub late_collectives: usize,
    /// Its lead-in before those collectives, in all, and the other ranks' mean lead-in in all.
    pub lead_in_us: f64,
    pub others_lead_in_us: f64,
    /// Its computation in those lead-ins, and the other ranks' mean; `None` where a rank's
    /// computation spans were too many to keep.
    pub compute_before_us: Option<f64>,
    pub others_compute_before_us: Option<f64>,
}

/// One rank's arrival at a collective, aligned to the reference clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    pub rank: u32,
    pub start_us: f64,
    pub lead_in_us: f64,
    pub compute_before_us: Option<f64>,
}

#[derive(Default)]
struct Tally {
    caused: f64,
    late: usize,
    lead: f64,
    others_lead: f64,
    compute: Option<f64>,
    others_compute: Option<f64>,
}

/// The stragglers over all matched collectives (each given as its ranks' arrivals), most
/// wait caused first (ties: lowest rank). A collective with one rank, or whose ranks all
/// arrived at once, has no straggler; of ranks tied for last, the lowest is counted.
pub fn stragglers<'a>(collectives: impl Iterator<Item = &'a [Arrival]>) -> Vec<Straggler> {
    let mut tallies: BTreeMap<u32, Tally> = BTreeMap::new();
    for arrivals in collectives {
        if arrivals.len() < 2 {
            continue;
        }
        let last = arrivals
            .iter()
            .copied()
            .reduce(|a, b| if b.start_us > a.start_us || (b.start_us == a.start_us && b.rank < a.rank) { b } else { a })
            .expect("two arrivals");
        let caused: f64 = arrivals.iter().map(|a| last.start_us - a.start_us).sum();
        if caused <= 0.0 {
            continue;
        }
        let others = arrivals.iter().filter(|a| a.rank != last.rank);
        let n = (arrivals.len() - 1) as f64;
        let others_lead = others.clone().map(|a| a.lead_in_us).sum::<f64>() / n;
        let others_compute = others.map(|a| a.compute_before_us).sum::<Option<f64>>().map(|c| c / n);
        let t = tallies.entry(last.rank).or_insert_with(|| Tally {
            compute: Some(0.0),
            others_compute: Some(0.0),
            ..Tally::default()
        });
        t.caused += caused;
        t.late += 1;
        t.lead += last.lead_in_us;
        t.others_lead += others_lead;
        t.compute = t.compute.zip(last.compute_before_us).map(|(a, b)| a + b);
        t.others_compute = t.others_compute.zip(others_compute).map(|(a, b)| a + b);
    }
    let mut out: Vec<Straggler> = tallies
        .into_iter()
        .map(|(rank, t)| Straggler {
            rank,
            caused_wait_us: round3(t.caused),
            late_collectives: t.late,
            lead_in_us: round3(t.lead),
            others_lead_in_us: round3(t.others_lead),
            compute_before_us: t.compute.map(round3),
            others_compute_before_us: t.others_compute.map(round3),
        })
        .collect();
    out.sort_by(|a, b| b.caused_wait_us.total_cmp(&a.caused_wait_us).then(a.rank.cmp(&b.rank)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rank: u32, start_us: f64, lead_in_us: f64, compute: f64) -> Arrival {
        Arrival { rank, start_us, lead_in_us, compute_before_us: Some(compute) }
    }

    #[test]
    fn the_last_to_arrive_is_charged_every_others_wait() {
        let c1 = [at(0, 10.0, 10.0, 9.0), at(1, 30.0, 30.0, 29.0), at(2, 12.0, 12.0, 11.0)];
        let c2 = [at(0, 50.0, 5.0, 4.0), at(1, 48.0, 3.0, 2.0), at(2, 50.0, 5.0, 4.0)];
        let c3 = [at(0, 70.0, 1.0, 1.0)];
        let s = stragglers([&c1[..], &c2[..], &c3[..]].into_iter());
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].rank, s[0].caused_wait_us, s[0].late_collectives), (1, 38.0, 1));
        assert_eq!((s[0].lead_in_us, s[0].others_lead_in_us), (30.0, 11.0));
        assert_eq!((s[0].compute_before_us, s[0].others_compute_before_us), (Some(29.0), Some(10.0)));
        // Ranks 0 and 2 tie last at c2: the lowest is charged 2 µs (rank 1's wait; rank 2 waits 0).
        assert_eq!((s[1].rank, s[1].caused_wait_us), (0, 2.0));
    }
}
