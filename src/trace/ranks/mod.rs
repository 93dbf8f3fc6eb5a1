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
//! use fusionscope_trace::classify;
//! use fusionscope_trace::ranks::{job_report, read_rank, synthetic::SyntheticJob};
//! let job = SyntheticJob::small();
//! let summaries: Vec<_> = (0..job.world_size)
//!     .map(|r| read_rank(&classify, &format!("rank{r}.json"), [job.rank_trace(r).as_bytes()]).unwrap())
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
pub mod streams;
pub mod synthetic;

pub use fold::{RankSink, RankSummary};
pub use job::{job_report, JobReport, MatchedCollective, RankEntry};

use crate::kineto::{Reader, TraceError};
use crate::summary::Classifier;

/// Why the ranks could not be read as one job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RanksError {
    #[error("no trace files given")]
    NoFiles,
    #[error("{given} files given: at most {limit} ranks are opened together")]
    TooManyFiles { given: usize, limit: usize },
    #[error(transparent)]
    Identity(#[from] identity::IdentityError),
    #[error("{file}: {source}")]
    Read {
        file: String,
        #[source]
        source: TraceError,
    },
}

/// Reads one rank's file, given as slices of its bytes (plain or gzip), into its summary.
pub fn read_rank<'b>(
    classifier: Classifier<'_>,
    file: &str,
    chunks: impl IntoIterator<Item = &'b [u8]>,
) -> Result<RankSummary, RanksError> {
    let named = |source| RanksError::Read { file: file.to_string(), source };
    let mut reader = Reader::with_sink(RankSink::new(classifier, file));
    for chunk in chunks {
        reader.feed(chunk).map_err(named)?;
    }
    reader.finish().map_err(named)
}
