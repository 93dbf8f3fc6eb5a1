//! The job report: several ranks' summaries ([`RankSummary`], each read on its own) into one
//! report — each rank's identity and timelines, the collectives matched across ranks with
//! their skew, waits and bandwidth on one clock, what could not be matched, and the
//! stragglers (`docs/ranks.md`). Pure and wasm-safe: the page's worker calls it with the
//! summaries it read, again with every later drop added.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::clock::{estimate, ClockOffset, END_TOLERANCE_US, FAR_APART_US, NOTED_OFFSET_US};
use super::collectives::{algbw_gbps, CollectiveKind};
use super::fold::{DeviceFigures, RankSummary};
use super::identity::{resolve, Claim, RankSource};
use super::matching::{match_collectives, Match, Unmatched};
use super::stragglers::{stragglers, Arrival, Straggler};
use super::RanksError;
use crate::summary::round3;
use crate::time::timeline::Timeline;
use limits::RANKS_FILES;
use trace::platform::Processor;
use units::{format_duration_us, group_digits};

/// One rank of the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankEntry {
    pub rank: u32,
    pub world_size: Option<u32>,
    pub rank_source: RankSource,
    pub file: String,
    /// The busiest device, whose whole-trace figures `timeline` holds.
    pub device: Option<String>,
    pub timeline: Option<Timeline>,
    /// Every device that ran GPU work (busiest first), each with its streams.
    pub devices: Vec<DeviceFigures>,
    /// This rank's clock against the reference (lowest) rank's.
    pub clock: ClockOffset,
    /// Collective kernels the rank ran.
    pub collectives: usize,
    pub kernels: u64,
    /// The idle time between kernels on each of the rank's streams, by cause
    /// ([`crate::time::waits`]); `null` when it ran no kernel.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::waits::as_value")]
    pub waits: Option<crate::time::waits::Waits>,
    /// What reading this rank's file noted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One rank's times in a collective, on the reference clock (µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankTiming {
    pub rank: u32,
    pub start_us: f64,
    pub end_us: f64,
    pub duration_us: f64,
}

/// One collective matched across the ranks that ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchedCollective {
    /// The kernel's name on the lowest rank.
    pub name: String,
    pub kind: CollectiveKind,
    pub group: String,
    /// Its place among the group's collectives (0 first).
    pub seq: usize,
    /// Message size (nccl-tests' convention) where the trace records it.
    pub bytes: Option<u64>,
    /// Members of the group, where the trace says.
    pub group_size: Option<u32>,
    /// The given ranks that ran it.
    pub ranks: Vec<u32>,
    /// Members not given (group size less ranks given), where the group size is known.
    pub missing_ranks: Option<u32>,
    pub per_rank: Vec<RankTiming>,
    /// Latest start less earliest start.
    pub start_skew_us: f64,
    /// Each rank's time in the collective before the last rank arrived.
    pub wait_us: BTreeMap<u32, f64>,
    /// The last to arrive (none when all arrived together or one rank ran it).
    pub last_rank: Option<u32>,
    /// Latest end less latest start: the transfer once everyone is there (one rank: its own).
    pub duration_us: f64,
    /// Latest end less earliest end on the reference clock: near 0 for a collective that ends
    /// together (all-reduce, all-gather, …); large ones put the match or the clocks in doubt.
    pub end_spread_us: f64,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
}

/// `fusionscope ranks FILE… [--json]`: the whole job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    pub world_size: Option<u32>,
    pub ranks: Vec<RankEntry>,
    /// By earliest start on the reference clock.
    pub collectives: Vec<MatchedCollective>,
    /// Groups (from a sequence on) that could not be matched, with the counts and why.
    pub unmatched: Vec<Unmatched>,
    pub stragglers: Vec<Straggler>,
    pub notes: Vec<String>,
}

impl JobReport {
    /// What ran the ranks' kernels: the CPU where every rank's busiest device is the CPU (a
    /// job of CPU runs), else GPUs.
    pub fn processor(&self) -> Processor {
        let devices: Vec<&str> =
            self.ranks.iter().filter_map(|e| e.timeline.as_ref()).map(|t| t.device.as_str()).collect();
        Processor::of_devices(&devices)
    }
}

