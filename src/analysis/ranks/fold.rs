//! One rank's trace folded as it streams ([`RankSink`], an [`EventSink`]): every device's and
//! stream's timeline, and the ordered list of collective kernels with their process group,
//! kind and message size. Nothing is kept per compute kernel but its place in a bounded union,
//! so memory is O(collectives + distinct names + devices × spans), whatever the file's size
//! (`docs/ranks.md`, "Reading a rank").

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::collectives::{message_bytes, CollectiveKind};
use super::identity::DistributedInfo;
use super::spans::SpanSet;
use crate::summary::{round3, Classifier};
use crate::time::streamed_waits::StreamedWaits;
use crate::time::streams::StreamFigures;
use crate::time::timeline::{Intervals, SpanPart as Part, StreamedDevice, StreamedUnion, Timeline};
use crate::time::waits::Waits;
use classify::category::Category;
use limits::{
    RANKS_COLLECTIVES, RANKS_COMPUTE_SPANS, RANKS_DEVICES, RANKS_GROUPS, RANKS_GROUP_MEMBERS, RANKS_STREAMS,
    RANKS_STREAM_SPANS,
};
use trace::intern::{NameId, NameTable};
use trace::platform::{detect_vendor_of, device_names, Processor};
use trace::read::{EventSink, TraceHeader};
use trace::CollectiveArgs;
use trace::Distributed;
use trace::{Kernel, Launch, Transfer, TransferKind};
use units::group_digits;

/// One process group of a rank, or, when the trace does not record groups, one stream of
/// collectives (each NCCL communicator runs on its own stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupInfo {
    /// What collectives are matched by across ranks: the group's name (`"0"`), or
    /// `stream 84` when the trace records no group.
    pub key: String,
    /// `Process Group Description` (`default_pg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desc: Option<String>,
    /// Global ranks of the members, from the kernels' `Process Group Ranks` or
    /// `distributedInfo.pg_config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<u32>>,
    /// Members, from `Group size` (or the ranks listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// The key is a stream, not a recorded group.
    pub by_stream: bool,
}

/// One collective kernel as one rank ran it (µs in the rank's own clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectiveRecord {
    /// Index into [`RankSummary::collective_names`].
    pub name: u32,
    pub kind: CollectiveKind,
    /// Index into [`RankSummary::groups`].
    pub group: u32,
    pub device: i64,
    pub stream: i64,
    pub start_us: f64,
    pub end_us: f64,
    /// Message size (nccl-tests' convention, [`message_bytes`]) where the trace records it.
    pub bytes: Option<u64>,
    /// Time from the end of the device's previous collective (or its first GPU event) to this
    /// one's start: the step's work before it.
    pub lead_in_us: f64,
    /// Computation (union of compute kernels and memsets) in that lead-in; `None` when the
    /// device's computation spans passed [`RANKS_COMPUTE_SPANS`].
    pub compute_before_us: Option<f64>,
}

/// One device of a rank: its whole-trace timeline and its streams, busiest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    /// GPU process id (the CUDA ordinal; the HSA agent index on ROCm).
    pub pid: i64,
    pub timeline: Timeline,
    pub streams: Vec<StreamFigures>,
}

/// What one rank's file folds into: all the job report needs of it. The page's worker reads
/// each dropped file into one of these and hands them to [`super::job_report`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub file: String,
    pub distributed: Option<DistributedInfo>,
    /// Every device that ran GPU work, the busiest first.
    pub devices: Vec<DeviceFigures>,
    /// Distinct collective kernel names.
    pub collective_names: Vec<String>,
    pub groups: Vec<GroupInfo>,
    /// Collective kernels by start time.
    pub collectives: Vec<CollectiveRecord>,
    /// Collective kernels past [`RANKS_COLLECTIVES`], not recorded (their rank's later
    /// collectives cannot be matched).
    pub collectives_dropped: u64,
    pub kernels: u64,
    pub events: u64,
    /// The idle time between kernels on every stream, by cause, folded as the file streams
    /// ([`crate::time::streamed_waits`]); `null` when no kernel ran.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::waits::as_value")]
    pub waits: Option<Waits>,
    pub notes: Vec<String>,
}

