//! What a link holds ([`SharedState`], [`SharedView`]), how it is written as JSON, and why one
//! cannot be opened ([`ShareError`]): the types that reading (`share/read.rs`), the limits
//! (`share/caps.rs`) and the fragment's encoding (`share/mod.rs`) all use, kept below them.

use serde::Serialize;
use thiserror::Error;

use analysis::findings::Overview;
use analysis::pipeline::TraceTime;
use analysis::time::gap::Gap;
use analysis::trace_fusion::TraceFusion;
use analysis::{Comparison, TraceSummary};
use fusion::json::{to_file, GraphFile};
use fusion::transformer::TransformerConfig;
use fusion::OpGraph;
use hardware::ChipChoice;
use limits::SHARE_STATE_BYTES;
use units::group_digits;
use workload::ModelSpec;

/// The format this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 2;

/// The views (the `view` tag) each format holds; index 0 is format 1.
pub(super) const VIEWS: [&[&str]; 2] = [
    &["transformer", "graph", "trace_summary", "trace_comparison"],
    &["transformer", "graph", "trace_summary", "trace_comparison", "model", "op_trace", "sim_table", "ranks"],
];

/// What a fragment starts with (after `#`).
pub const FRAGMENT_KEY: &str = "s=";

/// What a link restores. Written with serde's internal tag (`{"view": "graph", …}`); read by
/// `share/read.rs`, which finds the tag first and reads the fields straight into the variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum SharedView {
    /// The built-in transformer block with these parameters.
    Transformer { config: TransformerConfig },
    /// An op graph, in full (ops, shapes, declared tensors), with the name of its file.
    Graph { file_name: String, graph: GraphFile },
    /// A trace's summary (the analysis, not the trace), with the name of its file.
    TraceSummary {
        file_name: String,
        summary: TraceSummary,
        /// Kernel lists were shortened to keep the link small ([`crate::trim_summary`]).
        #[serde(default)]
        trimmed: bool,
        /// Where the time goes, its longest op rows ([`crate::trim_time`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time: Option<Box<TraceTime>>,
        /// The sender's verdict and findings, shown as they were (computed from the whole
        /// report, which the link trims). Absent in older links, which recompute it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overview: Option<Box<Overview>>,
    },
    /// Two traces compared (the analysis, not the traces), with their file names.
    TraceComparison {
        files: (String, String),
        /// Written in the compact form of [`crate::compact`] (format 2), read in either.
        #[serde(with = "crate::compact::compact_or_full")]
        comparison: Comparison,
        #[serde(default)]
        trimmed: bool,
        /// The gap between the two, its largest rows ([`crate::trim_gap`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gap: Option<Box<Gap>>,
        /// Each side's fusion analysis in the comparison's order, its longest groups and the
        /// opportunities that save most ([`crate::trim_fusion`]). Absent in older links.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fusion: Option<Box<[TraceFusion; 2]>>,
        /// The sender's verdict and findings, as for a summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overview: Option<Box<Overview>>,
    },
    /// "Model × chip": the model (a built-in name, or a config file's text) and the workload
    /// parameters; the page regenerates the graph. Format 2 on.
    Model { spec: ModelSpec },
    /// An op trace: its text (the case view, the converted graph and its analysis are
    /// recomputed from it, exactly as when the file is opened). Format 2 on.
    OpTrace { file_name: String, text: String },
    /// A simulator op table (its CSV text, which deflates ~6×) and the workload it is compared
    /// with; the page parses the text and recomputes our side. Format 2 on.
    SimTable {
        file_name: String,
        text: String,
        setup: simcsv::SimSetup,
        /// What was assumed when the workload was read from the file name.
        #[serde(default)]
        notes: Vec<String>,
    },
    /// The Ranks view of one distributed job: its drawing (text cells and the strips'
    /// figures, never markup), the collectives table shortened ([`crate::trim_ranks`]).
    /// Format 2 on (an older page refuses it as made by a newer version).
    Ranks { drawn: view::ranks::RanksDrawn },
}

impl SharedView {
    /// The view of a graph opened from a file.
    pub fn of_graph(file_name: &str, graph: &OpGraph) -> Self {
        SharedView::Graph { file_name: file_name.to_string(), graph: to_file(graph) }
    }
}

/// Everything a link holds: the view and what is selected in it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedState {
    pub view: SharedView,
    /// The op whose details are open, by name.
    pub selected_op: Option<String>,
    /// The time view's chip; `None` (and every format-1 link) means the page's default.
    pub chip: Option<ChipChoice>,
    /// The results' view (tab) the sender had open, by its id (`fusion`, `time`, …); `None`
    /// (and older links) opens the overview.
    pub tab: Option<String>,
}

impl From<SharedView> for SharedState {
    fn from(view: SharedView) -> Self {
        SharedState { view, selected_op: None, chip: None, tab: None }
    }
}

/// The state as a link writes it (read back by `share/read.rs`).
#[derive(Serialize)]
struct Envelope<'s> {
    v: u32,
    state: &'s SharedView,
    #[serde(skip_serializing_if = "is_none")]
    selected_op: &'s Option<String>,
    #[serde(skip_serializing_if = "is_none")]
    chip: &'s Option<ChipChoice>,
    #[serde(skip_serializing_if = "is_none")]
    tab: &'s Option<String>,
}

fn is_none<T>(o: &&Option<T>) -> bool {
    o.is_none()
}

/// Why a link cannot be opened, in words for the person who clicked it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShareError {
    #[error("the address has no shared state (its fragment does not start with \"#{FRAGMENT_KEY}\")")]
    NotAShareLink,
    #[error("the link's format number \"{0}\" is not a number; the link was probably cut or edited")]
    BadVersion(String),
    #[error(
        "the link was made by a newer version of fusionscope (format {0}); this page reads up to {FORMAT_VERSION}: \
         open it with the newer version"
    )]
    Newer(u32),
    #[error(
        "the link was made by a newer version of fusionscope (format {version}, whose view \"{view}\" this page does not know); \
         this page reads up to {FORMAT_VERSION}: open it with the newer version"
    )]
    NewerView { version: u32, view: String },
    #[error("share format {0} does not exist (formats start at 1)")]
    Unknown(u32),
    #[error("the link is damaged: its data is not base64url ({0}); it was probably cut or edited")]
    Base64(String),
    #[error("the link is damaged: its data does not inflate ({0}); it was probably cut short")]
    Deflate(String),
    #[error(
        "the link's state is more than {} MiB of JSON (the most a link may hold), far more than any real state",
        SHARE_STATE_BYTES >> 20
    )]
    TooLarge,
    #[error("the link's state is not what format {version} holds: {message}")]
    Json { version: u32, message: String },
    #[error("the link's {what} has {} {unit}; a link holds at most {}", group_digits(*size as u64), group_digits(*max as u64))]
    OverLimit { what: String, size: usize, max: usize, unit: &'static str },
}

/// The state's JSON as a link holds it (before deflate).
pub(super) fn state_json(state: &SharedState) -> Vec<u8> {
    let envelope = Envelope {
        v: FORMAT_VERSION,
        state: &state.view,
        selected_op: &state.selected_op,
        chip: &state.chip,
        tab: &state.tab,
    };
    serde_json::to_vec(&envelope)
        .expect("a view always serialises: it holds only strings, numbers and maps with string keys")
}
