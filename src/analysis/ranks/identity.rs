//! Which rank a trace file is, and of how many: from the trace's `distributedInfo`, else from
//! the file name (`rank3`, `rank_3`, `rank-3`, `rank.3`), else the order the files were given
//! (`docs/ranks.md`, "Rank identity").

use serde::{Deserialize, Serialize};

pub use trace::{DistributedInfo, PgConfig};

/// The rank a file name gives: the digits after the last `rank` (any case), optionally
/// separated by `_`, `-` or `.`; `None` when the name has no such part.
///
/// ```
/// use fusionscope_analysis::ranks::identity::rank_from_file_name;
/// assert_eq!(rank_from_file_name("job/sampled_rank-12.json.gz"), Some(12));
/// assert_eq!(rank_from_file_name("trace_RANK3.json"), Some(3));
/// assert_eq!(rank_from_file_name("hta_nccl_a100_rank0_of2.json.gz"), Some(0));
/// assert_eq!(rank_from_file_name("frank.json"), None);
/// ```
pub fn rank_from_file_name(name: &str) -> Option<u32> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    let at = lower.rfind("rank")?;
    // "frank", "cranky": the word must start at a non-letter.
    if lower[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let rest = &lower[at + 4..];
    let rest = rest.strip_prefix(['_', '-', '.']).unwrap_or(rest);
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() {
        return None;
    }
    digits.parse().ok()
}

/// Where a rank number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    /// `distributedInfo.rank`.
    Trace,
    /// The file name.
    FileName,
    /// The position among the files given.
    Order,
}

/// One file's identity as the job sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub rank: u32,
    pub rank_source: RankSource,
    pub world_size: Option<u32>,
}

/// Why a set of files cannot be one job's ranks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("{first} and {second} both are rank {rank} ({how}): give each rank once")]
    DuplicateRank { rank: u32, first: String, second: String, how: &'static str },
    #[error("files of different jobs: {first} says world size {first_size}, {second} says {second_size}")]
    WorldSizes { first: String, first_size: u32, second: String, second_size: u32 },
    #[error("{file} is rank {rank} of a world of {world_size}: a rank must be below the world size")]
    RankOutOfWorld { file: String, rank: u32, world_size: u32 },
}

/// What [`resolve`] needs of each file: its name and `distributedInfo`.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub file: &'a str,
    pub info: Option<&'a DistributedInfo>,
}

