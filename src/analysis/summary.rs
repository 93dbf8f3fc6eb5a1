//! Single-trace summary (`docs/trace-analysis.md`, "Single-trace summary") and the per-side
//! statistics the comparison reuses: kernels grouped by category, distinct names sorted by time,
//! fused kernels with their components, memory copies and sets counted apart.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::structure::{report, search, Structure, TraceStructure};
use classify::category::Category;
use classify::Classification;
use trace::compiled::CompiledGroup;
use trace::intern::NameId;
use trace::platform::{platform, Platform, Processor, Vendor, VendorEvidence};
use trace::{EventOps, LinkIndex, OpLinks, Trace, TransferKind};

/// Classifies a kernel name; [`super::classify()`] in production, a stand-in in tests.
pub type Classifier<'c> = &'c dyn Fn(&str) -> Classification;

/// The built-in classifier: the rule table of the `classify` crate. Every trace is classified
/// with it; a test may plant another ([`ClassifiedTrace::with_classifier`]).
pub const BUILT_IN: Classifier<'static> = &classify::classify;

/// What the compiler's group of a kernel says it is ([`classify::classify_compiled`]), from
/// the opcodes of the HLO instructions it ran.
pub fn compiled_class(group: &CompiledGroup) -> Option<Classification> {
    classify::classify_compiled(group.ops.iter().map(|o| o.opcode.as_str()))
}

/// A kernel name's classification: its rules' (`class`), or where they leave it `other`, what
/// the compiler's group of its first kernel says ([`compiled_class`]; XLA's `ynn_fusion.5`, a
/// call into YNNPACK whose HLO is a `dot`). The whole trace's classification and the folds
/// that classify as they read (the summary-only mode, the streamed export) all read a name
/// this one way, so they agree.
pub fn with_compiled(class: Classification, compiled: Option<Classification>) -> Classification {
    match (class.category, compiled) {
        (Category::Other, Some(c)) => c,
        _ => class,
    }
}

/// One distinct kernel name of a group: how often it ran, for how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStat {
    pub name: String,
    pub count: u64,
    pub time_us: f64,
    pub category: Category,
    pub components: Vec<Category>,
}

/// A group of kernels on one side (a category, an op row): totals and every distinct name,
/// longest total time first. `kernels` is never truncated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    pub count: u64,
    pub time_us: f64,
    pub mean_us: f64,
    /// Share of this side's GPU (kernel) time, in percent.
    pub share_pct: f64,
    pub kernels: Vec<KernelStat>,
}

/// Accumulates kernels by name for one [`SideStats`].
#[derive(Debug, Default, Clone)]
pub(crate) struct SideAcc {
    by_name: FxHashMap<NameId, (u64, f64)>,
    order: Vec<NameId>,
}

impl SideAcc {
    pub(crate) fn add(&mut self, name: NameId, dur: f64) {
        let e = self.by_name.entry(name).or_insert_with(|| {
            self.order.push(name);
            (0, 0.0)
        });
        e.0 += 1;
        e.1 += dur;
    }

    pub(crate) fn stats(&self, side: &ClassifiedTrace<'_>) -> SideStats {
        let kernels: Vec<KernelStat> = self
            .order
            .iter()
            .map(|&id| {
                let (count, time_us) = self.by_name[&id];
                let c = side.class(id);
                KernelStat {
                    name: side.trace.name(id).to_string(),
                    count,
                    time_us: round3(time_us),
                    category: c.category,
                    components: c.components.clone(),
                }
            })
            .collect();
        let time: f64 = self.by_name.values().map(|v| v.1).fold(0.0, |a, b| a + b);
        SideStats::of_kernels(kernels, time, side.kernel_time_us)
    }
}

impl SideStats {
    /// A group's figures from its distinct names (in any order: sorted here, longest total
    /// first), the sum of their unrounded times and the side's kernel time (shares are of
    /// kernels alone: copies are no category). The mean and the share are of the rounded
    /// times: sums of the same durations in another order (the summary-only fold's) differ in
    /// their last bits, and a mean on a rounding boundary would then print 1.87 µs in one
    /// reading and 1.86 µs in the other.
    pub(crate) fn of_kernels(mut kernels: Vec<KernelStat>, time: f64, kernel_time_us: f64) -> Self {
        kernels.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));
        let count: u64 = kernels.iter().map(|k| k.count).sum();
        let (time, kernel_time_us) = (round3(time), round3(kernel_time_us));
        SideStats {
            count,
            time_us: time,
            mean_us: if count == 0 { 0.0 } else { round3(time / count as f64) },
            share_pct: if kernel_time_us > 0.0 { round3(100.0 * time / kernel_time_us) } else { 0.0 },
            kernels,
        }
    }
}

