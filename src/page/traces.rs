//! The Kineto traces opened on the page: the list (in opening order), the two picked for
//! comparing, and what the trace panel shows. Pure values: every change returns a new list.

use super::by_address::ByAddress;
use analysis::compare::pairing::default_pair;
use analysis::compare::swapped;
use analysis::findings::single::trace_overview;
use analysis::findings::{pair_overview, Evidence, Overview, SideFacts};
use analysis::pipeline::TraceTime;
use analysis::time::gap::{gap, Gap};
use analysis::trace_fusion::TraceFusion;
use analysis::{compare, Comparison, Input, TraceSummary};
use hardware::DetectedChip;
use trace::{Trace, Vendor};
use view::findings::evidence_label;
use view::ranks::RanksDrawn;

/// Where an opened trace is kept, for comparing it with another.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceHeld {
    /// By the analysis worker, under the trace's id (the page has only the summary).
    Worker,
    /// On the page (read without a worker).
    Page(ByAddress<Trace>),
}

/// A Kineto trace read from a file: its summary, and where the trace is kept for comparing.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    /// Unique for the page's life (the worker's job id).
    pub id: u32,
    pub file_name: String,
    pub summary: ByAddress<TraceSummary>,
    /// Where its time goes (timeline, op table), against the chip detected or picked.
    pub time: ByAddress<TraceTime>,
    pub held: TraceHeld,
}

impl LoadedTrace {
    /// The vendor the summary found (unknown if it has no platform).
    pub fn vendor(&self) -> Vendor {
        self.summary.platforms.first().map(|p| p.vendor).unwrap_or(Vendor::Unknown)
    }
}

/// What the trace panel shows.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceView {
    /// One trace's summary.
    Summary {
        file_name: String,
        summary: ByAddress<TraceSummary>,
        /// Where the time goes; `None` from a share link made before links carried it.
        time: Option<ByAddress<TraceTime>>,
        /// From a share link whose kernel lists were shortened.
        trimmed: bool,
        /// The verdict and findings, shown first ([`analysis::findings`]).
        overview: ByAddress<Overview>,
    },
    /// Two traces side by side.
    Comparison {
        files: (String, String),
        comparison: ByAddress<Comparison>,
        gap: Option<GapView>,
        trimmed: bool,
        /// The verdict and findings, shown first ([`analysis::findings`]).
        overview: ByAddress<Overview>,
    },
}

impl TraceView {
    /// One trace's view, its overview computed from its summary and report.
    pub fn summary(
        file_name: String,
        summary: ByAddress<TraceSummary>,
        time: Option<ByAddress<TraceTime>>,
        trimmed: bool,
    ) -> Self {
        let overview = ByAddress::new(trace_overview(&summary, time.as_deref()));
        TraceView::Summary { file_name, summary, time, trimmed, overview }
    }

    /// A pair's view, its overview computed from the comparison, the gap and each side's
    /// report (or, from a share link, its fusion analysis).
    pub fn comparison(
        files: (String, String),
        comparison: ByAddress<Comparison>,
        gap: Option<GapView>,
        trimmed: bool,
    ) -> Self {
        let facts: [SideFacts<'_>; 2] = match gap.as_ref().map(|g| (&g.times, &g.fusion)) {
            Some((Some(times), _)) => [SideFacts::of(&times[0]), SideFacts::of(&times[1])],
            Some((None, Some(fusion))) => {
                [0, 1].map(|i| SideFacts { fusion: Some(&*fusion[i]), ..SideFacts::default() })
            }
            _ => [SideFacts::default(); 2],
        };
        let overview = ByAddress::new(pair_overview(&comparison, gap.as_ref().map(|g| &*g.gap), facts));
        TraceView::Comparison { files, comparison, gap, trimmed, overview }
    }