impl RankSummary {
    /// The busiest device's timeline.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.devices.first().map(|d| &d.timeline)
    }
}

/// One device's running unions (as the summary-only mode's), with its exact computation spans.
#[derive(Default)]
struct DeviceFold {
    unions: StreamedDevice,
    compute_spans: SpanSet,
}

impl DeviceFold {
    fn add(&mut self, part: Part, ts: f64, end: f64) {
        if part == Part::Computation {
            self.compute_spans.add(ts, end);
        }
        self.unions.add(part, ts, end);
    }
}

struct StreamFold {
    kernels: u64,
    busy: StreamedUnion,
    computation: StreamedUnion,
    communication: StreamedUnion,
}

impl Default for StreamFold {
    fn default() -> Self {
        StreamFold {
            kernels: 0,
            busy: StreamedUnion::with_cap(RANKS_STREAM_SPANS),
            computation: StreamedUnion::with_cap(RANKS_STREAM_SPANS),
            communication: StreamedUnion::with_cap(RANKS_STREAM_SPANS),
        }
    }
}

/// A collective as recorded while reading (its name still an interned id).
struct Pending {
    name: NameId,
    kind: CollectiveKind,
    group: u32,
    device: i64,
    stream: i64,
    start: f64,
    end: f64,
    bytes: Option<u64>,
}

/// The [`EventSink`] of one rank: read with the readers' `Reader::with_sink` (`formats` crate); `finish`
/// gives the [`RankSummary`]. CPU-side events are skipped unread.
pub struct RankSink<'c> {
    classifier: Classifier<'c>,
    file: String,
    /// By name index: whether the name is communication (and its id), once classified.
    comm: Vec<Option<(NameId, bool)>>,
    devices: Vec<(i64, DeviceFold)>,
    device_index: FxHashMap<i64, usize>,
    untracked_device_events: u64,
    streams: Vec<((i64, i64), StreamFold)>,
    stream_index: FxHashMap<(i64, i64), usize>,
    untracked_stream_kernels: u64,
    groups: Vec<GroupInfo>,
    group_index: FxHashMap<String, u32>,
    /// Collectives of groups past [`RANKS_GROUPS`] go to one overflow group, named so.
    collectives: Vec<Pending>,
    dropped: u64,
    kernels: u64,
    /// Group members kept so far ([`RANKS_GROUP_MEMBERS`]), and lists not kept past it.
    members_kept: usize,
    member_lists_dropped: u64,
    waits: StreamedWaits,
}

impl RankSink<'static> {
    /// The sink of one rank's `file`, its kernels classified by the built-in rules.
    pub fn new(file: &str) -> Self {
        RankSink::with_classifier(crate::summary::BUILT_IN, file)
    }
}

impl<'c> RankSink<'c> {
    /// The sink of one rank's `file`, its kernels classified by `classifier` (tests plant one).
    pub fn with_classifier(classifier: Classifier<'c>, file: &str) -> Self {
        RankSink {
            classifier,
            file: file.to_string(),
            comm: Vec::new(),
            devices: Vec::new(),
            device_index: FxHashMap::default(),
            untracked_device_events: 0,
            streams: Vec::new(),
            stream_index: FxHashMap::default(),
            untracked_stream_kernels: 0,
            groups: Vec::new(),
            group_index: FxHashMap::default(),
            collectives: Vec::new(),
            dropped: 0,
            kernels: 0,
            members_kept: 0,
            member_lists_dropped: 0,
            waits: StreamedWaits::default(),
        }
    }

    fn device(&mut self, pid: i64) -> Option<&mut DeviceFold> {
        let i = match self.device_index.get(&pid) {
            Some(&i) => i,
            None if self.devices.len() < RANKS_DEVICES => {
                self.devices.push((pid, DeviceFold::default()));
                self.device_index.insert(pid, self.devices.len() - 1);
                self.devices.len() - 1
            }
            None => {
                self.untracked_device_events += 1;
                return None;
            }
        };
        Some(&mut self.devices[i].1)
    }

