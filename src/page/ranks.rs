//! Which opened traces make one distributed job, and its report (`fusionscope ranks`): the
//! page's worker keeps each trace's rank summary as it reads it, and answers
//! `Request::Ranks` with this, again after every later drop, so that the ranks dropped one
//! after another add up to the same job.

use analysis::ranks::identity::rank_from_file_name;
use analysis::ranks::{job_report, JobReport, RankSummary};

/// Whether a trace says it is a rank of a distributed job: its `distributedInfo`, or a rank in
/// its file name (`…rank3…`).
pub fn is_rank(s: &RankSummary) -> bool {
    s.distributed.is_some() || rank_from_file_name(&s.file).is_some()
}

/// The job report of the traces that are ranks ([`is_rank`]); `None` when fewer than two are
/// (one trace is shown on its own). The error is a sentence: ranks that cannot be one job
/// (two files of the same rank, different world sizes).
pub fn job_of<'a>(summaries: impl IntoIterator<Item = &'a RankSummary>) -> Result<Option<JobReport>, String> {
    let ranks: Vec<RankSummary> = summaries.into_iter().filter(|s| is_rank(s)).cloned().collect();
    if ranks.len() < 2 {
        return Ok(None);
    }
    job_report(&ranks).map(Some).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use analysis::ranks::synthetic::SyntheticJob;
    use import::read_rank;

    #[test]
    fn two_or_more_ranks_make_a_job_whatever_else_was_opened() {
        let job = SyntheticJob::small();
        let mut summaries: Vec<RankSummary> = (0..job.world_size)
            .map(|r| read_rank(&format!("rank{r}.json"), [job.rank_trace(r).as_bytes()]).unwrap())
            .collect();
        let all = job_report(&summaries).unwrap();
        // A trace with no rank identity is left out, not an error.
        let mut other = summaries[0].clone();
        (other.file, other.distributed) = ("model.json".into(), None);
        summaries.push(other);
        assert_eq!(job_of(&summaries).unwrap(), Some(all));
        assert_eq!(job_of(&summaries[..1]).unwrap(), None, "one rank alone is no job");
        assert_eq!(job_of(&summaries[3..]).unwrap(), None);
        let twice = [summaries[0].clone(), summaries[0].clone()];
        assert!(job_of(&twice).is_err(), "the same rank twice");
    }
}