    /// The view with the overview a share link carried (the sender's, word for word).
    pub fn with_overview(self, carried: Option<Overview>) -> Self {
        let Some(o) = carried else { return self };
        match self {
            TraceView::Summary { file_name, summary, time, trimmed, .. } => {
                TraceView::Summary { file_name, summary, time, trimmed, overview: ByAddress::new(o) }
            }
            TraceView::Comparison { files, comparison, gap, trimmed, .. } => {
                TraceView::Comparison { files, comparison, gap, trimmed, overview: ByAddress::new(o) }
            }
        }
    }

    /// The overview shown first.
    pub fn overview(&self) -> &ByAddress<Overview> {
        match self {
            TraceView::Summary { overview, .. } | TraceView::Comparison { overview, .. } => overview,
        }
    }
}

/// The gap between the two traces of a comparison, and each side's report (in the
/// comparison's order) for the roofline chart; a share link carries the gap only.
#[derive(Debug, Clone, PartialEq)]
pub struct GapView {
    pub gap: ByAddress<Gap>,
    pub times: Option<[ByAddress<TraceTime>; 2]>,
    /// Each side's fusion analysis from a share link (trimmed), which carries no reports;
    /// `None` with `times`, whose reports hold it whole.
    pub fusion: Option<[ByAddress<TraceFusion>; 2]>,
}

/// One of the two traces of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSide {
    A,
    B,
}

/// The traces opened (in opening order), the two picked for comparing, and the view shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traces {
    pub view: Option<TraceView>,
    pub opened: Vec<LoadedTrace>,
    /// Ids of the traces to compare, A and B.
    pub pair: Option<(u32, u32)>,
    /// The job report of the opened traces that are ranks of one distributed job (two or
    /// more), computed by the analysis worker.
    pub job: Option<ByAddress<RanksDrawn>>,
    /// The Ranks view is shown (when no trace view is).
    pub job_shown: bool,
    /// The view (tab) of a trace's or a pair's results that is open; it stays as other traces
    /// open, so that a reviewer comparing several pairs keeps looking at the same view.
    pub tab: ResultsTab,
}

/// The views of a trace's or a pair's results, one click away: the answer first, then the
/// evidence by kind, or all of them on one page (for find-in-page and printing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResultsTab {
    #[default]
    Overview,
    Fusion,
    Kernels,
    Time,
    Layers,
    All,
}

impl ResultsTab {
    /// Every view, in the tab bar's order.
    pub const ALL: [ResultsTab; 6] = [
        ResultsTab::Overview,
        ResultsTab::Fusion,
        ResultsTab::Kernels,
        ResultsTab::Time,
        ResultsTab::Layers,
        ResultsTab::All,
    ];

    /// Its id in the address (`#view=fusion`) and in share links.
    pub fn id(self) -> &'static str {
        match self {
            ResultsTab::Overview => "overview",
            ResultsTab::Fusion => "fusion",
            ResultsTab::Kernels => "kernels",
            ResultsTab::Time => "time",
            ResultsTab::Layers => "layers",
            ResultsTab::All => "all",
        }
    }

    /// The view of an id; `None` for an id of no view (an edited address).
    pub fn from_id(id: &str) -> Option<ResultsTab> {
        ResultsTab::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The tab's label; the views a finding's evidence is in are named as the findings name them.
    pub fn label(self) -> &'static str {
        match self {
            ResultsTab::Overview => "Overview",
            ResultsTab::Fusion => evidence_label(Evidence::Fusion),
            ResultsTab::Kernels => evidence_label(Evidence::Kernels),
            ResultsTab::Time => evidence_label(Evidence::Time),
            ResultsTab::Layers => "Layers",
            ResultsTab::All => "All views",
        }
    }
}

impl From<Evidence> for ResultsTab {
    /// The view that holds a finding's evidence.
    fn from(e: Evidence) -> Self {
        match e {
            Evidence::Fusion => ResultsTab::Fusion,
            Evidence::Kernels => ResultsTab::Kernels,
            Evidence::Time => ResultsTab::Time,
            // A job's findings are shown by the ranks view, whose tables are all on one page.
            Evidence::Ranks => ResultsTab::All,
        }
    }
}

