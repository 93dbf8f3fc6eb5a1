//! Several GPUs: the ranks of one distributed job read together (`fusionscope ranks`,
//! `docs/ranks.md`).
//!
//! Each rank's file streams through a [`RankSink`] into a [`RankSummary`] — every device's and
//! stream's timeline and the ordered collective kernels with group, kind and size — in memory
//! O(collectives + distinct names), so eight 1 GB ranks open one after another in bounded
//! memory. [`job_report`] then turns the summaries (read natively, or by the page's worker)
//! into the [`JobReport`]: rank identities ([`identity`]), collectives matched across ranks by
//! group and sequence ([`matching`]) on one clock ([`clock`]) with skew, waits and nccl-tests
//! bandwidths ([`collectives`]), what could not be matched, and the stragglers
//! ([`stragglers`]). [`synthetic`] writes jobs with planted skews, offsets and a straggler.
//!
//! ```
//! use fusionscope_analysis::classify;
//! use fusionscope_analysis::ranks::{job_report, synthetic::SyntheticJob, RankSink};
//! use formats::Reader;
//! let job = SyntheticJob::small();
//! let summaries: Vec<_> = (0..job.world_size)
//!     .map(|r| {
//!         let mut reader = Reader::with_sink(RankSink::new(&format!("rank{r}.json")));
//!         reader.feed(job.rank_trace(r).as_bytes()).unwrap();
//!         reader.finish().unwrap()
//!     })
//!     .collect();
//! let report = job_report(&summaries).unwrap();
//! assert_eq!(report.stragglers[0].rank, job.straggler);
//! ```

pub mod clock;
pub mod collectives;
pub mod fold;
pub mod identity;
pub mod job;
pub mod matching;
mod spans;
pub mod stragglers;
pub mod synthetic;

pub use fold::{RankSink, RankSummary};
pub use job::{job_report, JobReport, MatchedCollective, RankEntry};

/// Why the ranks could not be read as one job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RanksError {
    #[error("no trace files given")]
    NoFiles,
    #[error("{given} files given: at most {limit} ranks are opened together")]
    TooManyFiles { given: usize, limit: usize },
    #[error(transparent)]
    Identity(#[from] identity::IdentityError),
}
