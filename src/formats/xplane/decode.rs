//! Decoding a gathered profile: prost reads the `XSpace`, each GPU plane's stream lines become
//! kernels and copies (a CPU run's ops on the host plane, where there is no GPU), and each
//! program's HLO module its kernels' exact groups. Only in builds
//! that read traces (natively, and the page's worker: the `readers` feature), so that the page's
//! own build compiles no protobuf decoder.

use std::collections::BTreeMap;

use prost::Message;
use rustc_hash::FxHashMap;

use super::error::XplaneError;
use super::hlo;
use super::proto::{Value, XPlane, XSpace};
use super::stream::{gpu_number, line_kind, LineKind, StreamEvent, CPU_DEVICE_NUMBER, HOST_CPU_PLANE};
use limits::TRACE_NAME_BYTES;
use trace::compiled::Compiled;
use trace::read::{EventSink, TraceHeader};
use trace::{DeviceProperties, TraceFormat};

/// The profile's GPU events into `sink`.
pub(super) fn read<S: EventSink>(bytes: &[u8], mut sink: S) -> Result<S::Output, XplaneError> {
    let space = XSpace::decode(bytes).map_err(|e| XplaneError::Decode { message: e.to_string() })?;
    if !space.planes.iter().any(|p| p.name.starts_with("/device:") || p.name.starts_with("/host:")) {
        let names: Vec<String> = space.planes.iter().take(4).map(|p| format!("{:?}", p.name)).collect();
        let names = if names.is_empty() { "none: it has no planes".to_string() } else { names.join(", ") };
        return Err(XplaneError::NoPlanes { names });
    }
    let mut header =
        TraceHeader { json_bytes: bytes.len() as u64, format: TraceFormat::Xplane, ..TraceHeader::default() };
    let mut next_op_id = 1u64;
    let mut programs = Programs::of(&space);
    let mut gpus = 0usize;
    for plane in &space.planes {
        if let Some(device) = gpu_number(&plane.name) {
            gpus += 1;
            emit_plane(plane, Ran::Gpu(device), &mut header, &mut sink, &mut next_op_id, &mut programs)?;
        }
    }
    // A CPU run (jax[cpu]) has no GPU plane: XLA's CPU client runs each op of the program on
    // the host plane's threads, as an event with the same `hlo_op` stat a GPU kernel has.
    if gpus == 0 {
        for plane in space.planes.iter().filter(|p| p.name == HOST_CPU_PLANE) {
            emit_plane(plane, Ran::Cpu, &mut header, &mut sink, &mut next_op_id, &mut programs)?;
        }
    }
    Ok(sink.finish(header))
}

/// The programs' HLO modules the profile records (`/host:metadata`), and the groups made of
/// them so far, each made once.
pub(super) struct Programs {
    /// Program id → module.
    pub(super) modules: FxHashMap<i64, hlo::Module>,
    /// Module name → program id, for a kernel that names its module but not its program.
    pub(super) by_name: FxHashMap<String, i64>,
    /// (program, HLO op) → the group's index in the header's compiled groups (`None`: the
    /// module has no such instruction).
    made: FxHashMap<(i64, String), Option<u32>>,
}

impl Programs {
    /// The modules of the metadata plane: each event metadata entry is a program (its id the
    /// program id) with its optimized HLO in a stat `Hlo Proto`. A module that cannot be
    /// decoded is left out: its kernels' groups are inferred, as without HLO.
    pub(super) fn of(space: &XSpace) -> Programs {
        let mut modules = FxHashMap::default();
        for plane in space.planes.iter().filter(|p| p.name == "/host:metadata") {
            let Some(hlo_stat) = plane.stat_metadata.values().find(|m| m.name == "Hlo Proto").map(|m| m.id) else {
                continue;
            };
            for (&program, meta) in &plane.event_metadata {
                let bytes = meta.stats.iter().find_map(|s| match &s.value {
                    Some(Value::Bytes(b)) if s.metadata_id == hlo_stat => Some(b),
                    _ => None,
                });
                let decoded = bytes.and_then(|b| hlo::HloProto::decode(b.as_slice()).ok());
                if let Some(module) = decoded.and_then(|p| hlo::Module::new(p.hlo_module?).ok()) {
                    modules.insert(program, module);
                }
            }
        }
        let by_name = modules.iter().map(|(&id, m)| (m.name().to_string(), id)).collect();
        Programs { modules, by_name, made: FxHashMap::default() }
    }

    /// The program a kernel ran in: its `program_id`, else the module it names.
    fn program_of(&self, program: Option<i64>, module: Option<&str>) -> Option<i64> {
        program.filter(|p| self.modules.contains_key(p)).or_else(|| self.by_name.get(module?).copied())
    }