impl Traces {
    /// A newly read trace: its summary is shown, and the pair becomes the default one.
    pub(super) fn open(&self, loaded: LoadedTrace) -> Traces {
        let view =
            TraceView::summary(loaded.file_name.clone(), loaded.summary.clone(), Some(loaded.time.clone()), false);
        let mut opened = self.opened.clone();
        opened.push(loaded);
        Traces { view: Some(view), pair: default_pair_of(&opened), opened, job_shown: false, ..self.clone() }
    }

    /// The trace with this id.
    pub fn get(&self, id: u32) -> Option<&LoadedTrace> {
        self.opened.iter().find(|t| t.id == id)
    }

    /// The pair's traces, A and B.
    pub fn pair_traces(&self) -> Option<(&LoadedTrace, &LoadedTrace)> {
        let (a, b) = self.pair?;
        Some((self.get(a)?, self.get(b)?))
    }

    /// The trace's summary, shown.
    pub(super) fn show(&self, id: u32) -> Traces {
        let view = self
            .get(id)
            .map(|t| TraceView::summary(t.file_name.clone(), t.summary.clone(), Some(t.time.clone()), false));
        match view {
            Some(view) => Traces { view: Some(view), job_shown: false, ..self.clone() },
            None => self.clone(),
        }
    }

    /// Neither a trace view nor the Ranks view (the op graph's views are shown).
    pub(super) fn hidden(&self) -> Traces {
        Traces { view: None, job_shown: false, ..self.clone() }
    }

    /// A job report of ranks opened, shown.
    pub(super) fn with_job(&self, job: ByAddress<RanksDrawn>) -> Traces {
        Traces { view: None, job: Some(job), job_shown: true, ..self.clone() }
    }

    /// The trace of one rank of the job shown (its file among those opened).
    pub fn rank_trace(&self, rank: u32) -> Option<&LoadedTrace> {
        let (_, file) = self.job.as_ref()?.ranks.iter().find(|(r, _)| *r == rank)?;
        self.opened.iter().rev().find(|t| t.file_name == *file)
    }

    /// One side of the pair set to a trace; picking the other side's trace swaps the two.
    pub(super) fn pick(&self, side: PairSide, id: u32) -> Traces {
        let (a, b) = self.pair.unwrap_or((id, id));
        let pair = match side {
            PairSide::A if b == id => (id, a),
            PairSide::A => (id, b),
            PairSide::B if a == id => (b, id),
            PairSide::B => (a, id),
        };
        Traces { pair: Some(pair), ..self.clone() }
    }

    /// The list without the traces the analysis worker held (it stopped, and they with it), and
    /// their file names. A view of one stays readable (the page has its summary); the pair falls
    /// back to the default of those left.
    pub(super) fn without_worker_traces(&self) -> (Traces, Vec<String>) {
        let (lost, kept): (Vec<LoadedTrace>, Vec<LoadedTrace>) =
            self.opened.iter().cloned().partition(|t| t.held == TraceHeld::Worker);
        let pair = default_pair_of(&kept);
        let names = lost.into_iter().map(|t| t.file_name).collect();
        (Traces { view: self.view.clone(), pair, opened: kept, ..self.clone() }, names)
    }

    /// The trace no longer listed; the pair falls back to the default if it held it, and a
    /// view of its summary goes.
    pub(super) fn remove(&self, id: u32) -> Traces {
        let Some(gone) = self.get(id) else { return self.clone() };
        let opened: Vec<LoadedTrace> = self.opened.iter().filter(|t| t.id != id).cloned().collect();
        let pair = match self.pair {
            Some((a, b)) if a != id && b != id => Some((a, b)),
            _ => default_pair_of(&opened),
        };
        let view = match &self.view {
            Some(TraceView::Summary { summary, .. }) if *summary == gone.summary => None,
            other => other.clone(),
        };
        // A job report with this trace as a rank no longer holds.
        let job = self.job.clone().filter(|j| !j.ranks.iter().any(|(_, file)| *file == gone.file_name));
        let job_shown = self.job_shown && job.is_some();
        Traces { view, opened, pair, job, job_shown, tab: self.tab }
    }
}