    fn stream(&mut self, device: i64, stream: i64) -> Option<&mut StreamFold> {
        let i = match self.stream_index.get(&(device, stream)) {
            Some(&i) => i,
            None if self.streams.len() < RANKS_STREAMS => {
                self.streams.push(((device, stream), StreamFold::default()));
                self.stream_index.insert((device, stream), self.streams.len() - 1);
                self.streams.len() - 1
            }
            None => {
                self.untracked_stream_kernels += 1;
                return None;
            }
        };
        Some(&mut self.streams[i].1)
    }

    fn is_comm(&mut self, names: &NameTable, name: NameId) -> bool {
        let i = name.index();
        if self.comm.len() <= i {
            self.comm.resize(i + 1, None);
        }
        let classifier = self.classifier;
        self.comm[i]
            .get_or_insert_with(|| (name, classifier(names.resolve(name)).category == Category::Communication))
            .1
    }

    /// The group a collective belongs to: its recorded process group, else its stream.
    fn group(&mut self, k: &Kernel, args: Option<&CollectiveArgs<'_>>) -> u32 {
        let recorded = args.and_then(|a| a.group_name);
        let key = match recorded {
            Some(g) => g.to_string(),
            None => format!("stream {}", k.stream),
        };
        if let Some(&g) = self.group_index.get(&key) {
            return g;
        }
        if self.groups.len() >= RANKS_GROUPS {
            let overflow = format!("(groups past the first {RANKS_GROUPS})");
            if let Some(&g) = self.group_index.get(&overflow) {
                return g;
            }
            return self.new_group(overflow, None, true);
        }
        let ranks = args.and_then(|a| a.group_ranks).and_then(parse_rank_list).filter(|r| {
            let fits = r.len() <= RANKS_GROUP_MEMBERS - self.members_kept;
            if fits {
                self.members_kept += r.len();
            } else {
                self.member_lists_dropped += 1;
            }
            fits
        });
        let size = args
            .and_then(|a| a.group_size)
            .and_then(|s| u32::try_from(s).ok())
            .or_else(|| ranks.as_ref().and_then(|r| u32::try_from(r.len()).ok()));
        let g = self.new_group(key, ranks, recorded.is_none());
        let info = &mut self.groups[g as usize];
        info.size = size;
        info.desc = args.and_then(|a| a.group_desc).map(str::to_string);
        g
    }

    fn new_group(&mut self, key: String, ranks: Option<Vec<u32>>, by_stream: bool) -> u32 {
        let g = self.groups.len() as u32;
        self.group_index.insert(key.clone(), g);
        self.groups.push(GroupInfo { key, desc: None, ranks, size: None, by_stream });
        g
    }

    fn add_kernel(&mut self, names: &NameTable, k: Kernel, args: Option<&CollectiveArgs<'_>>) {
        self.kernels += 1;
        self.waits.event(k.device, k.stream, k.ts, k.ts + k.dur, k.correlation);
        let comm = args.is_some() || self.is_comm(names, k.name);
        let end = k.ts + k.dur;
        let part = if comm { Part::Communication } else { Part::Computation };
        if let Some(d) = self.device(k.device) {
            d.add(part, k.ts, end);
        }
        if let Some(s) = self.stream(k.device, k.stream) {
            s.kernels += 1;
            s.busy.add(k.ts, end);
            if comm {
                s.communication.add(k.ts, end)
            } else {
                s.computation.add(k.ts, end)
            }
        }
        if !comm {
            return;
        }
        if self.collectives.len() >= RANKS_COLLECTIVES {
            self.dropped += 1;
            return;
        }
        let kind = args
            .and_then(|a| a.collective)
            .map(CollectiveKind::of_name)
            .filter(|k| *k != CollectiveKind::Other)
            .unwrap_or_else(|| CollectiveKind::of_name(names.resolve(k.name)));
        let bytes = args.and_then(|a| message_bytes(a.in_nelems, a.out_nelems, a.dtype));
        let group = self.group(&k, args);
        self.collectives.push(Pending {
            name: k.name,
            kind,
            group,
            device: k.device,
            stream: k.stream,
            start: k.ts,
            end,
            bytes,
        });
    }
}