/// What "GPU time" means everywhere the output says it: the platform line, the op coverage,
/// the gap's headline and the fusion totals.
pub const GPU_TIME_DEFINITION: &str = "sum of kernel, memcpy and memset durations (overlaps counted twice)";

/// The GPU time of a trace ([`GPU_TIME_DEFINITION`]), µs, unrounded: one sum, in one order,
/// for every figure that shows it, so they agree to the last digit.
pub fn gpu_time_us(trace: &Trace) -> f64 {
    let kernels: f64 = trace.kernels.iter().map(|k| k.dur).sum();
    let copies: f64 = trace.transfers.iter().map(|t| t.dur).sum();
    kernels + copies
}

/// Durations are ns-precise in the trace; three decimals of µs keep sums free of float noise.
/// Negative zero (an empty `Sum` of `f64` is -0.0, and so is a tiny negative rounded) is made
/// zero, so that no figure reads "-0.00 %".
pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0 + 0.0
}

// Counted in this crate's tests and where a dependent's tests ask (feature `test-counters`).
#[cfg(any(test, feature = "test-counters"))]
thread_local! {
    /// Traces [`ClassifiedTrace::new`] classified on this thread: tests check that opening a
    /// trace classifies it once.
    pub static CLASSIFIED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A trace with every kernel name classified once, and the facts every report needs.
pub struct ClassifiedTrace<'t> {
    pub trace: &'t Trace,
    pub platform: Platform,
    /// By name index; only kernel names are classified, others hold `Other`.
    classes: Vec<Classification>,
    /// Sum of kernel durations, µs (the platform's).
    pub kernel_time_us: f64,
    /// The links from GPU events to CPU ops, and every event's op: made on first use, once for
    /// the op table and the fusion groups alike.
    link_index: OnceCell<LinkIndex>,
    event_ops: OnceCell<EventOps>,
    /// The structure search (steps, phases, decoder layers) with these classes: made on first
    /// use, once for the summary, the fusion's windows and a comparison; or handed in by a
    /// caller that made it when the trace was opened ([`ClassifiedTrace::with_search`]). (Two
    /// fields: a cell holding a borrow would tie the sides of a comparison to one lifetime.)
    search: OnceCell<Option<TraceStructure>>,
    given_search: Option<Option<&'t TraceStructure>>,
}

impl<'t> ClassifiedTrace<'t> {
    /// `trace` classified by the built-in rules ([`BUILT_IN`]).
    pub fn new(trace: &'t Trace) -> Self {
        Self::with_classifier(trace, BUILT_IN)
    }

    /// `trace` classified by `classifier` (tests plant one).
    pub fn with_classifier(trace: &'t Trace, classifier: Classifier<'_>) -> Self {
        #[cfg(any(test, feature = "test-counters"))]
        CLASSIFIED.with(|n| n.set(n.get() + 1));
        let other = Classification { category: Category::Other, components: vec![Category::Other], rule: None };
        let mut classes: Vec<Option<Classification>> = vec![None; trace.names.len()];
        for k in &trace.kernels {
            let slot = &mut classes[k.name.index()];
            if slot.is_none() {
                let compiled = trace.compiled.of_name(k.name).and_then(compiled_class);
                *slot = Some(with_compiled(classifier(trace.name(k.name)), compiled));
            }
        }
        let platform = platform(trace);
        ClassifiedTrace {
            trace,
            kernel_time_us: platform.kernel_time_us,
            platform,
            classes: classes.into_iter().map(|c| c.unwrap_or_else(|| other.clone())).collect(),
            link_index: OnceCell::new(),
            event_ops: OnceCell::new(),
            search: OnceCell::new(),
            given_search: None,
        }
    }

    /// This trace classified as it was when `found` was searched (the same classifier): the
    /// search is taken as it is, not made again. `None`: the search found no structure.
    pub fn with_search(mut self, found: Option<&'t TraceStructure>) -> Self {
        self.given_search = Some(found);
        self
    }

