//! The overview of a job's ranks: a verdict on the slowest rank, then findings ranked by the
//! time they explain, as a trace's and a pair's: the ranks the others waited for, the
//! collective that kept them waiting longest, exposed communication, and idle time.

use super::{rank, Evidence, Finding, FindingKind, Overview, Verdict, VerdictSide};
use crate::ranks::job::{JobReport, MatchedCollective, RankEntry};
use crate::ranks::stragglers::Straggler;
use trace::platform::Processor;
use units::{format_duration_us, plural};

/// Stragglers named at most: past the second, the stragglers table lists them.
const STRAGGLERS: usize = 2;

/// The overview of `r`: the verdict gives the job's span, the rank the others waited for
/// longest (where one did) and the range of the ranks' busy time; the findings are ranked by
/// the time each explains.
pub fn ranks_overview(r: &JobReport) -> Overview {
    let timelines = || r.ranks.iter().filter_map(|e| e.timeline.as_ref());
    let span = timelines().map(|t| t.total_us).fold(0.0_f64, f64::max);
    let busy = timelines().map(|t| t.busy_us);
    let (low, high) = busy.fold((f64::INFINITY, 0.0_f64), |(lo, hi), b| (lo.min(b), hi.max(b)));
    let world = r.world_size.map_or_else(|| "world size unknown".to_string(), |w| format!("world size {w}"));
    let given = plural(r.ranks.len() as u64, "rank", "ranks");
    let mut text = format!("{given} of one job ({world}) over {}", format_duration_us(span));
    text += &match r.stragglers.first() {
        Some(s) => format!(
            ": the others wait longest for rank {} ({} in all, at {} {})",
            s.rank,
            format_duration_us(s.caused_wait_us),
            s.late_collectives,
            if s.late_collectives == 1 { "collective" } else { "collectives" }
        ),
        None if r.ranks.len() < 2 => ": one rank alone has no other to keep waiting".to_string(),
        None => ": no rank kept the others waiting".to_string(),
    };
    let processor = r.processor();
    if high > 0.0 {
        text += &match (high - low).abs() < 0.0005 {
            true => format!("; each {processor} busy {}", format_duration_us(high)),
            false => format!("; {processor}s busy {} to {}", format_duration_us(low), format_duration_us(high)),
        };
    }
    let waited_for = r.stragglers.first().and_then(|s| r.ranks.iter().find(|e| e.rank == s.rank));
    let longest = r.ranks.iter().reduce(|best, e| if span_of(e) > span_of(best) { e } else { best });
    let sides: Vec<VerdictSide> = waited_for.or(longest).map(side).into_iter().collect();
    let mut candidates: Vec<Finding> = r.stragglers.iter().take(STRAGGLERS).map(straggler).collect();
    candidates.extend(longest_wait(r));
    candidates.extend(exposed_communication(r));
    candidates.extend(longest.and_then(idle));
    Overview { verdict: Verdict { text, sides }, findings: rank(candidates) }
}

fn span_of(e: &RankEntry) -> f64 {
    e.timeline.as_ref().map_or(0.0, |t| t.total_us)
}

fn side(e: &RankEntry) -> VerdictSide {
    VerdictSide {
        key: format!("rank{}", e.rank),
        name: format!("rank {}", e.rank),
        gpu_time_us: e.timeline.as_ref().map_or(0.0, |t| t.busy_us),
        span_us: e.timeline.as_ref().map(|t| t.total_us),
        busy_us: e.timeline.as_ref().map(|t| t.busy_us),
        idle_us: e.timeline.as_ref().map(|t| t.idle_us),
        processor: e.timeline.as_ref().map_or(Processor::Gpu, |t| t.processor()),
    }
}

/// "Rank 1 arrived last at 7 collectives: the other ranks waited 380.06 ms for it in all; its
/// lead-in before them was 525.58 ms against their 213.40 ms".
fn straggler(s: &Straggler) -> Finding {
    let compute = match (s.compute_before_us, s.others_compute_before_us) {
        (Some(own), Some(others)) => {
            format!(", {} of it computation against their {}", format_duration_us(own), format_duration_us(others))
        }
        _ => String::new(),
    };
    Finding {
        kind: FindingKind::Straggler,
        time_us: s.caused_wait_us,
        text: format!(
            "Rank {} arrived last at {} {}: the other ranks waited {} for it in all; its lead-in before them was {} against their {}{compute}",
            s.rank,
            s.late_collectives,
            if s.late_collectives == 1 { "collective" } else { "collectives" },
            format_duration_us(s.caused_wait_us),
            format_duration_us(s.lead_in_us),
            format_duration_us(s.others_lead_in_us),
        ),
        evidence: Evidence::Ranks,
    }
}

/// The collective the ranks waited at longest, summed over its ranks.
fn longest_wait(r: &JobReport) -> Option<Finding> {
    let waited = |c: &MatchedCollective| c.wait_us.values().sum::<f64>();
    // The first of the longest, in time order: a job's steps repeat the same wait.
    let c = r.collectives.iter().reduce(|best, c| if waited(c) > waited(best) { c } else { best })?;
    let last = c.last_rank.map(|l| format!(" for rank {l}")).unwrap_or_default();
    Some(Finding {
        kind: FindingKind::CollectiveWait,
        time_us: waited(c),
        text: format!(
            "{} #{} of group {} kept its ranks waiting {} in all{last}: they started {} apart",
            c.kind.label(),
            c.seq,
            c.group,
            format_duration_us(waited(c)),
            format_duration_us(c.start_skew_us)
        ),
        evidence: Evidence::Ranks,
    })
}

/// The rank whose busiest device spent most time in communication no computation hid.
fn exposed_communication(r: &JobReport) -> Option<Finding> {
    let exposed = |e: &RankEntry| e.timeline.as_ref().map_or(0.0, |t| t.exposed_communication_us);
    let e = r.ranks.iter().reduce(|best, e| if exposed(e) > exposed(best) { e } else { best })?;
    let t = e.timeline.as_ref()?;
    Some(Finding {
        kind: FindingKind::ExposedCommunication,
        time_us: t.exposed_communication_us,
        text: format!(
            "Rank {} spends {} in communication that no computation overlaps ({:.1} % of its {} span; {} of communication in all)",
            e.rank,
            format_duration_us(t.exposed_communication_us),
            if t.total_us > 0.0 { 100.0 * t.exposed_communication_us / t.total_us } else { 0.0 },
            format_duration_us(t.total_us),
            format_duration_us(t.communication_us)
        ),
        evidence: Evidence::Ranks,
    })
}

/// The idle time of the rank whose span is longest (the first of equals); on a CPU, the time
/// no compiled kernel ran, as a single trace's finding says it.
fn idle(e: &RankEntry) -> Option<Finding> {
    let t = e.timeline.as_ref()?;
    let processor = t.processor();
    let what = super::idle_means(processor);
    Some(Finding {
        kind: FindingKind::Idle,
        time_us: t.idle_us,
        text: format!(
            "Rank {}'s {processor} is idle {} of its {} span ({:.1} %): {what}",
            e.rank,
            format_duration_us(t.idle_us),
            format_duration_us(t.total_us),
            if t.total_us > 0.0 { 100.0 * t.idle_us / t.total_us } else { 0.0 }
        ),
        evidence: Evidence::Ranks,
    })
}
