//! Kineto's events and top-level keys into the format-neutral trace: which `cat` is a kernel,
//! a memory copy or set, a CPU op, an annotation or a launch call; `External id` and
//! `correlation` as the links between them; c10d's collective args on NCCL/RCCL kernels;
//! `deviceProperties`, `distributedInfo` and the `*_version` keys.
//! Everything else (Python frames, `ac2g` flows, memory instants, metadata) is dropped, the
//! commonest before it is even parsed.

use super::error::{error_offset, strip, TraceError};
use super::extract;
use super::prefilter::{cpu_kernel, dropped, dropped_head, may_be_cpu_kernel, skip_unparsed};
use super::raw::{Num, RawArgs, RawDevice, RawEvent, RawJson};
use super::scan::{Item, ItemSink, Offer, Taken};
use limits::TRACE_NAME_BYTES;
use trace::compiled::Estimate;
use trace::intern::{NameId, NameTable};
use trace::read::{EventSink, TraceHeader};
use trace::{Annotation, CpuOp, DeviceProperties, Distributed, Kernel, Launch, RecordedShapes, Transfer, TransferKind};

/// Turns items, as the scanner finds them, into the header and the sink's events.
pub(super) struct Builder<S> {
    pub(super) header: TraceHeader,
    pub(super) sink: S,
    /// The processes whose C++ kernels ran as kernels of a CPU device ([`cpu_kernel`]), each once.
    pub(super) cpu_devices: Vec<i64>,
}

impl<S> Builder<S> {
    pub(super) fn new(sink: S) -> Self {
        Builder { header: TraceHeader::default(), sink, cpu_devices: Vec::new() }
    }

    /// The header and the sink at the end, a CPU device listed for each process that ran C++
    /// kernels (unless the trace lists a device of that id).
    pub(super) fn into_parts(self) -> (TraceHeader, S) {
        let Builder { mut header, sink, cpu_devices } = self;
        for pid in cpu_devices {
            if !header.devices.iter().any(|d| d.id == Some(pid)) {
                header.devices.push(DeviceProperties::cpu(pid));
            }
        }
        (header, sink)
    }
}

/// The processes listed as CPU devices, at most (a trace is one process; the bound keeps a
/// stranger's file of many from making the list's search quadratic). Kernels of more processes
/// are still read; their device is not named.
const CPU_DEVICES: usize = 64;

/// The scanner offers each event where it starts: a dropped one is counted and left to the scan
/// to step over, a kept one is read in one pass ([`extract::read_head`]), which also finds its
/// end; anything else goes the way of [`Builder::item`]. The outcome is that of `item` on the
/// event's bytes: the same prefilter verdict, and an event the extractor reads is one serde
/// reads the same.
impl<S: EventSink> ItemSink<TraceError> for Builder<S> {
    fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        Builder::item(self, item)
    }

    fn head(&mut self, offer: Offer<'_>) -> Result<Taken, TraceError> {
        if let Some(from) = dropped_head(offer.text, offer.limits.depth, dropped(S::CPU_SIDE, S::LAUNCHES)) {
            if !may_be_cpu_kernel(offer.text, from) {
                self.header.event_count += 1;
                return Ok(Taken::Skip { from });
            }
        }
        let mut event = RawEvent::default();
        let Some(head) = extract::read_head(offer.text, &mut event) else { return Ok(Taken::Nothing) };
        if head.len > offer.limits.item_bytes || head.depth > offer.limits.depth {
            return Ok(Taken::Nothing); // the scan gives the error
        }
        self.header.event_count += 1;
        self.event(&event);
        if self.header.names.bytes() > TRACE_NAME_BYTES {
            return Err(TraceError::TooManyNames { offset: offer.offset, limit: TRACE_NAME_BYTES });
        }
        Ok(Taken::Whole { len: head.len })
    }
}