    /// The HLO op a kernel ran for, as [`hlo::Module::instruction_of`] reads it in its
    /// program's module; `hlo_op` as recorded where the profile has no module for it.
    fn op_of(&self, program: Option<i64>, module: Option<&str>, hlo_op: String, kernel: &str) -> String {
        let module = self.program_of(program, module).and_then(|p| self.modules.get(&p));
        match module.and_then(|m| m.instruction_of(&hlo_op, kernel)) {
            Some(op) if op != hlo_op => op.to_string(),
            _ => hlo_op,
        }
    }

    /// The compiled group of `op` in the program `program` (else the module named `module`),
    /// added to `compiled` the first time it is asked for.
    fn group(&mut self, program: Option<i64>, module: Option<&str>, op: &str, compiled: &mut Compiled) -> Option<u32> {
        let program = self.program_of(program, module)?;
        let modules = &self.modules;
        *self
            .made
            .entry((program, op.to_string()))
            .or_insert_with(|| modules.get(&program)?.group(op).map(|g| compiled.add(g)))
    }
}

/// The execution of an HLO op a stream line is in: its program, op, CPU op id, and the
/// kernels it has run.
struct Run {
    program: Option<i64>,
    op: String,
    id: u64,
    kernels: Vec<String>,
}

/// What a plane's kernels ran on.
#[derive(Debug, Clone, Copy)]
enum Ran {
    /// The GPU of `/device:GPU:N`, by its number.
    Gpu(i64),
    /// The host's CPU (`/host:CPU`): a CPU run's XLA ops, the events of its threads that name
    /// an HLO op; the rest (Python, PJRT's own calls, `end: …` marks) are the runtime's.
    Cpu,
}

/// One plane's device, kernels and copies into the header and the sink.
fn emit_plane<S: EventSink>(
    plane: &XPlane,
    ran: Ran,
    header: &mut TraceHeader,
    sink: &mut S,
    next_op_id: &mut u64,
    programs: &mut Programs,
) -> Result<(), XplaneError> {
    let device = match ran {
        Ran::Gpu(device) => {
            header.devices.push(gpu_properties(plane, device));
            device
        }
        Ran::Cpu => {
            header.devices.push(DeviceProperties::cpu(CPU_DEVICE_NUMBER));
            CPU_DEVICE_NUMBER
        }
    };
    for line in &plane.lines {
        let kind = match ran {
            Ran::Gpu(_) => line_kind(&line.name),
            Ran::Cpu => LineKind::Kernels,
        };
        if matches!(kind, LineKind::Derived) {
            continue;
        }
        let start_ps = i128::from(line.timestamp_ns) * 1000;
        let mut run: Option<Run> = None;
        for event in &line.events {
            header.event_count = header.event_count.saturating_add(1);
            let Some(offset_ps) = event.offset_ps else { continue }; // an aggregate, not a run
            let ts = (start_ps + i128::from(offset_ps)) as f64 / 1e6;
            let dur = event.duration_ps.max(0) as f64 / 1e6;
            let meta = plane.event_metadata.get(&event.metadata_id);
            let raw_name = meta.map(|m| if m.display_name.is_empty() { &m.name } else { &m.display_name });
            let raw_name = raw_name.map_or("", |n| n.as_str());
            let mut hlo_op = None;
            let mut hlo_module = None;
            let mut program = None;
            let mut correlation = None;
            for s in &event.stats {
                let Some(v) = &s.value else { continue };
                match stat_name(plane, s.metadata_id) {
                    "hlo_op" => hlo_op = stat_text(plane, v),
                    "hlo_module" => hlo_module = stat_text(plane, v),
                    "program_id" => program = stat_int(v),
                    "correlation_id" => correlation = stat_int(v).and_then(|c| u64::try_from(c).ok()),
                    _ => {}
                }
            }
            if matches!(ran, Ran::Cpu) && hlo_op.is_none() {
                continue;
            }
            let fallback = format!("event #{}", event.metadata_id);
            let name = if raw_name.is_empty() { &fallback } else { raw_name };
            let kernel = name.strip_suffix(".kd").unwrap_or(name);
            let hlo_op = hlo_op.map(|op| programs.op_of(program, hlo_module.as_deref(), op, kernel));
            // A kernel of another name right after one of the same HLO op, in the same program,
            // is the next kernel of the same execution: it joins that op.
            let same_op = match (&run, hlo_op.as_deref()) {
                (Some(r), Some(op)) if r.program == program && r.op == op && !r.kernels.iter().any(|k| k == name) => {
                    Some(r.id)
                }
                _ => None,
            };
            if let Some(op) = hlo_op.as_deref() {
                name_group(kernel, op, (program, hlo_module.as_deref()), programs, header, sink);
            }
            let event =
                StreamEvent { name, hlo_op: hlo_op.as_deref(), same_op, ts, dur, device, stream: line.id, correlation };
            let op_id = event.emit(&kind, &mut header.names, sink, next_op_id);
            match (op_id, hlo_op) {
                (Some(_), Some(_)) if same_op.is_some() => {
                    if let Some(r) = run.as_mut() {
                        r.kernels.push(name.to_string());
                    }
                }
                (Some(id), Some(op)) => {
                    if let Some(group) = programs.group(program, hlo_module.as_deref(), &op, &mut header.compiled) {
                        header.compiled.link(id, group);
                    }
                    run = Some(Run { program, op, id, kernels: vec![name.to_string()] });
                }
                _ => run = None,
            }
            if header.names.bytes() > TRACE_NAME_BYTES {
                return Err(XplaneError::TooManyNames {
                    plane: plane.name.clone(),
                    line: line.name.clone(),
                    limit: TRACE_NAME_BYTES,
                });
            }
        }
    }
    Ok(())
}