    /// The structure search ([`search`] with these classes), made on first use.
    pub fn structure_search(&self) -> Option<&TraceStructure> {
        match self.given_search {
            Some(found) => found,
            None => self.search.get_or_init(|| search(self.trace, &|id| self.class(id).category)).as_ref(),
        }
    }

    /// The structure search, kept after the classified trace (a trace opened in the page keeps
    /// it for a later comparison): taken if this made it, copied if it was handed in.
    pub fn into_search(self) -> Option<TraceStructure> {
        match self.given_search {
            Some(found) => found.cloned(),
            None => {
                self.structure_search();
                self.search.into_inner().flatten()
            }
        }
    }

    /// The indexes linking the trace's GPU events to its CPU ops.
    pub fn links(&self) -> OpLinks<'_> {
        OpLinks::with_index(self.trace, self.link_index.get_or_init(|| LinkIndex::new(self.trace)))
    }

    /// The CPU op of each kernel and copy.
    pub fn event_ops(&self) -> &EventOps {
        self.event_ops.get_or_init(|| self.links().event_ops())
    }

    pub fn class(&self, name: NameId) -> &Classification {
        &self.classes[name.index()]
    }

    /// Kernel statistics per category present.
    pub(crate) fn by_category(&self) -> BTreeMap<Category, SideAcc> {
        let mut out: BTreeMap<Category, SideAcc> = BTreeMap::new();
        for k in &self.trace.kernels {
            out.entry(self.class(k.name).category).or_default().add(k.name, k.dur);
        }
        out
    }
}

/// Count, time and bytes of memory copies or sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TransferStats {
    pub count: u64,
    pub time_us: f64,
    pub bytes: u64,
}

/// One `platforms[]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlatformEntry {
    /// The key this trace's side has in the rows (`trace`, `amd`, `nvidia`, `a`, `b`).
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub vendor: Vendor,
    pub vendor_evidence: VendorEvidence,
    /// True when the vendor was inferred from kernel names.
    pub vendor_inferred: bool,
    pub devices: Vec<String>,
    pub kernels: usize,
    /// GPU time ([`GPU_TIME_DEFINITION`]): kernels, memcpys and memsets, µs.
    pub gpu_time_us: f64,
    #[serde(default)]
    pub gpu_time_definition: String,
    /// Kernels alone, µs: what the category and kernel shares are of.
    #[serde(default)]
    pub kernel_time_us: f64,
    pub memcpy: TransferStats,
    pub memset: TransferStats,
}

impl PlatformEntry {
    /// What ran its kernels: the words of its report ("GPU time", "CPU time").
    pub fn processor(&self) -> Processor {
        Processor::of_devices(&self.devices)
    }

    pub fn new(side: &ClassifiedTrace<'_>, key: &str, file: Option<&str>) -> Self {
        let p = &side.platform;
        let mut memcpy = TransferStats::default();
        let mut memset = TransferStats::default();
        for t in &side.trace.transfers {
            let s = if t.kind == TransferKind::Memcpy { &mut memcpy } else { &mut memset };
            s.count += 1;
            s.time_us += t.dur;
            s.bytes += t.bytes.unwrap_or(0);
        }
        memcpy.time_us = round3(memcpy.time_us);
        memset.time_us = round3(memset.time_us);
        PlatformEntry {
            key: key.to_string(),
            file: file.map(str::to_string),
            vendor: p.vendor,
            vendor_evidence: p.evidence,
            vendor_inferred: p.evidence.inferred(),
            devices: p.devices.clone(),
            kernels: p.kernels,
            gpu_time_us: round3(gpu_time_us(side.trace)),
            gpu_time_definition: GPU_TIME_DEFINITION.to_string(),
            kernel_time_us: round3(p.kernel_time_us),
            memcpy,
            memset,
        }
    }
}

/// A category row of the single-trace summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    pub category: Category,
    pub trace: SideStats,
}

/// The single-trace summary (`fusionscope trace --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub platforms: Vec<PlatformEntry>,
    /// Categories present, longest total time first.
    pub categories: Vec<SummaryRow>,
    /// Kernels that fuse several operations, with their components, longest first.
    pub fused_kernels: Vec<KernelStat>,
    /// Steps, phases and layers (`docs/trace-analysis.md`, "Serving traces"); `null` when
    /// nothing repeats. Absent in share links made before it existed.
    /// (Boxed: the summary travels inside page actions and share states, kept small.)
    #[serde(default)]
    pub structure: Option<Box<Structure>>,
}

