//! The JSON documents `fusionscope trace --json` and `fusionscope compare --json` write, and
//! the page exports: the overview first, then the analyses' keys, as `docs/trace-analysis.md`
//! lists them.

use serde::Serialize;

use crate::capture::CaptureReport;
use crate::pipeline::TraceTime;
use crate::trace_fusion::TraceFusion;

/// `fusionscope trace --json` (and the page's JSON export): the overview, the summary and where
/// the time goes, in one object.
#[derive(Serialize)]
pub struct TraceJson<'a> {
    /// `verdict` and `findings` first ([`crate::findings`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub overview: Option<&'a crate::findings::Overview>,
    #[serde(flatten)]
    pub summary: &'a crate::TraceSummary,
    #[serde(flatten)]
    pub time: &'a TraceTime,
}

/// `fusionscope compile-log --json`: a compile log's graphs and kernels, and, with a trace of
/// the same run, each kernel's calls and time.
#[derive(Serialize)]
pub struct CompileLogDoc {
    pub log: inductor::CompileLog,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joined: Option<crate::provenance::Joined>,
}

/// `fusionscope compare --json` (and the page's JSON export): the overview, the comparison and
/// the gap.
#[derive(Serialize)]
pub struct CompareJson<'a> {
    /// `verdict` and `findings` first ([`crate::findings`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub overview: Option<&'a crate::findings::Overview>,
    #[serde(flatten)]
    pub comparison: &'a crate::Comparison,
    pub gap: &'a crate::time::gap::Gap,
    /// Per side key, how its capture trace was joined (only sides given one).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub captures: std::collections::BTreeMap<String, CaptureReport>,
    /// Per side key, its kernels as fusion groups (sides whose report has them).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fusion: std::collections::BTreeMap<String, &'a TraceFusion>,
}
