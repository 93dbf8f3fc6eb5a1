//! The summary-only mode (`fusionscope trace FILE --summary-only`, `docs/trace-analysis.md`,
//! "Summary only"): kernels and memory copies are folded as they stream out of the reader into
//! per-name statistics and per-device timeline unions, and nothing is kept per event. Memory
//! grows with the distinct names (held to [`limits::TRACE_NAME_BYTES`]), and is otherwise
//! bounded ([`limits::SUMMARY_ONLY_DEVICES`] devices of five unions of at most
//! [`limits::SUMMARY_ONLY_SPANS`] spans), whatever the number of events.
//!
//! The categories, the kernel totals, the fused kernels and the platform are those the whole
//! trace's summary gives ([`crate::summarize`]); so are the whole-trace timelines unless a span
//! reaches back past the ones retired (then they are lower bounds, and a note says so). What
//! needs the whole kernel list or the CPU side is left out ([`LEFT_OUT`]).
//!
//! ```
//! use fusionscope_analysis::classify;
//! use fusionscope_analysis::summary_only::SummarySink;
//! use formats::Reader;
//! let text = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0}]}"#;
//! let mut reader = Reader::with_sink(SummarySink::new(Some("t.json")));
//! reader.feed(text).unwrap();
//! let summary = reader.finish().unwrap();
//! assert_eq!(summary.platforms[0].kernels, 1);
//! assert_eq!(summary.timeline.unwrap().busy_us, 2.0);
//! ```

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::summary::{
    compiled_class, round3, with_compiled, Classifier, KernelStat, PlatformEntry, SideStats, SummaryRow, TransferStats,
    GPU_TIME_DEFINITION,
};
use crate::time::streamed_waits::StreamedWaits;
use crate::time::timeline::{SpanPart as Part, StreamedDevice, Timeline};
use crate::time::waits::Waits;
use classify::category::Category;
use classify::Classification;
use limits::SUMMARY_ONLY_DEVICES;
use trace::compiled::CompiledGroup;
use trace::intern::{NameId, NameTable};
use trace::platform::{detect_vendor_of, device_names, Processor};
use trace::{EventSink, TraceHeader};
use trace::{Kernel, Launch, Transfer, TransferKind};
use units::group_digits;

/// What the summary-only mode does not compute, as its output lists it.
pub const LEFT_OUT: [&str; 3] = [
    "structure (steps, phases, layers): needs the whole kernel sequence",
    "per-step timelines (ProfilerStep windows): need every span kept until the windows are known",
    "per-op table, roofline figures and unattributed GPU work: need every kernel joined to its CPU op",
];

/// One distinct kernel name: how often it ran, its total, mean, shortest and longest run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRange {
    pub name: String,
    pub category: Category,
    pub count: u64,
    pub time_us: f64,
    pub mean_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// `fusionscope trace --summary-only [--json]`: the parts of the summary ([`crate::TraceSummary`])
/// and of the timeline ([`crate::pipeline::TraceTime`]) that a fold can give, under the same
/// keys, with every kernel's range and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryOnly {
    pub platforms: Vec<PlatformEntry>,
    /// Categories present, longest total time first.
    pub categories: Vec<SummaryRow>,
    /// Kernels that fuse several operations, longest first.
    pub fused_kernels: Vec<KernelStat>,
    /// Every distinct kernel name, longest total first.
    pub kernels: Vec<KernelRange>,
    /// The whole trace on the busiest device; `null` when no GPU event ran.
    pub timeline: Option<Timeline>,
    /// The other devices' whole-trace timelines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_devices: Vec<Timeline>,
    /// Remarks on the timeline (approximate figures, devices without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The idle time between kernels on every stream, by cause, folded as the trace streams
    /// ([`crate::time::streamed_waits`]); no step windows. `null` when no kernel ran.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::waits::as_value")]
    pub waits: Option<Waits>,
    /// What this mode does not compute ([`LEFT_OUT`]).
    pub left_out: Vec<String>,
    /// Events in `traceEvents`, kept or not.
    pub events: u64,
}