/// The steps, phases and decoder layers of a trace, as its summary reports them.
pub fn structure_of(side: &ClassifiedTrace<'_>) -> Option<Box<Structure>> {
    let category = |id: NameId| side.class(id).category;
    side.structure_search().and_then(|s| report(side.trace, s, &category)).map(Box::new)
}

/// Summarises a classified trace; its structure search is the side's
/// ([`ClassifiedTrace::structure_search`]), made once for the summary and every later step.
pub fn summarize(side: &ClassifiedTrace<'_>, file: Option<&str>) -> TraceSummary {
    let trace = side.trace;
    let mut categories: Vec<SummaryRow> =
        side.by_category().into_iter().map(|(category, acc)| SummaryRow { category, trace: acc.stats(side) }).collect();
    categories.sort_by(|a, b| b.trace.time_us.total_cmp(&a.trace.time_us).then(a.category.cmp(&b.category)));
    let mut fused = SideAcc::default();
    for k in &trace.kernels {
        if side.class(k.name).is_fused() {
            fused.add(k.name, k.dur);
        }
    }
    let structure = structure_of(side);
    TraceSummary {
        platforms: vec![PlatformEntry::new(side, "trace", file)],
        categories,
        fused_kernels: fused.stats(side).kernels,
        structure,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use formats::read_trace;

    #[test]
    fn round3_never_gives_negative_zero() {
        let empty: f64 = std::iter::empty::<f64>().sum();
        for x in [empty, -0.0, -0.0004, 100.0 * empty / 3.0] {
            assert!(round3(x).is_sign_positive() && round3(x) == 0.0, "{x}");
        }
        assert_eq!(round3(-1.23456), -1.235);
        assert_eq!(round3(2.0004), 2.0);
    }

    pub(crate) fn by_prefix(name: &str) -> Classification {
        use Category::*;
        let (category, components) = match name.split('_').next().unwrap_or("") {
            "gemm" => (Gemm, vec![Gemm]),
            "fusednorm" => (Norm, vec![Elementwise, Norm]),
            "add" => (Elementwise, vec![Elementwise]),
            "norm" => (Norm, vec![Norm]),
            _ => (Other, vec![Other]),
        };
        Classification { category, components, rule: None }
    }

    #[test]
    fn groups_by_category_with_names_sorted_by_time() {
        let ev =
            |n: &str, dur: f64| format!(r#"{{"ph":"X","cat":"kernel","name":"{n}","pid":0,"ts":{dur},"dur":{dur}}}"#);
        let text = format!(
            r#"{{"cupti_version":1,"traceEvents":[{},{},{},{},{},{{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"ts":1,"dur":0.5,"args":{{"bytes":64}}}}]}}"#,
            ev("gemm_a", 10.0),
            ev("gemm_b", 30.0),
            ev("gemm_a", 10.0),
            ev("fusednorm_x", 5.0),
            ev("odd", 5.0)
        );
        let s = summarize(
            &ClassifiedTrace::with_classifier(&read_trace(text.as_bytes()).unwrap(), &by_prefix),
            Some("t.json"),
        );
        assert_eq!(s.platforms[0].kernels, 5);
        // GPU time holds the memset; the shares are of the kernels alone.
        assert_eq!((s.platforms[0].gpu_time_us, s.platforms[0].kernel_time_us), (60.5, 60.0));
        assert_eq!(s.platforms[0].memset, TransferStats { count: 1, time_us: 0.5, bytes: 64 });
        let cats: Vec<_> = s.categories.iter().map(|r| (r.category, r.trace.count, r.trace.time_us)).collect();
        assert_eq!(cats, vec![(Category::Gemm, 3, 50.0), (Category::Norm, 1, 5.0), (Category::Other, 1, 5.0)]);
        let gemm = &s.categories[0].trace;
        assert_eq!(gemm.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), vec!["gemm_b", "gemm_a"]);
        assert!((gemm.share_pct - 83.333).abs() < 1e-9);
        assert_eq!(gemm.mean_us, 16.667);
        assert_eq!(s.fused_kernels.len(), 1);
        assert_eq!(s.fused_kernels[0].components, vec![Category::Elementwise, Category::Norm]);
    }
}