impl<S: EventSink> Builder<S> {
    pub(super) fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        match item {
            Item::Event { bytes, offset } => {
                self.header.event_count += 1;
                if skip_unparsed(bytes, dropped(S::CPU_SIDE, S::LAUNCHES)) {
                    return Ok(());
                }
                // The one-pass extractor when it can vouch for serde's reading, else serde (which
                // also words every error).
                let event = match extract::event(bytes) {
                    Some(event) => event,
                    None => serde_json::from_slice::<RawEvent>(bytes).map_err(|e| TraceError::Event {
                        offset: offset + error_offset(bytes, &e),
                        message: strip(&e),
                    })?,
                };
                self.event(&event);
                if self.header.names.bytes() > TRACE_NAME_BYTES {
                    return Err(TraceError::TooManyNames { offset, limit: TRACE_NAME_BYTES });
                }
                Ok(())
            }
            Item::Field { key, value, offset } => self.field(key, value, offset),
        }
    }

    fn event(&mut self, e: &RawEvent<'_>) {
        if e.ph.as_str() != Some("X") {
            return;
        }
        let (Some(cat), Some(name)) = (e.cat.as_str(), e.name.as_str()) else { return };
        let (names, compiled, sink) = (&mut self.header.names, &mut self.header.compiled, &mut self.sink);
        let ts = e.ts.0.unwrap_or(0.0);
        let dur = e.dur.0.filter(|d| *d >= 0.0).unwrap_or(0.0);
        let no_args;
        let args = match &e.args.0 {
            Some(args) => args,
            None => {
                no_args = RawArgs::default();
                &no_args
            }
        };
        if cat == "cpu_op" && cpu_kernel(name) {
            // The process is the CPU device, the thread its stream; the range's own id links
            // the kernel to the range as a CPU op (the op that "launched" it).
            let pid = e.pid.int().unwrap_or(-1);
            if self.cpu_devices.len() < CPU_DEVICES && !self.cpu_devices.contains(&pid) {
                self.cpu_devices.push(pid);
            }
            let kernel = Kernel {
                name: names.intern(name),
                ts,
                dur,
                device: pid,
                stream: e.tid.int().unwrap_or(-1),
                correlation: None,
                external_id: args.external_id.id(),
                graph_node: false,
            };
            sink.kernel(names, kernel);
        }
        match cat {
            "kernel" => {
                let kernel = Kernel {
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    stream: args.stream.int().or(e.tid.int()).unwrap_or(-1),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                    graph_node: args.kind.as_str() == Some("Dispatch Task"),
                };
                match args.collective() {
                    Some(collective) => sink.collective_kernel(names, kernel, &collective),
                    None => sink.kernel(names, kernel),
                }
            }
            "gpu_memcpy" | "gpu_memset" => {
                let transfer = Transfer {
                    kind: if cat == "gpu_memcpy" { TransferKind::Memcpy } else { TransferKind::Memset },
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    stream: args.stream.int().or(e.tid.int()),
                    bytes: args.bytes.id(),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                };
                sink.transfer(names, transfer);
            }
            "cpu_op" | "user_annotation" if S::CPU_SIDE => {
                if cat == "user_annotation" {
                    sink.annotation(Annotation {
                        name: names.intern(name),
                        ts,
                        dur,
                        gpu: false,
                        pid: e.pid.int().unwrap_or(-1),
                    });
                }
                if let Some(external_id) = args.external_id.id() {
                    if let Some(estimate) = inductor_estimate(args) {
                        compiled.estimate(external_id, estimate);
                    }
                    sink.cpu_op(CpuOp {
                        name: names.intern(name),
                        ts,
                        dur,
                        tid: e.tid.int().unwrap_or(-1),
                        pid: e.pid.int().unwrap_or(-1),
                        external_id,
                        annotation: cat == "user_annotation",
                        shapes: if cat == "cpu_op" {
                            RecordedShapes {
                                dims: array_text(names, args.input_dims),
                                types: array_text(names, args.input_types),
                                concrete: array_text(names, args.concrete_inputs),
                                strides: args
                                    .input_strides
                                    .filter(|t| has_zero_stride(t.0))
                                    .and_then(|t| array_text(names, Some(t))),
                            }
                        } else {
                            RecordedShapes::default()
                        },
                    });
                }
            }
            "gpu_user_annotation" if S::CPU_SIDE => {
                sink.annotation(Annotation {
                    name: names.intern(name),
                    ts,
                    dur,
                    gpu: true,
                    pid: e.pid.int().unwrap_or(-1),
                });
            }
            "cuda_runtime" | "cuda_driver" if S::LAUNCHES => {
                if let Some(c) = args.correlation.id() {
                    let launch = Launch {
                        name: names.intern(name),
                        kernel: args.kernel.as_str().map(|k| names.intern(k)),
                        external_id: args.external_id.id(),
                        ts,
                        dur,
                        tid: e.tid.int().unwrap_or(-1),
                    };
                    sink.launch(c, launch);
                }
            }
            _ => {}
        }
    }

    fn field(&mut self, key: &[u8], value: &[u8], offset: u64) -> Result<(), TraceError> {
        let key_str = String::from_utf8_lossy(key);
        let err = |e: serde_json::Error| TraceError::Field {
            key: key_str.to_string(),
            offset: offset + error_offset(value, &e),
            message: strip(&e),
        };
        let versions = &mut self.header.versions;
        let slot = match key {
            b"deviceProperties" => {
                let devices: Vec<RawDevice> = match serde_json::from_slice(value) {
                    Ok(d) => d,
                    // Not a list: validate the JSON, then ignore the key.
                    Err(_) => {
                        serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                        Vec::new()
                    }
                };
                self.header.devices = devices
                    .into_iter()
                    .map(|d| DeviceProperties {
                        id: d.id.int(),
                        name: d.name.as_str().unwrap_or("").trim().to_string(),
                        warp_size: small(d.warp_size),
                        compute_major: small(d.compute_major),
                        compute_minor: small(d.compute_minor),
                        num_sms: small(d.num_sms),
                    })
                    .collect();
                return Ok(());
            }
            b"distributedInfo" => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                self.header.distributed = Some(
                    std::str::from_utf8(value)
                        .ok()
                        .and_then(super::distributed::parse_distributed_info)
                        .map_or(Distributed::Unreadable, Distributed::Info),
                );
                return Ok(());
            }
            b"cupti_version" => &mut versions.cupti_version,
            b"cuda_runtime_version" => &mut versions.cuda_runtime_version,
            b"cuda_driver_version" => &mut versions.cuda_driver_version,
            b"roctracer_version" => &mut versions.roctracer_version,
            b"hip_runtime_version" => &mut versions.hip_runtime_version,
            b"hip_driver_version" => &mut versions.hip_driver_version,
            _ => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                return Ok(());
            }
        };
        let v: serde_json::Value = serde_json::from_slice(value).map_err(err)?;
        *slot = match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s),
            other => Some(other.to_string()),
        };
        Ok(())
    }
}

