//! Collectives matched across ranks: by process group (or stream, when the trace records no
//! group) and sequence — the n-th collective of a group on one rank is the n-th on every other
//! (NCCL runs a communicator's collectives in issue order, the same on every member). A group
//! whose ranks ran different numbers of collectives, or whose n-th collectives differ in kind
//! or size, is not matched from there on: it is reported unmatched with the counts, never
//! paired by guess (`docs/ranks.md`, "Matching").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::collectives::CollectiveKind;
use super::fold::{CollectiveRecord, RankSummary};

/// One rank's part in a matched collective: which record of its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Index of the rank among the summaries given.
    pub input: usize,
    pub rank: u32,
    /// Index into that summary's collectives.
    pub record: usize,
}

/// The n-th collective of one group, on each rank that ran the group.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub group: String,
    pub seq: usize,
    pub parts: Vec<Part>,
}

/// Collectives of a group that could not be matched, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unmatched {
    pub group: String,
    /// First sequence number not matched (0: the whole group).
    pub from_seq: usize,
    /// Collectives of the group each rank ran from `from_seq` on (by rank).
    pub counts: BTreeMap<u32, usize>,
    pub reason: String,
}

/// The ranks of the inputs, by input index.
pub fn match_collectives(summaries: &[RankSummary], ranks: &[u32]) -> (Vec<Match>, Vec<Unmatched>) {
    // Group key → per input, its records of the group in start order.
    let mut groups: BTreeMap<&str, Vec<(usize, Vec<usize>)>> = BTreeMap::new();
    for (input, s) in summaries.iter().enumerate() {
        let mut by_group: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, c) in s.collectives.iter().enumerate() {
            by_group.entry(c.group).or_default().push(i);
        }
        for (g, records) in by_group {
            groups.entry(s.groups[g as usize].key.as_str()).or_default().push((input, records));
        }
    }
    let mut matches = Vec::new();
    let mut unmatched = Vec::new();
    for (key, mut members) in groups {
        members.sort_by_key(|(input, _)| ranks[*input]);
        // Given ranks that the group lists as members but that ran none of it.
        let absent = absent_members(summaries, ranks, key, &members);
        let counts = |from: usize| -> BTreeMap<u32, usize> {
            members
                .iter()
                .map(|(input, r)| (ranks[*input], r.len().saturating_sub(from)))
                .chain(absent.iter().map(|&r| (r, 0)))
                .collect()
        };
        if !absent.is_empty() {
            unmatched.push(Unmatched {
                group: key.to_string(),
                from_seq: 0,
                counts: counts(0),
                reason: format!(
                    "rank {} {} a member of group {key} but ran none of its collectives",
                    list(&absent),
                    if absent.len() == 1 { "is" } else { "are" }
                ),
            });
            continue;
        }
        if let Some(reason) = members_differ(summaries, ranks, key, &members) {
            unmatched.push(Unmatched { group: key.to_string(), from_seq: 0, counts: counts(0), reason });
            continue;
        }
        let lens: Vec<usize> = members.iter().map(|(_, r)| r.len()).collect();
        if lens.iter().any(|&n| n != lens[0]) {
            unmatched.push(Unmatched {
                group: key.to_string(),
                from_seq: 0,
                counts: counts(0),
                reason: format!(
                    "the ranks ran different numbers of collectives of group {key}: which are missing cannot be told from their order, so none is matched"
                ),
            });
            continue;
        }
        for seq in 0..lens[0] {
            let records: Vec<&CollectiveRecord> =
                members.iter().map(|(input, r)| &summaries[*input].collectives[r[seq]]).collect();
            if let Some(reason) = disagreement(&records, &members, ranks, summaries, seq, key) {
                unmatched.push(Unmatched { group: key.to_string(), from_seq: seq, counts: counts(seq), reason });
                break;
            }
            let parts =
                members.iter().map(|(input, r)| Part { input: *input, rank: ranks[*input], record: r[seq] }).collect();
            matches.push(Match { group: key.to_string(), seq, parts });
        }
    }
    (matches, unmatched)
}

/// Why the n-th collectives of a group on each rank are not one collective: different kinds
/// (where both are known) or different message sizes (where both are recorded).
fn disagreement(
    records: &[&CollectiveRecord],
    members: &[(usize, Vec<usize>)],
    ranks: &[u32],
    summaries: &[RankSummary],
    seq: usize,
    key: &str,
) -> Option<String> {
    let first = records[0];
    let describe = |i: usize| {
        let r = records[i];
        let input = members[i].0;
        let bytes = r.bytes.map_or(String::new(), |b| format!(" of {b} bytes"));
        format!(
            "rank {}'s is {} `{}`{bytes}",
            ranks[input],
            r.kind.label(),
            summaries[input].collective_names[r.name as usize]
        )
    };
    for (i, r) in records.iter().enumerate().skip(1) {
        let kinds_differ =
            r.kind != first.kind && r.kind != CollectiveKind::Other && first.kind != CollectiveKind::Other;
        let bytes_differ = matches!((r.bytes, first.bytes), (Some(a), Some(b)) if a != b);
        if kinds_differ || bytes_differ {
            return Some(format!(
                "collective {seq} of group {key} differs between ranks ({}, {}): not matched from there on",
                describe(0),
                describe(i)
            ));
        }
    }
    None
}

/// Given ranks listed as members of the group (by any rank's record of it) that have none of
/// its collectives.
fn absent_members(summaries: &[RankSummary], ranks: &[u32], key: &str, members: &[(usize, Vec<usize>)]) -> Vec<u32> {
    let listed: Option<Vec<u32>> = members.iter().find_map(|(input, _)| {
        summaries[*input].groups.iter().find(|g| g.key == key && !g.by_stream).and_then(|g| g.ranks.clone())
    });
    let Some(listed) = listed else { return Vec::new() };
    let listed: rustc_hash::FxHashSet<u32> = listed.into_iter().collect();
    let present: rustc_hash::FxHashSet<u32> = members.iter().map(|(input, _)| ranks[*input]).collect();
    let mut absent: Vec<u32> = ranks.iter().copied().filter(|r| listed.contains(r) && !present.contains(r)).collect();
    absent.sort_unstable();
    absent
}

/// Why the ranks' records of one group cannot be one group: they list different members
/// (the same name for different groups: files of different jobs, or of a job that renamed its
/// groups).
fn members_differ(
    summaries: &[RankSummary],
    ranks: &[u32],
    key: &str,
    members: &[(usize, Vec<usize>)],
) -> Option<String> {
    let listed = |input: usize| {
        summaries[input].groups.iter().find(|g| g.key == key && !g.by_stream).and_then(|g| g.ranks.as_ref())
    };
    let mut first: Option<(u32, &Vec<u32>)> = None;
    for (input, _) in members {
        let Some(these) = listed(*input) else { continue };
        match first {
            None => first = Some((ranks[*input], these)),
            Some((rank, those)) if those != these => {
                return Some(format!(
                    "rank {rank} lists group {key}'s members as {}, rank {} as {}: not one group, so none of its collectives is matched",
                    short_list(those),
                    ranks[*input],
                    short_list(these)
                ))
            }
            _ => {}
        }
    }
    None
}

/// A member list for a message: at most 8 ranks, then how many more.
fn short_list(ranks: &[u32]) -> String {
    let shown: Vec<String> = ranks.iter().take(8).map(u32::to_string).collect();
    match ranks.len().saturating_sub(8) {
        0 => format!("[{}]", shown.join(", ")),
        more => format!("[{}, … {more} more]", shown.join(", ")),
    }
}

fn list(ranks: &[u32]) -> String {
    ranks.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}