/// `"[0, 1, 2]"` (c10d's `Process Group Ranks`) as ranks; `None` when it is not such a list.
fn parse_rank_list(text: &str) -> Option<Vec<u32>> {
    serde_json::from_str::<Vec<u32>>(text).ok()
}

impl EventSink for RankSink<'_> {
    type Output = RankSummary;
    const CPU_SIDE: bool = false;
    const LAUNCHES: bool = true;

    fn launch(&mut self, correlation: u64, launch: Launch) {
        self.waits.launch(correlation, launch.ts);
    }

    fn kernel(&mut self, names: &NameTable, k: Kernel) {
        self.add_kernel(names, k, None);
    }

    fn collective_kernel(&mut self, names: &NameTable, k: Kernel, args: &CollectiveArgs<'_>) {
        self.add_kernel(names, k, Some(args));
    }

    fn transfer(&mut self, _: &NameTable, t: Transfer) {
        // A memset is computation on the timeline (as TraceLens counts it).
        let part = if t.kind == TransferKind::Memcpy { Part::Memcpy } else { Part::Computation };
        if let Some(stream) = t.stream {
            self.waits.event(t.device, stream, t.ts, t.ts + t.dur, t.correlation);
        }
        if let Some(d) = self.device(t.device) {
            d.add(part, t.ts, t.ts + t.dur);
        }
    }

    fn finish(mut self, header: TraceHeader) -> RankSummary {
        let mut notes = Vec::new();
        let distributed = match header.distributed {
            Some(Distributed::Info(info)) => Some(info),
            Some(Distributed::Unreadable) => {
                notes.push("distributedInfo is not an object of rank, world_size and pg_config: ignored".into());
                None
            }
            None => None,
        };
        // Groups the trace lists in pg_config give the members the kernels may not name.
        if let Some(info) = &distributed {
            for g in &mut self.groups {
                if let Some(pg) = info.pg_config.iter().find(|p| !g.by_stream && p.pg_name == g.key) {
                    if g.ranks.is_none() && !pg.ranks.is_empty() {
                        g.ranks = Some(pg.ranks.clone());
                    }
                    g.size = g.size.or(pg.pg_size).or(g.ranks.as_ref().and_then(|r| u32::try_from(r.len()).ok()));
                    g.desc = g.desc.take().or_else(|| pg.pg_desc.clone());
                }
            }
        }
        let kernel_names = self.comm.iter().flatten().map(|(id, _)| header.names.resolve(*id));
        let (vendor, _) = detect_vendor_of(&header.versions, &header.devices, kernel_names);
        let pids: Vec<i64> = self.devices.iter().map(|d| d.0).collect();
        let names = device_names(&header.devices, vendor, &pids);
        let mut devices: Vec<DeviceFigures> = Vec::new();
        for ((pid, d), name) in self.devices.iter().zip(names) {
            let late = d.unions.late();
            if late > 0 {
                notes.push(format!(
                    "device {name}: {} spans started before spans already retired: its timeline figures are lower bounds",
                    group_digits(late)
                ));
            }
            for ((_, stream), s) in self.streams.iter().filter(|((dev, _), _)| dev == pid) {
                let late = s.busy.late() + s.computation.late() + s.communication.late();
                if late > 0 {
                    notes.push(format!(
                        "device {name}, stream {stream}: {} spans started before spans already retired: its figures are lower bounds",
                        group_digits(late)
                    ));
                }
            }
            let mut streams: Vec<StreamFigures> = self
                .streams
                .iter()
                .filter(|((dev, _), _)| dev == pid)
                .map(|((_, stream), s)| StreamFigures {
                    stream: *stream,
                    kernels: s.kernels,
                    busy_us: round3(s.busy.length()),
                    computation_us: round3(s.computation.length()),
                    communication_us: round3(s.communication.length()),
                })
                .collect();
            streams.sort_by(|a, b| b.busy_us.total_cmp(&a.busy_us).then(a.stream.cmp(&b.stream)));
            devices.push(DeviceFigures { pid: *pid, timeline: d.unions.timeline(name), streams });
        }
        devices.sort_by(|a, b| b.timeline.busy_us.total_cmp(&a.timeline.busy_us).then(a.pid.cmp(&b.pid)));
        if self.untracked_device_events > 0 {
            notes.push(format!(
                "{} GPU events ran on devices past the first {RANKS_DEVICES}: in no timeline",
                group_digits(self.untracked_device_events)
            ));
        }
        if self.untracked_stream_kernels > 0 {
            notes.push(format!(
                "{} kernels ran on streams past the first {RANKS_STREAMS}: in no stream's figures (their device's timeline has them)",
                group_digits(self.untracked_stream_kernels)
            ));
        }
        if self.member_lists_dropped > 0 {
            notes.push(format!(
                "{} process groups list more members than the {} kept in all: their members are unknown",
                group_digits(self.member_lists_dropped),
                group_digits(RANKS_GROUP_MEMBERS as u64)
            ));
        }
        if self.dropped > 0 {
            notes.push(format!(
                "{} collective kernels past the first {} not recorded: this rank's later collectives are not matched",
                group_digits(self.dropped),
                group_digits(RANKS_COLLECTIVES as u64)
            ));
        }

        let (waits, waits_note) = std::mem::take(&mut self.waits).finish();
        notes.extend(waits_note);
        // A CPU run's gaps between compiled kernels are its library calls and Python: no split
        // by a GPU's causes, as a single trace's reading gives none (`pipeline::time_report`).
        let names: Vec<&str> = devices.iter().map(|d| d.timeline.device.as_str()).collect();
        let waits = waits.filter(|_| Processor::of_devices(&names) == Processor::Gpu);
        let mut pending = std::mem::take(&mut self.collectives);
        pending.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.end.total_cmp(&b.end)));
        let collectives = self.records(&pending, &mut notes);
        let mut collective_names: Vec<String> = Vec::new();
        let mut name_index: FxHashMap<NameId, u32> = FxHashMap::default();
        let collectives = collectives
            .into_iter()
            .zip(&pending)
            .map(|(mut r, p)| {
                r.name = *name_index.entry(p.name).or_insert_with(|| {
                    collective_names.push(header.names.resolve(p.name).to_string());
                    (collective_names.len() - 1) as u32
                });
                r
            })
            .collect();
        RankSummary {
            file: self.file,
            distributed,
            devices,
            collective_names,
            groups: self.groups,
            collectives,
            collectives_dropped: self.dropped,
            kernels: self.kernels,
            events: header.event_count,
            waits,
            notes,
        }
    }
}