/// Interns a recorded-shapes value when it is a JSON array (anything else reads as absent).
fn array_text(names: &mut NameTable, value: Option<RawJson<'_>>) -> Option<NameId> {
    let text = value?.0;
    text.starts_with('[').then(|| names.intern(text))
}

/// Whether a strides text (`[[4096, 1], [1, 0]]`) holds a stride of 0: an expanded input,
/// the only case the cost formulas read strides for. A byte scan, not a parse: it runs on
/// every recorded op.
fn has_zero_stride(text: &str) -> bool {
    let b = text.as_bytes();
    let before = |i: usize| b[..i].iter().rev().find(|c| !c.is_ascii_whitespace()).copied();
    let after = |i: usize| b[i + 1..].iter().find(|c| !c.is_ascii_whitespace()).copied();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'0' && matches!(before(i), Some(b'[' | b',')) && matches!(after(i), Some(b',' | b']')))
}

fn small(n: Num) -> Option<u32> {
    n.int().and_then(|v| u32::try_from(v).ok())
}

/// Inductor's own estimate on a Triton launch's op (`kernel_num_gb`, `kernel_flop`), where
/// the launch records one: GB as Inductor writes them (10⁹ bytes), rounded to whole bytes.
fn inductor_estimate(args: &RawArgs<'_>) -> Option<Estimate> {
    let bytes = args.kernel_num_gb.0.filter(|gb| gb.is_finite() && *gb >= 0.0 && *gb < 1.8e10);
    let estimate = Estimate { bytes: bytes.map(|gb| (gb * 1e9).round() as u64), flops: args.kernel_flop.id() };
    (estimate.bytes.is_some() || estimate.flops.is_some()).then_some(estimate)
}

#[cfg(test)]
mod tests {
    use super::has_zero_stride;

    #[test]
    fn an_expanded_input_is_a_stride_of_zero() {
        assert!(has_zero_stride("[[4096, 1], [], [1, 0], [], [4096, 1]]"));
        assert!(has_zero_stride("[[0]]"));
        assert!(has_zero_stride("[[0,1]]"));
        for plain in ["[[4096, 1], [1]]", "[[10, 1], [100, 10]]", "[[], []]", "[[1024, 0.5]]", "[]"] {
            assert!(!has_zero_stride(plain), "{plain}");
        }
    }
}