/// One kernel name's running figures.
struct NameFold {
    id: NameId,
    count: u64,
    time: f64,
    min: f64,
    max: f64,
    class: Classification,
}

/// One device's running timeline ([`StreamedDevice`]), and when its first kernel ran.
#[derive(Default)]
struct DeviceFold {
    /// Earliest kernel start and the arrival number of the kernel with it: orders the devices
    /// as the first kernel of each in the time-sorted trace would.
    first_kernel: Option<(f64, u64)>,
    unions: StreamedDevice,
}

/// The [`EventSink`] of the summary-only mode: read with the readers' `Reader::with_sink` (`formats` crate), its
/// `finish` gives the [`SummaryOnly`]. CPU-side events are skipped unread.
pub struct SummarySink<'c> {
    classifier: Classifier<'c>,
    file: Option<String>,
    /// By name index: each kernel name's figures (`None` for other names).
    names: Vec<Option<NameFold>>,
    memcpy: TransferStats,
    memset: TransferStats,
    devices: Vec<(i64, DeviceFold)>,
    device_index: FxHashMap<i64, usize>,
    /// GPU events of devices past [`SUMMARY_ONLY_DEVICES`].
    untracked: u64,
    kernels: u64,
    gpu_time: f64,
    waits: StreamedWaits,
    /// What the compiler's groups say of names not yet met ([`crate::summary::with_compiled`]).
    compiled: FxHashMap<NameId, Classification>,
}

impl SummarySink<'static> {
    /// The sink of `file`, its kernels classified by the built-in rules.
    pub fn new(file: Option<&str>) -> Self {
        SummarySink::with_classifier(crate::summary::BUILT_IN, file)
    }
}

impl<'c> SummarySink<'c> {
    /// The sink of `file`, its kernels classified by `classifier` (tests plant one).
    pub fn with_classifier(classifier: Classifier<'c>, file: Option<&str>) -> Self {
        SummarySink {
            classifier,
            file: file.map(str::to_string),
            names: Vec::new(),
            memcpy: TransferStats::default(),
            memset: TransferStats::default(),
            devices: Vec::new(),
            device_index: FxHashMap::default(),
            untracked: 0,
            waits: StreamedWaits::default(),
            kernels: 0,
            gpu_time: 0.0,
            compiled: FxHashMap::default(),
        }
    }

    fn device(&mut self, pid: i64) -> Option<&mut DeviceFold> {
        let i = match self.device_index.get(&pid) {
            Some(&i) => i,
            None if self.devices.len() < SUMMARY_ONLY_DEVICES => {
                self.devices.push((pid, DeviceFold::default()));
                self.device_index.insert(pid, self.devices.len() - 1);
                self.devices.len() - 1
            }
            None => {
                self.untracked += 1;
                return None;
            }
        };
        Some(&mut self.devices[i].1)
    }
}