impl RankSink<'_> {
    /// The records of `pending` (sorted by start), with each one's lead-in and the computation
    /// in it, measured on its own device.
    fn records(&self, pending: &[Pending], notes: &mut Vec<String>) -> Vec<CollectiveRecord> {
        let mut per_device: FxHashMap<i64, (Option<Intervals>, f64)> = FxHashMap::default();
        for (pid, d) in &self.devices {
            let spans = d.compute_spans.intervals();
            if spans.is_none() {
                notes.push(format!(
                    "device pid {pid}: {} or more disjoint computation spans: the computation before each collective is left out",
                    group_digits(RANKS_COMPUTE_SPANS as u64)
                ));
            }
            let first = d.unions.bounds().map_or(f64::INFINITY, |b| b.0);
            per_device.insert(*pid, (spans, first));
        }
        // The end of the latest collective so far on each device.
        let mut last_end: FxHashMap<i64, f64> = FxHashMap::default();
        pending
            .iter()
            .map(|p| {
                let (spans, first) = per_device.get(&p.device).map_or((None, p.start), |(s, f)| (s.as_ref(), *f));
                let lo = last_end.get(&p.device).copied().unwrap_or(first.min(p.start));
                let hi = p.start.max(lo);
                let e = last_end.entry(p.device).or_insert(f64::NEG_INFINITY);
                *e = e.max(p.end);
                CollectiveRecord {
                    name: 0,
                    kind: p.kind,
                    group: p.group,
                    device: p.device,
                    stream: p.stream,
                    start_us: p.start,
                    end_us: p.end,
                    bytes: p.bytes,
                    lead_in_us: round3(hi - lo),
                    compute_before_us: spans.map(|s| round3(s.within(lo, hi))),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