/// The job report of these ranks' summaries, given in any order.
pub fn job_report(summaries: &[RankSummary]) -> Result<JobReport, RanksError> {
    if summaries.is_empty() {
        return Err(RanksError::NoFiles);
    }
    if summaries.len() > RANKS_FILES {
        return Err(RanksError::TooManyFiles { given: summaries.len(), limit: RANKS_FILES });
    }
    let claims: Vec<Claim<'_>> =
        summaries.iter().map(|s| Claim { file: &s.file, info: s.distributed.as_ref() }).collect();
    let (ids, mut notes) = resolve(&claims)?;
    // Work in rank order from here on.
    let mut order: Vec<usize> = (0..summaries.len()).collect();
    order.sort_by_key(|&i| ids[i].rank);
    let sorted: Vec<RankSummary> = order.iter().map(|&i| summaries[i].clone()).collect();
    let ranks: Vec<u32> = order.iter().map(|&i| ids[i].rank).collect();
    let world_size = ids[0].world_size;

    let (matches, unmatched) = match_collectives(&sorted, &ranks);
    let clocks = clock_offsets(&sorted, &ranks, &matches, &mut notes);
    let offsets: Vec<f64> = clocks.iter().map(|c| c.offset_us).collect();

    let mut collectives: Vec<(f64, MatchedCollective, Vec<Arrival>)> =
        matches.iter().map(|m| collective(&sorted, &offsets, m)).collect();
    collectives.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| (&a.1.group, a.1.seq).cmp(&(&b.1.group, b.1.seq))));
    let stragglers = stragglers(collectives.iter().map(|c| c.2.as_slice()));

    if sorted.len() == 1 {
        notes.push(
            "one rank given: its collectives are listed alone; skew, wait and stragglers need two or more".into(),
        );
    }
    if collectives.iter().any(|c| c.1.missing_ranks.is_some_and(|m| m > 0)) {
        notes.push("some collectives' groups have members whose files were not given: their skew, wait and stragglers cover the given ranks only".into());
    }
    let unmatched_count: usize = unmatched.iter().map(|u| u.counts.values().sum::<usize>()).sum();
    if unmatched_count > 0 {
        notes.push(format!(
            "{} collective kernels in {} groups not matched (see unmatched)",
            group_digits(unmatched_count as u64),
            unmatched.len()
        ));
    }
    let entries = sorted
        .iter()
        .zip(&ranks)
        .zip(clocks)
        .zip(&order)
        .map(|(((s, &rank), clock), &input)| RankEntry {
            rank,
            world_size: ids[input].world_size,
            rank_source: ids[input].rank_source,
            file: s.file.clone(),
            device: s.timeline().map(|t| t.device.clone()),
            timeline: s.timeline().cloned(),
            devices: s.devices.clone(),
            clock,
            collectives: s.collectives.len(),
            kernels: s.kernels,
            waits: s.waits.clone(),
            notes: s.notes.clone(),
        })
        .collect();
    Ok(JobReport {
        world_size,
        ranks: entries,
        collectives: collectives.into_iter().map(|c| c.1).collect(),
        unmatched,
        stragglers,
        notes,
    })
}

/// Each rank's clock against the lowest rank's, from the ends of the collectives they share.
fn clock_offsets(
    sorted: &[RankSummary],
    ranks: &[u32],
    matches: &[Match],
    notes: &mut Vec<String>,
) -> Vec<ClockOffset> {
    let mut pairs: Vec<Vec<(CollectiveKind, f64, f64)>> = vec![Vec::new(); sorted.len()];
    for m in matches {
        let Some(reference) = m.parts.iter().find(|p| p.input == 0) else { continue };
        let ref_rec = &sorted[0].collectives[reference.record];
        for p in m.parts.iter().filter(|p| p.input != 0) {
            let rec = &sorted[p.input].collectives[p.record];
            pairs[p.input].push((ref_rec.kind, rec.end_us, ref_rec.end_us));
        }
    }
    let reference = ranks[0];
    pairs
        .iter()
        .enumerate()
        .map(|(i, pairs)| {
            let c = estimate(pairs);
            if i == 0 {
                return c;
            }
            let rank = ranks[i];
            if c.from_collectives == 0 {
                if !sorted[i].collectives.is_empty() && !sorted[0].collectives.is_empty() {
                    notes.push(format!(
                        "rank {rank} shares no matched collective with rank {reference}: its clock is taken as rank {reference}'s, unaligned"
                    ));
                }
                return c;
            }
            let offset = round3(c.offset_us);
            if c.offset_us.abs() >= FAR_APART_US {
                notes.push(format!(
                    "rank {rank}'s clock is {:.1} s from rank {reference}'s: files of different jobs look like this; if they are one job, the hosts' clocks are far apart (aligned by {} collective ends)",
                    c.offset_us / 1e6,
                    c.from_collectives
                ));
            } else if c.offset_us.abs() >= NOTED_OFFSET_US {
                notes.push(format!(
                    "rank {rank}'s clock is {} from rank {reference}'s (median of {} collective ends): its times are aligned by it",
                    format_duration_us(offset),
                    c.from_collectives
                ));
            }
            if c.max_residual_us > END_TOLERANCE_US {
                let why = if c.point_to_point {
                    "only point-to-point kernels are shared and they do not end together, so the offset is rough"
                } else {
                    "collectives end together, so the match may be wrong or the clocks drift"
                };
                notes.push(format!(
                    "after alignment, rank {rank}'s collective ends differ from rank {reference}'s by up to {}: {why}",
                    format_duration_us(c.max_residual_us)
                ));
            }
            ClockOffset { offset_us: offset, max_residual_us: round3(c.max_residual_us), ..c }
        })
        .collect()
}