impl EventSink for SummarySink<'_> {
    type Output = SummaryOnly;
    const CPU_SIDE: bool = false;
    const LAUNCHES: bool = true;

    fn launch(&mut self, correlation: u64, launch: Launch) {
        self.waits.launch(correlation, launch.ts);
    }

    fn compiled_name(&mut self, _: &NameTable, name: NameId, group: &CompiledGroup) {
        if let Some(c) = compiled_class(group) {
            self.compiled.insert(name, c);
        }
    }

    fn kernel(&mut self, names: &NameTable, k: Kernel) {
        self.waits.event(k.device, k.stream, k.ts, k.ts + k.dur, k.correlation);
        let i = k.name.index();
        if self.names.len() <= i {
            self.names.resize_with(i + 1, || None);
        }
        let classifier = self.classifier;
        let compiled = &mut self.compiled;
        let fold = self.names[i].get_or_insert_with(|| NameFold {
            id: k.name,
            count: 0,
            time: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            class: with_compiled(classifier(names.resolve(k.name)), compiled.remove(&k.name)),
        });
        fold.count += 1;
        fold.time += k.dur;
        fold.min = fold.min.min(k.dur);
        fold.max = fold.max.max(k.dur);
        let part = if fold.class.category == Category::Communication { Part::Communication } else { Part::Computation };
        let seq = self.kernels;
        self.kernels += 1;
        self.gpu_time += k.dur;
        if let Some(d) = self.device(k.device) {
            if d.first_kernel.is_none_or(|(ts, _)| k.ts.total_cmp(&ts).is_lt()) {
                d.first_kernel = Some((k.ts, seq));
            }
            d.unions.add(part, k.ts, k.ts + k.dur);
        }
    }

    fn transfer(&mut self, _: &NameTable, t: Transfer) {
        let (stats, part) = match t.kind {
            TransferKind::Memcpy => (&mut self.memcpy, Part::Memcpy),
            // A memset is computation on the timeline (as TraceLens counts it).
            TransferKind::Memset => (&mut self.memset, Part::Computation),
        };
        if let Some(stream) = t.stream {
            self.waits.event(t.device, stream, t.ts, t.ts + t.dur, t.correlation);
        }
        stats.count += 1;
        stats.time_us += t.dur;
        stats.bytes += t.bytes.unwrap_or(0);
        if let Some(d) = self.device(t.device) {
            d.unions.add(part, t.ts, t.ts + t.dur);
        }
    }

    fn finish(self, header: TraceHeader) -> SummaryOnly {
        let names = &header.names;
        let folds: Vec<&NameFold> = self.names.iter().flatten().collect();
        let (vendor, evidence) =
            detect_vendor_of(&header.versions, &header.devices, folds.iter().map(|f| names.resolve(f.id)));

        // Devices that ran kernels, in order of their first kernel.
        let mut firsts: Vec<((f64, u64), i64)> =
            self.devices.iter().filter_map(|(pid, d)| d.first_kernel.map(|f| (f, *pid))).collect();
        firsts.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0).then(a.0 .1.cmp(&b.0 .1)));
        let kernel_pids: Vec<i64> = firsts.iter().map(|f| f.1).collect();
        let mut device_list: Vec<String> = Vec::new();
        for name in device_names(&header.devices, vendor, &kernel_pids) {
            if !device_list.contains(&name) {
                device_list.push(name);
            }
        }
        let (mut memcpy, mut memset) = (self.memcpy, self.memset);
        let copies = memcpy.time_us + memset.time_us;
        memcpy.time_us = round3(memcpy.time_us);
        memset.time_us = round3(memset.time_us);
        let platform = PlatformEntry {
            key: "trace".into(),
            file: self.file,
            vendor,
            vendor_evidence: evidence,
            vendor_inferred: evidence.inferred(),
            devices: device_list,
            kernels: self.kernels as usize,
            gpu_time_us: round3(self.gpu_time + copies),
            gpu_time_definition: GPU_TIME_DEFINITION.to_string(),
            kernel_time_us: round3(self.gpu_time),
            memcpy,
            memset,
        };

        let stat = |f: &NameFold| KernelStat {
            name: names.resolve(f.id).to_string(),
            count: f.count,
            time_us: round3(f.time),
            category: f.class.category,
            components: f.class.components.clone(),
        };
        let mut by_category: BTreeMap<Category, (Vec<KernelStat>, f64)> = BTreeMap::new();
        for &f in &folds {
            let e = by_category.entry(f.class.category).or_default();
            e.0.push(stat(f));
            e.1 += f.time;
        }
        let mut categories: Vec<SummaryRow> = by_category
            .into_iter()
            .map(|(category, (ks, time))| SummaryRow {
                category,
                trace: SideStats::of_kernels(ks, time, self.gpu_time),
            })
            .collect();
        categories.sort_by(|a, b| b.trace.time_us.total_cmp(&a.trace.time_us).then(a.category.cmp(&b.category)));
        let fused: Vec<&NameFold> = folds.iter().copied().filter(|f| f.class.is_fused()).collect();
        let fused_time = fused.iter().map(|f| f.time).fold(0.0, |a, b| a + b);
        let fused: Vec<KernelStat> = fused.into_iter().map(stat).collect();
        let mut kernels: Vec<KernelRange> = folds
            .iter()
            .map(|f| KernelRange {
                name: names.resolve(f.id).to_string(),
                category: f.class.category,
                count: f.count,
                time_us: round3(f.time),
                mean_us: round3(f.time / f.count as f64),
                min_us: round3(f.min),
                max_us: round3(f.max),
            })
            .collect();
        kernels.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));

        // Timelines: every device with GPU work, the busiest first (ties in device order).
        let mut devices: Vec<&(i64, DeviceFold)> = self.devices.iter().collect();
        devices.sort_by_key(|d| d.0);
        let pids: Vec<i64> = devices.iter().map(|d| d.0).collect();
        let mut notes = Vec::new();
        let mut timelines: Vec<Timeline> = Vec::new();
        for ((_, d), name) in devices.iter().zip(device_names(&header.devices, vendor, &pids)) {
            let late = d.unions.late();
            if late > 0 {
                notes.push(format!(
                    "device {name}: {} spans started before spans already retired (more than {} disjoint spans earlier): its timeline figures are lower bounds",
                    group_digits(late),
                    group_digits(limits::SUMMARY_ONLY_SPANS as u64 / 2)
                ));
            }
            timelines.push(d.unions.timeline(name));
        }
        timelines.sort_by(|a, b| b.busy_us.total_cmp(&a.busy_us));
        if self.untracked > 0 {
            notes.push(format!(
                "{} GPU events ran on devices past the first {SUMMARY_ONLY_DEVICES}: counted in every total, but in no timeline",
                group_digits(self.untracked)
            ));
        }
        let (waits, waits_note) = self.waits.finish();
        notes.extend(waits_note);
        // A CPU run's gaps between compiled kernels are its library calls and Python: no split
        // by a GPU's causes, as the whole reading gives none (`pipeline::time_report`).
        let waits = waits.filter(|_| platform.processor() == Processor::Gpu);
        let mut timelines = timelines.into_iter();
        SummaryOnly {
            platforms: vec![platform],
            categories,
            fused_kernels: SideStats::of_kernels(fused, fused_time, self.gpu_time).kernels,
            kernels,
            timeline: timelines.next(),
            other_devices: timelines.collect(),
            notes,
            waits,
            left_out: LEFT_OUT.iter().map(|s| s.to_string()).collect(),
            events: header.event_count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize;
    use crate::summary::tests::by_prefix;
    use crate::summary::ClassifiedTrace;
    use formats::{read_trace, Reader};

    fn kernel(name: &str, pid: i64, ts: f64, dur: f64) -> String {
        format!(r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{pid},"tid":7,"ts":{ts},"dur":{dur}}}"#)
    }

    fn summary_only(text: &str, chunk: usize) -> SummaryOnly {
        let mut r = Reader::with_sink(SummarySink::with_classifier(&by_prefix, Some("t.json")));
        for c in text.as_bytes().chunks(chunk) {
            r.feed(c).unwrap();
        }
        r.finish().unwrap()
    }

    #[test]
    fn folds_names_with_their_range_and_matches_the_whole_summary() {
        let events = [
            kernel("gemm_a", 1, 50.0, 10.0),
            kernel("add_x", 0, 5.0, 2.0),
            kernel("gemm_a", 1, 10.0, 30.0),
            kernel("fusednorm_y", 0, 12.0, 4.0),
            kernel("add_x", 0, 1.0, 3.0),
            r#"{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"ts":30,"dur":1.5,"args":{"bytes":1024}}"#
                .into(),
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":100,"args":{"External id":3}}"#.into(),
        ];
        let text = format!(r#"{{"cupti_version":1,"traceEvents":[{}]}}"#, events.join(","));
        let s = summary_only(&text, 7);
        let whole = summarize(
            &ClassifiedTrace::with_classifier(&read_trace(text.as_bytes()).unwrap(), &by_prefix),
            Some("t.json"),
        );
        assert_eq!(s.platforms, whole.platforms);
        assert_eq!(s.categories, whole.categories);
        assert_eq!(s.fused_kernels, whole.fused_kernels);
        // Device 1's first kernel starts later (10 µs) than device 0's (1 µs), though it came first.
        assert_eq!(s.platforms[0].devices, vec!["GPU (pid 0)", "GPU (pid 1)"]);
        let gemm = &s.kernels[0];
        assert_eq!((gemm.name.as_str(), gemm.count, gemm.time_us), ("gemm_a", 2, 40.0));
        assert_eq!((gemm.mean_us, gemm.min_us, gemm.max_us), (20.0, 10.0, 30.0));
        assert_eq!(s.events, 7);
        assert_eq!(s.left_out.len(), LEFT_OUT.len());
        assert!(s.notes.is_empty(), "{:?}", s.notes);
        // Device 1 is busier (40 µs over 10–60); device 0 has 1–4, 5–7, 12–16 and the copy 30–31.5.
        let t = s.timeline.as_ref().unwrap();
        assert_eq!((t.device.as_str(), t.total_us, t.busy_us), ("GPU (pid 1)", 50.0, 40.0));
        let o = &s.other_devices[0];
        assert_eq!((o.total_us, o.busy_us, o.computation_us, o.memcpy_us), (30.5, 10.5, 9.0, 1.5));
        assert_eq!(o.exposed_memcpy_us, 1.5);
    }

    #[test]
    fn the_timeline_matches_the_whole_trace_timeline() {
        use crate::summary::ClassifiedTrace;
        use crate::time::timeline::timelines;
        let mut events = Vec::new();
        // Two streams of overlapping compute, communication in between, out of order in the file.
        for i in (0..200).rev() {
            let ts = i as f64 * 3.0;
            events.push(kernel("gemm_a", 0, ts, 2.5));
            events.push(kernel("nccl_allreduce", 0, ts + 1.0, 1.7));
        }
        let text = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
        let classes = |n: &str| {
            let mut c = by_prefix(n);
            if n.starts_with("nccl") {
                c.category = Category::Communication;
            }
            c
        };
        let trace = read_trace(text.as_bytes()).unwrap();
        let whole = timelines(&ClassifiedTrace::with_classifier(&trace, &classes));
        let mut r = Reader::with_sink(SummarySink::with_classifier(&classes, None));
        for c in text.as_bytes().chunks(1 << 12) {
            r.feed(c).unwrap();
        }
        let s = r.finish().unwrap();
        assert_eq!(s.timeline.as_ref(), Some(&whole[0].whole));
        assert!(s.timeline.as_ref().unwrap().exposed_communication_us > 0.0);
    }

    #[test]
    fn cpu_side_names_are_not_interned() {
        let text = format!(
            r#"{{"traceEvents":[{},{{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":9,"args":{{"External id":3,"Input Dims":[[2,2]]}}}}]}}"#,
            kernel("gemm_a", 0, 1.0, 1.0)
        );
        struct Count<'c>(SummarySink<'c>);
        impl EventSink for Count<'_> {
            type Output = usize;
            const CPU_SIDE: bool = false;
            fn kernel(&mut self, names: &NameTable, k: Kernel) {
                self.0.kernel(names, k)
            }
            fn transfer(&mut self, names: &NameTable, t: Transfer) {
                self.0.transfer(names, t)
            }
            fn finish(self, header: TraceHeader) -> usize {
                header.names.len()
            }
        }
        let mut r = Reader::with_sink(Count(SummarySink::with_classifier(&by_prefix, None)));
        r.feed(text.as_bytes()).unwrap();
        assert_eq!(r.finish().unwrap(), 1, "only the kernel's name");
    }

    #[test]
    fn devices_past_the_limit_count_in_the_totals_with_a_note() {
        let events: Vec<String> =
            (0..SUMMARY_ONLY_DEVICES as i64 + 2).map(|pid| kernel("gemm_a", pid, pid as f64, 1.0)).collect();
        let s = summary_only(&format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")), 1 << 16);
        assert_eq!(s.platforms[0].kernels, SUMMARY_ONLY_DEVICES + 2);
        assert_eq!(1 + s.other_devices.len(), SUMMARY_ONLY_DEVICES);
        assert!(
            s.notes.iter().any(|n| n.starts_with("2 GPU events ran on devices past the first 64")),
            "{:?}",
            s.notes
        );
    }
}