/// Gives the first kernel of the name `kernel` that ran an HLO op of a known module its op's
/// group, and tells the sink: a name the rules leave `other` (`ynn_fusion.5`) is classified
/// from it, by whatever sink reads the profile.
fn name_group<S: EventSink>(
    kernel: &str,
    op: &str,
    (program, module): (Option<i64>, Option<&str>),
    programs: &mut Programs,
    header: &mut TraceHeader,
    sink: &mut S,
) {
    let id = header.names.intern(kernel);
    if header.compiled.has_name(id) {
        return;
    }
    if let Some(group) = programs.group(program, module, op, &mut header.compiled) {
        header.compiled.name(id, group);
        if let Some(g) = header.compiled.groups().get(group as usize) {
            sink.compiled_name(&header.names, id, g);
        }
    }
}

/// A stat's name, from the plane's stat metadata.
fn stat_name(plane: &XPlane, id: i64) -> &str {
    plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str())
}

/// A stat's text: a string, or a reference to a stat metadata's name.
fn stat_text(plane: &XPlane, v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.clone()),
        Value::Ref(r) => i64::try_from(*r).ok().map(|r| stat_name(plane, r).to_string()),
        _ => None,
    }
}

fn stat_int(v: &Value) -> Option<i64> {
    match *v {
        Value::Int64(i) => Some(i),
        Value::Uint64(u) => i64::try_from(u).ok(),
        _ => None,
    }
}

/// A GPU plane's device, as its own stats say what it is.
fn gpu_properties(plane: &XPlane, device: i64) -> DeviceProperties {
    let mut props: BTreeMap<&str, &Value> = BTreeMap::new();
    for s in &plane.stats {
        if let Some(v) = &s.value {
            props.insert(stat_name(plane, s.metadata_id), v);
        }
    }
    let vendor = props.get("device_vendor").and_then(|v| stat_text(plane, v));
    let major = props.get("compute_cap_major").and_then(|v| stat_int(v));
    let minor = props.get("compute_cap_minor").and_then(|v| stat_int(v));
    let cores = props.get("core_count").and_then(|v| stat_int(v));
    let memory = props.get("memory_size").and_then(|v| stat_int(v));
    DeviceProperties {
        id: Some(device),
        name: device_name(vendor.as_deref(), major.zip(minor), cores, memory),
        // NVIDIA GPUs run warps of 32; AMD's gfx9 family (GCN, CDNA: MI50 to MI355X, compute
        // capability 9.x in XLA's terms) waves of 64. Other AMD GPUs (RDNA) run either.
        // The vendor stat is spelled as the plugin likes: `Nvidia` by JAX's CUDA plugin.
        warp_size: match (vendor.as_deref().map(str::to_ascii_uppercase).as_deref(), major) {
            (Some("NVIDIA"), _) => Some(32),
            (Some("AMD"), Some(9)) => Some(64),
            _ => None,
        },
        compute_major: major.and_then(|m| u32::try_from(m).ok()),
        compute_minor: minor.and_then(|m| u32::try_from(m).ok()),
        num_sms: cores.and_then(|c| u32::try_from(c).ok()),
    }
}

/// `AMD GPU (compute capability 9.4, 304 cores, 192 GiB)`: what the plane says, no more.
fn device_name(vendor: Option<&str>, cap: Option<(i64, i64)>, cores: Option<i64>, memory: Option<i64>) -> String {
    let mut parts = Vec::new();
    if let Some((major, minor)) = cap {
        parts.push(format!("compute capability {major}.{minor}"));
    }
    if let Some(c) = cores {
        parts.push(format!("{c} cores"));
    }
    if let Some(m) = memory {
        // Rounded: a device reports a little less than its nominal memory (191.98 GiB of 192).
        parts.push(format!("{} GiB", m.saturating_add(1 << 29) / (1 << 30)));
    }
    let vendor = vendor.unwrap_or("unknown vendor");
    if parts.is_empty() {
        format!("{vendor} GPU")
    } else {
        format!("{vendor} GPU ({})", parts.join(", "))
    }
}