/// One matched collective's figures on the reference clock, keyed by its earliest start, with
/// its arrivals for the straggler count.
fn collective(sorted: &[RankSummary], offsets: &[f64], m: &Match) -> (f64, MatchedCollective, Vec<Arrival>) {
    let first = &sorted[m.parts[0].input];
    let first_rec = &first.collectives[m.parts[0].record];
    let mut per_rank = Vec::with_capacity(m.parts.len());
    let mut arrivals = Vec::with_capacity(m.parts.len());
    let mut bytes = None;
    let mut group_size = None;
    for p in &m.parts {
        let s = &sorted[p.input];
        let r = &s.collectives[p.record];
        let (start, end) = (r.start_us - offsets[p.input], r.end_us - offsets[p.input]);
        // Times as the trace wrote them, less the offset: not rounded (at 10¹² µs and more,
        // rounding to ns through ×1000 moves the last digit).
        per_rank.push(RankTiming { rank: p.rank, start_us: start, end_us: end, duration_us: round3(end - start) });
        arrivals.push(Arrival {
            rank: p.rank,
            start_us: start,
            lead_in_us: r.lead_in_us,
            compute_before_us: r.compute_before_us,
        });
        bytes = bytes.or(r.bytes);
        let g = &s.groups[r.group as usize];
        group_size = group_size.or(g.size).or(g.ranks.as_ref().and_then(|x| u32::try_from(x.len()).ok()));
    }
    let earliest = arrivals.iter().map(|a| a.start_us).fold(f64::INFINITY, f64::min);
    let latest = arrivals.iter().map(|a| a.start_us).fold(f64::NEG_INFINITY, f64::max);
    let ends = || m.parts.iter().map(|p| sorted[p.input].collectives[p.record].end_us - offsets[p.input]);
    let last_end_raw = ends().fold(f64::NEG_INFINITY, f64::max);
    let first_end_raw = ends().fold(f64::INFINITY, f64::min);
    let duration = (last_end_raw - latest).max(0.0);
    let wait_us = arrivals.iter().map(|a| (a.rank, round3(latest - a.start_us))).collect();
    let last_rank = (arrivals.len() > 1 && latest > earliest)
        .then(|| arrivals.iter().filter(|a| a.start_us == latest).map(|a| a.rank).min())
        .flatten();
    let n = group_size.unwrap_or(arrivals.len() as u32);
    let algbw = algbw_gbps(bytes, duration);
    let busbw = algbw.zip(first_rec.kind.bus_factor(n)).map(|(a, f)| a * f);
    let ranks: Vec<u32> = m.parts.iter().map(|p| p.rank).collect();
    let missing_ranks = group_size.map(|g| g.saturating_sub(ranks.len() as u32));
    let c = MatchedCollective {
        name: first.collective_names[first_rec.name as usize].clone(),
        kind: first_rec.kind,
        group: m.group.clone(),
        seq: m.seq,
        bytes,
        group_size,
        ranks,
        missing_ranks,
        per_rank,
        start_skew_us: round3(latest - earliest),
        wait_us,
        last_rank,
        duration_us: round3(duration),
        end_spread_us: round3(last_end_raw - first_end_raw),
        algbw_gbps: algbw.map(round3),
        busbw_gbps: busbw.map(round3),
    };
    (earliest, c, arrivals)
}