impl Traces {
    /// The gap between the pair's traces, in the comparison's order (AMD first in a
    /// cross-vendor pair), keyed as the comparison keys its sides.
    pub fn pair_gap(&self, comparison: &Comparison) -> Option<GapView> {
        let (a, b) = self.pair_traces()?;
        let (first, second) = if swapped(a.vendor(), b.vendor()) { (b, a) } else { (a, b) };
        let keys = (comparison.platforms.first()?.key.as_str(), comparison.platforms.get(1)?.key.as_str());
        let gap = gap((keys.0, &first.time.op_table()), (keys.1, &second.time.op_table()));
        Some(GapView { gap: ByAddress::new(gap), times: Some([first.time.clone(), second.time.clone()]), fusion: None })
    }

    /// The traces with these ids given new reports (a capture trace was joined to them); a view
    /// of one of their summaries shows the new report.
    pub(super) fn with_times(&self, times: &[(u32, ByAddress<TraceTime>)]) -> Traces {
        let new_time = |t: &LoadedTrace| times.iter().find(|(id, _)| *id == t.id).map(|(_, time)| time.clone());
        let opened: Vec<LoadedTrace> = self
            .opened
            .iter()
            .map(|t| match new_time(t) {
                Some(time) => LoadedTrace { time, ..t.clone() },
                None => t.clone(),
            })
            .collect();
        let view = match &self.view {
            Some(TraceView::Summary { file_name, summary, trimmed, .. }) => {
                match self.opened.iter().find(|t| t.summary == *summary).and_then(new_time) {
                    Some(time) => Some(TraceView::summary(file_name.clone(), summary.clone(), Some(time), *trimmed)),
                    None => self.view.clone(),
                }
            }
            other => other.clone(),
        };
        Traces { view, opened, ..self.clone() }
    }

    /// The shown trace's report measured against another chip; the trace keeps that chip (a
    /// comparison made afterwards uses it).
    pub(super) fn with_chip(&self, chip: DetectedChip) -> Traces {
        let Some(TraceView::Summary { file_name, summary, time: Some(time), trimmed, .. }) = &self.view else {
            return self.clone();
        };
        let mut report = TraceTime::clone(time);
        report.with_chip(chip);
        let report = ByAddress::new(report);
        let opened = self
            .opened
            .iter()
            .map(|t| if t.summary == *summary { LoadedTrace { time: report.clone(), ..t.clone() } } else { t.clone() })
            .collect();
        let view = TraceView::summary(file_name.clone(), summary.clone(), Some(report), *trimmed);
        Traces { view: Some(view), opened, ..self.clone() }
    }
}

/// The default pair of `opened` (see [`analysis::compare::pairing::default_pair`]), as ids.
fn default_pair_of(opened: &[LoadedTrace]) -> Option<(u32, u32)> {
    let vendors: Vec<Vendor> = opened.iter().map(LoadedTrace::vendor).collect();
    default_pair(&vendors).map(|(a, b)| (opened[a].id, opened[b].id))
}

/// Compares two traces read on the page (the fallback without a worker).
pub fn compare_on_page(a: &LoadedTrace, b: &LoadedTrace) -> Option<Comparison> {
    // A page built without the readers holds no trace; the guard lets the compiler drop the
    // comparison (and the structure search it runs) from that build.
    if !import::READS_LARGE_KINDS {
        return None;
    }
    let (TraceHeld::Page(ta), TraceHeld::Page(tb)) = (&a.held, &b.held) else { return None };
    Some(compare(Input::new(ta, Some(&a.file_name)), Input::new(tb, Some(&b.file_name))))
}
