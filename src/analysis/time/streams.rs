//! Every stream of every device of one whole trace (`fusionscope trace`): each stream's kernel
//! count and the unions of its kernels — busy, computation, communication — by the same rules
//! as the ranks fold's streams (`crate::ranks::fold`), so the two agree
//! (`docs/ranks.md`, "Reading a rank"). Copies have no stream in the trace model: memcpy stays
//! per device, in the device timelines.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::timeline::Intervals;
use crate::summary::{round3, ClassifiedTrace};
use classify::category::Category;
use trace::platform::device_names;

/// One stream's figures (kernels only: the trace model keeps no stream for copies).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamFigures {
    pub stream: i64,
    pub kernels: u64,
    pub busy_us: f64,
    pub computation_us: f64,
    pub communication_us: f64,
}

/// One device's streams, busiest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceStreams {
    /// The device's name as the timelines give it.
    pub device: String,
    pub pid: i64,
    pub streams: Vec<StreamFigures>,
}

/// Every device that ran kernels (by pid), with its streams.
pub fn device_streams(side: &ClassifiedTrace<'_>) -> Vec<DeviceStreams> {
    type Spans = (u64, Vec<(f64, f64)>, Vec<(f64, f64)>);
    let mut by_stream: BTreeMap<(i64, i64), Spans> = BTreeMap::new();
    for k in &side.trace.kernels {
        let e = by_stream.entry((k.device, k.stream)).or_default();
        e.0 += 1;
        let span = (k.ts, k.ts + k.dur);
        if side.class(k.name).category == Category::Communication {
            e.2.push(span);
        } else {
            e.1.push(span);
        }
    }
    let mut devices: Vec<DeviceStreams> = Vec::new();
    for ((pid, stream), (kernels, comp, comm)) in by_stream {
        let busy = Intervals::union(comp.iter().chain(&comm).copied().collect());
        let figures = StreamFigures {
            stream,
            kernels,
            busy_us: round3(busy.length()),
            computation_us: round3(Intervals::union(comp).length()),
            communication_us: round3(Intervals::union(comm).length()),
        };
        match devices.last_mut() {
            Some(d) if d.pid == pid => d.streams.push(figures),
            _ => devices.push(DeviceStreams { device: String::new(), pid, streams: vec![figures] }),
        }
    }
    let pids: Vec<i64> = devices.iter().map(|d| d.pid).collect();
    for (d, name) in devices.iter_mut().zip(device_names(&side.trace.devices, side.platform.vendor, &pids)) {
        d.device = name;
        d.streams.sort_by(|a, b| b.busy_us.total_cmp(&a.busy_us).then(a.stream.cmp(&b.stream)));
    }
    devices
}