/// Ranks for files given in this order: each file's own rank where the trace or the name says
/// it, else the lowest rank no file claims, in order. Errors for a rank claimed twice, world
/// sizes that differ, a rank past its world; the notes name the ranks of the world that no
/// file is (missing ranks) and how each rank was found when not from the trace.
pub fn resolve(claims: &[Claim<'_>]) -> Result<(Vec<Identity>, Vec<String>), IdentityError> {
    let mut notes = Vec::new();
    // World size: every file that states one must agree.
    let mut world: Option<(u32, &str)> = None;
    for c in claims {
        if let Some(ws) = c.info.and_then(|i| i.world_size) {
            match world {
                Some((w, f)) if w != ws => {
                    return Err(IdentityError::WorldSizes {
                        first: f.to_string(),
                        first_size: w,
                        second: c.file.to_string(),
                        second_size: ws,
                    })
                }
                None => world = Some((ws, c.file)),
                _ => {}
            }
        }
    }
    let world_size = world.map(|w| w.0);
    let stated: Vec<Option<(u32, RankSource)>> = claims
        .iter()
        .map(|c| {
            c.info
                .and_then(|i| i.rank)
                .map(|r| (r, RankSource::Trace))
                .or_else(|| rank_from_file_name(c.file).map(|r| (r, RankSource::FileName)))
        })
        .collect();
    let mut owner: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for (i, s) in stated.iter().enumerate() {
        if let Some((rank, source)) = *s {
            if let Some(&j) = owner.get(&rank) {
                let how = match (stated[j].map(|s| s.1), source) {
                    (Some(RankSource::Trace), RankSource::Trace) => "by their distributedInfo",
                    (Some(RankSource::FileName), RankSource::FileName) => "by their file names",
                    _ => "by distributedInfo and file name",
                };
                return Err(IdentityError::DuplicateRank {
                    rank,
                    first: claims[j].file.to_string(),
                    second: claims[i].file.to_string(),
                    how,
                });
            }
            owner.insert(rank, i);
        }
    }
    let mut next_free = 0u32;
    let mut out = Vec::with_capacity(claims.len());
    for (i, c) in claims.iter().enumerate() {
        let (rank, source) = match stated[i] {
            Some(s) => s,
            None => {
                while owner.contains_key(&next_free) {
                    next_free += 1;
                }
                owner.insert(next_free, i);
                (next_free, RankSource::Order)
            }
        };
        match source {
            RankSource::FileName => {
                notes.push(format!("{}: no rank in the trace; rank {rank} from the file name", c.file))
            }
            RankSource::Order => notes.push(format!(
                "{}: no rank in the trace or the file name; rank {rank} from the order the files were given",
                c.file
            )),
            RankSource::Trace => {}
        }
        if let Some(ws) = world_size {
            if rank >= ws {
                return Err(IdentityError::RankOutOfWorld { file: c.file.to_string(), rank, world_size: ws });
            }
        }
        out.push(Identity { rank, rank_source: source, world_size });
    }
    if let Some(ws) = world_size {
        let missing = ws as usize - owner.len().min(ws as usize);
        if missing > 0 {
            notes.push(format!(
                "{} of the {ws} ranks given; missing: {}",
                owner.len(),
                missing_list(owner.keys().copied(), ws)
            ));
        }
    }
    Ok((out, notes))
}

/// The ranks below `world` not in `present` (sorted), as ranges: `2–5, 7`; long lists end
/// with how many more.
fn missing_list(present: impl Iterator<Item = u32>, world: u32) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut at = 0u32;
    for p in present.chain(std::iter::once(world)) {
        if p > at {
            ranges.push((at, p - 1));
        }
        at = p.saturating_add(1);
    }
    let shown: Vec<String> =
        ranges.iter().take(8).map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}–{b}") }).collect();
    let more = ranges.len().saturating_sub(8);
    if more > 0 {
        format!("{} and {more} more ranges", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(rank: Option<u32>, world: Option<u32>) -> DistributedInfo {
        DistributedInfo { backend: None, rank, world_size: world, pg_config: vec![], nccl_version: None }
    }

    #[test]
    fn trace_then_name_then_order() {
        let a = info(Some(2), Some(4));
        let claims = [
            Claim { file: "x.json", info: None },
            Claim { file: "w_rank1.json", info: None },
            Claim { file: "t.json", info: Some(&a) },
            Claim { file: "y.json", info: None },
        ];
        let (ids, notes) = resolve(&claims).unwrap();
        let ranks: Vec<(u32, RankSource)> = ids.iter().map(|i| (i.rank, i.rank_source)).collect();
        assert_eq!(
            ranks,
            vec![(0, RankSource::Order), (1, RankSource::FileName), (2, RankSource::Trace), (3, RankSource::Order)]
        );
        assert!(ids.iter().all(|i| i.world_size == Some(4)));
        assert_eq!(notes.len(), 3, "{notes:?}");
    }

    #[test]
    fn duplicates_other_jobs_and_missing_ranks_are_said() {
        let a = info(Some(0), Some(8));
        let b = info(Some(0), Some(8));
        let e = resolve(&[Claim { file: "a", info: Some(&a) }, Claim { file: "b", info: Some(&b) }]).unwrap_err();
        assert_eq!(e.to_string(), "a and b both are rank 0 (by their distributedInfo): give each rank once");
        let c = info(Some(1), Some(2));
        let e = resolve(&[Claim { file: "a", info: Some(&a) }, Claim { file: "c", info: Some(&c) }]).unwrap_err();
        assert!(matches!(e, IdentityError::WorldSizes { first_size: 8, second_size: 2, .. }), "{e}");
        let d = info(Some(5), Some(8));
        let (_, notes) = resolve(&[Claim { file: "a", info: Some(&a) }, Claim { file: "d", info: Some(&d) }]).unwrap();
        assert_eq!(notes, vec!["2 of the 8 ranks given; missing: 1–4, 6–7".to_string()]);
        let e = resolve(&[Claim { file: "d", info: Some(&info(Some(9), Some(8))) }]).unwrap_err();
        assert!(matches!(e, IdentityError::RankOutOfWorld { rank: 9, .. }));
    }
}
