//! Every GPU kernel, memcpy and memset of a trace as a fusion group: the ops it ran, its bytes
//! per call fused (as it ran) and unfused (each of its parts its own kernel), its calls and
//! time, and how its ops were known (`docs/trace-fusion.md`, "Kernel groups").
//!
//! A group is one distinct (kernel name, launching op, recorded shapes): every call of the same
//! kernel for the same op signature moves the same bytes, so calls and time add up over them and
//! each GPU event is in exactly one group.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::kind::{Composite, Kind};
use super::serving_ops::serving_cost;
use crate::trace::classify::category::Category;
use crate::trace::classify::inductor;
use crate::trace::exec_trace::{EtLink, ExecTrace};
use crate::trace::model::intern::NameId;
use crate::trace::model::{OpLinks, RecordedShapes, Trace, TransferKind};
use crate::trace::summary::{round3, ClassifiedTrace};
use crate::trace::time::perf::{op_cost, Family, Input, List, OpArgs, OpCost, RawArgs};

/// One op a group ran, with the shapes the launch recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupOp {
    pub op: String,
    /// `Input Dims` as the trace wrote them (for an Inductor kernel's op words: the kernel
    /// launch's, which are its buffers); `null` when not recorded.
    pub input_dims: Value,
    pub input_types: Value,
}

/// How a group's ops and bytes were known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum How {
    /// The launching op's recorded shapes and dtypes, through its performance model.
    #[serde(rename = "recorded shapes")]
    RecordedShapes,
    /// The op words of an Inductor kernel name, with the launch's recorded buffers.
    #[serde(rename = "kernel name")]
    KernelName,
    /// The linked execution-trace node's shapes and types (the Kineto op recorded none).
    #[serde(rename = "execution trace")]
    ExecutionTrace,
    /// The size the trace records for a memcpy or memset.
    #[serde(rename = "transfer size")]
    TransferSize,
    /// Not known; `bytes_unknown` says why.
    #[serde(rename = "unknown")]
    Unknown,
}

impl How {
    pub fn text(self) -> &'static str {
        match self {
            How::RecordedShapes => "recorded shapes",
            How::KernelName => "kernel name",
            How::ExecutionTrace => "execution trace",
            How::TransferSize => "transfer size",
            How::Unknown => "unknown",
        }
    }
}

/// One kernel (or copy) group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelGroup {
    pub kernel: String,
    pub category: Category,
    /// What the what-if rules see it as.
    pub kind: Kind,
    pub calls: u64,
    /// Sum of the calls' durations, µs.
    pub time_us: f64,
    /// The innermost CPU op that launched it, `None` when no op did (graph replays).
    pub launched_by: Option<String>,
    /// The ops it ran: the launching op, or an Inductor kernel's op words.
    pub ops: Vec<GroupOp>,
    /// The parts its unfused form runs as separate kernels (one part: nothing fused).
    pub parts: Vec<String>,
    pub fused_bytes_per_call: Option<u64>,
    pub unfused_bytes_per_call: Option<u64>,
    pub how: How,
    /// Its launching op recorded shapes (or, for a copy, the trace recorded its size): the
    /// groups the coverage figure is of.
    pub shapes_recorded: bool,
    /// Why the bytes are not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_unknown: Option<String>,
}

impl KernelGroup {
    /// Both byte figures are known.
    pub fn bytes_known(&self) -> bool {
        self.fused_bytes_per_call.is_some() && self.unfused_bytes_per_call.is_some()
    }
}

/// What the data-flow inference needs of a group (not part of the output).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Flow {
    /// Bytes of the one output tensor, where the model's bytes are reads plus one write.
    pub out_bytes: Option<u64>,
    /// Bytes of each tensor input.
    pub in_bytes: Vec<u64>,
    /// Elements of the iteration space: the largest tensor input (the output of a product).
    pub space: Option<u64>,
}

/// One GPU event in time order, for the sequence the what-if walks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Instance {
    pub group: usize,
    pub device: i64,
    /// `None` for copies (the trace gives them no stream): they break any run.
    pub stream: Option<i64>,
    pub ts: f64,
    pub dur: f64,
    /// The execution-trace node of its launching op, when one is linked.
    pub et: Option<usize>,
    /// Its launching op (index into `trace.cpu_ops`).
    pub op: Option<usize>,
}

/// Groups plus what the later passes need.
pub(crate) struct Grouping {
    pub groups: Vec<KernelGroup>,
    pub flow: Vec<Flow>,
    pub instances: Vec<Instance>,
    /// Per execution-trace node (empty without one): the storages its outputs (with their
    /// bytes) and inputs are.
    pub et_io: Vec<EtIo>,
}

/// An execution-trace node's tensors, by storage (a view of an output is the output).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct EtIo {
    pub outputs: Vec<(u64, Option<u64>)>,
    pub inputs: Vec<u64>,
}

/// A group's key: the event's name, its op (if any), the op's shapes, and whether the event is
/// the main kernel of its call (the one the op's bytes are counted at).
/// The last part tells apart execution-trace shapes where the Kineto op recorded none.
type Key = (NameId, Option<NameId>, RecordedShapes, bool, bool, Option<usize>);

/// Builds the groups of every kernel and copy; with an execution trace and its link, kernels
/// whose launching op recorded no shapes take the linked node's, and every linked kernel carries
/// its node for exact data flow.
pub(crate) fn build(side: &ClassifiedTrace<'_>, et: Option<(&ExecTrace, &EtLink)>) -> Grouping {
    let trace = side.trace;
    let et_io: Vec<EtIo> = et.map_or_else(Vec::new, |(et, _)| {
        et.nodes
            .iter()
            .map(|n| EtIo {
                outputs: n.outputs.iter().map(|t| (t.storage, t.bytes())).collect(),
                inputs: n.inputs.iter().map(|t| t.storage).collect(),
            })
            .collect()
    });
    // Distinct execution-trace argument texts, so that groups keyed by them stay apart.
    let mut et_texts: FxHashMap<(&str, &str), usize> = FxHashMap::default();
    let links = OpLinks::new(trace);
    let kernel_ops: Vec<Option<usize>> = if correlation_ids_only(trace) {
        trace.kernels.iter().map(|k| enclosing_op(trace, &links, k.correlation)).collect()
    } else {
        links.ops_of(trace.kernels.iter().map(|k| (k.external_id, k.correlation))).collect()
    };
    // Per op call: its kernels and the longest of them (the one its bytes are counted at).
    let mut per_call: FxHashMap<usize, (u32, usize)> = FxHashMap::default();
    for (i, op) in kernel_ops.iter().enumerate() {
        if let Some(op) = *op {
            let e = per_call.entry(op).or_insert((0, i));
            e.0 = e.0.saturating_add(1);
            if trace.kernels[i].dur > trace.kernels[e.1].dur {
                e.1 = i;
            }
        }
    }
    let mut index: FxHashMap<Key, usize> = FxHashMap::default();
    let mut groups: Vec<KernelGroup> = Vec::new();
    let mut flow: Vec<Flow> = Vec::new();
    let mut instances: Vec<Instance> = Vec::with_capacity(trace.kernels.len() + trace.transfers.len());
    let mut add = |key: Key, dur: f64, make: &mut dyn FnMut() -> (KernelGroup, Flow)| -> usize {
        let g = *index.entry(key).or_insert_with(|| {
            let (group, f) = make();
            groups.push(group);
            flow.push(f);
            groups.len() - 1
        });
        groups[g].calls = groups[g].calls.saturating_add(1);
        groups[g].time_us += dur;
        g
    };
    for (i, k) in trace.kernels.iter().enumerate() {
        let op = kernel_ops[i];
        let (count, main) = op.and_then(|o| per_call.get(&o).copied()).unwrap_or((1, i));
        let is_main = main == i;
        let cpu = op.map(|o| &trace.cpu_ops[o]);
        let node = et.and_then(|(et, l)| Some((et, op.and_then(|o| l.by_cpu_op[o])?)));
        let from_et = node.filter(|_| cpu.is_some_and(|c| !c.shapes.is_recorded())).map(|(et, i)| &et.nodes[i]);
        let et_key = from_et.map(|n| {
            let next = et_texts.len();
            *et_texts.entry((n.input_dims.as_str(), n.input_types.as_str())).or_insert(next)
        });
        let key = (k.name, cpu.map(|c| c.name), cpu.map(|c| c.shapes).unwrap_or_default(), is_main, false, et_key);
        let g = add(key, k.dur, &mut || {
            let class = side.class(k.name);
            let kernel = trace.name(k.name).to_string();
            let mut group = KernelGroup {
                kernel,
                category: class.category,
                kind: Kind::of_category(class.category),
                calls: 0,
                time_us: 0.0,
                launched_by: None,
                ops: Vec::new(),
                parts: Vec::new(),
                fused_bytes_per_call: None,
                unfused_bytes_per_call: None,
                how: How::Unknown,
                shapes_recorded: false,
                bytes_unknown: None,
            };
            let Some(cpu) = cpu else {
                let launch = k.correlation.and_then(|c| trace.launches.get(&c));
                let replay = k.graph_node || launch.is_some_and(|l| trace.name(l.name).contains("Graph"));
                group.bytes_unknown = Some(if replay {
                    "no CPU op launched it: a graph replay (give its capture trace to see its ops)".to_string()
                } else if launch.is_none() {
                    "no launch call recorded for it: it ran before the profiler's CPU window opened".to_string()
                } else {
                    "its launch call is not inside any recorded CPU op".to_string()
                });
                return (group, Flow::default());
            };
            let op_name = trace.name(cpu.name);
            group.launched_by = Some(op_name.to_string());
            group.shapes_recorded |= cpu.shapes.is_recorded();
            let text = |id: Option<NameId>| id.map(|id| trace.name(id));
            let raw = match from_et {
                Some(n) => {
                    group.shapes_recorded = true;
                    RawArgs {
                        input_dims: Some(&n.input_dims),
                        input_type: Some(&n.input_types),
                        concrete_inputs: Some(&n.concrete_inputs),
                    }
                }
                None => RawArgs {
                    input_dims: text(cpu.shapes.dims),
                    input_type: text(cpu.shapes.types),
                    concrete_inputs: text(cpu.shapes.concrete),
                },
            };
            let mut described = describe(op_name, raw);
            if described.bytes.is_err() {
                if let Some((bytes, flow)) = list_copy_from_kernel(op_name, raw, trace.name(k.name)) {
                    described.bytes = Ok((bytes, Some(bytes)));
                    described.kind = Some(Kind::Elementwise);
                    described.flow = flow;
                }
            }
            group.ops = described.ops;
            group.parts = described.parts;
            if let Some(kind) = described.kind {
                group.kind = kind;
            }
            match described.bytes {
                Err(reason) => group.bytes_unknown = Some(reason),
                Ok(_) if !is_main => {
                    group.bytes_unknown = Some(format!(
                        "one of {count} kernels of each {op_name} call; the op's bytes are counted at its longest, {}",
                        crate::trace::classify::name::short_name(trace.name(trace.kernels[main].name), 60)
                    ));
                }
                Ok((fused, unfused)) => {
                    group.fused_bytes_per_call = Some(fused);
                    group.unfused_bytes_per_call = unfused;
                    group.how = if from_et.is_some() { How::ExecutionTrace } else { described.how };
                    if unfused.is_none() {
                        group.bytes_unknown = described.unfused_unknown.clone();
                    }
                }
            }
            let f = if is_main { described.flow } else { Flow::default() };
            (group, f)
        });
        instances.push(Instance {
            group: g,
            device: k.device,
            stream: Some(k.stream),
            ts: k.ts,
            dur: k.dur,
            et: node.map(|(_, i)| i),
            op,
        });
    }
    let transfer_ops = links.ops_of(trace.transfers.iter().map(|t| (t.external_id, t.correlation)));
    for (t, op) in trace.transfers.iter().zip(transfer_ops) {
        let op_name = op.map(|o| trace.cpu_ops[o].name);
        let key = (t.name, op_name, RecordedShapes::default(), true, true, None);
        let g = add(key, t.dur, &mut || {
            let name = trace.name(t.name);
            let hbm = t.bytes.and_then(|b| transfer_hbm_bytes(t.kind, name, b));
            let group = KernelGroup {
                kernel: name.to_string(),
                category: Category::Memory,
                kind: Kind::Other,
                calls: 0,
                time_us: 0.0,
                launched_by: op_name.map(|n| trace.name(n).to_string()),
                ops: Vec::new(),
                parts: vec![match t.kind {
                    TransferKind::Memcpy => "memcpy".to_string(),
                    TransferKind::Memset => "memset".to_string(),
                }],
                fused_bytes_per_call: hbm,
                unfused_bytes_per_call: hbm,
                how: if hbm.is_some() { How::TransferSize } else { How::Unknown },
                shapes_recorded: t.bytes.is_some(),
                bytes_unknown: if t.bytes.is_none() {
                    Some("the trace records no size for this copy".to_string())
                } else if hbm.is_none() {
                    Some("the copy's device traffic does not fit in 64 bits".to_string())
                } else {
                    None
                },
            };
            (group, Flow::default())
        });
        instances.push(Instance { group: g, device: t.device, stream: None, ts: t.ts, dur: t.dur, et: None, op });
    }
    for g in &mut groups {
        g.time_us = round3(g.time_us);
    }
    instances.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    Grouping { groups, flow, instances, et_io }
}

/// Whether the trace is of the older form whose kernels' (and launch calls') `External id` is
/// only their correlation id (PyTorch 1.x, the `param` linear pair): there an id lookup finds an
/// unrelated op that happens to have that number, so kernels are linked by the op enclosing
/// their launch call instead. Nine in ten kernels with equal ids make the call.
fn correlation_ids_only(trace: &Trace) -> bool {
    let same = trace.kernels.iter().filter(|k| k.external_id.is_some() && k.external_id == k.correlation).count();
    !trace.kernels.is_empty() && same.saturating_mul(10) >= trace.kernels.len().saturating_mul(9)
}

/// The innermost CPU op on the launch call's thread whose interval holds the call.
fn enclosing_op(trace: &Trace, links: &OpLinks<'_>, correlation: Option<u64>) -> Option<usize> {
    let launch = trace.launches.get(&correlation?)?;
    let ops = links.thread_ops(launch.tid);
    let after = ops.partition_point(|&i| trace.cpu_ops[i].ts <= launch.ts);
    // Nested ops start outer to inner: the latest start that still holds the call (bounded).
    ops[..after].iter().rev().take(256).copied().find(|&i| {
        let op = &trace.cpu_ops[i];
        launch.ts <= op.ts + op.dur
    })
}

/// Device-memory bytes of a copy: a device-to-device copy reads and writes its size, a copy to
/// or from the host and a memset touch device memory once.
fn transfer_hbm_bytes(kind: TransferKind, name: &str, bytes: u64) -> Option<u64> {
    let d2d = kind == TransferKind::Memcpy && (name.contains("DtoD") || name.contains("DeviceToDevice"));
    if d2d {
        bytes.checked_mul(2)
    } else {
        Some(bytes)
    }
}

/// What one launching op says about the kernel it launched.
pub(crate) struct Described {
    pub ops: Vec<GroupOp>,
    pub parts: Vec<String>,
    pub kind: Option<Kind>,
    /// (fused, unfused) bytes per call, or why not.
    pub bytes: Result<(u64, Option<u64>), String>,
    pub unfused_unknown: Option<String>,
    pub how: How,
    pub flow: Flow,
}

/// The ops, parts, kind and bytes of a call of `op` with these recorded arguments.
pub(crate) fn describe(op: &str, raw: RawArgs<'_>) -> Described {
    let json = |t: Option<&str>| t.and_then(|t| serde_json::from_str(t).ok()).unwrap_or(Value::Null);
    let (dims, types) = (json(raw.input_dims), json(raw.input_type));
    let one = |name: &str| vec![GroupOp { op: name.to_string(), input_dims: dims.clone(), input_types: types.clone() }];
    let mut d = Described {
        ops: one(op),
        parts: vec![op.strip_prefix("aten::").unwrap_or(op).to_string()],
        kind: None,
        bytes: Err(String::new()),
        unfused_unknown: None,
        how: How::RecordedShapes,
        flow: Flow::default(),
    };
    let args = if raw.input_dims.is_none() {
        Err("the trace was recorded without record_shapes: no Input Dims".to_string())
    } else {
        OpArgs::parse(raw).map_err(|e| format!("{op}: {e}"))
    };
    if let Some(words) = inductor::parse(&op.to_ascii_lowercase()) {
        // An Inductor kernel: its op words, each with the launch's buffers.
        let (ikind, words) = words;
        let lower = op.to_ascii_lowercase();
        let components = inductor::components(&lower).unwrap_or_default();
        d.kind = Some(Kind::of_inductor(ikind, &components));
        let real: Vec<&str> = words.iter().copied().filter(|w| works(w)).collect();
        d.ops = words.iter().flat_map(|w| one(w)).collect();
        d.parts = real.iter().map(|w| w.to_string()).collect();
        d.how = How::KernelName;
        let args = match args {
            Ok(a) => a,
            Err(e) => {
                d.bytes = Err(e);
                return d;
            }
        };
        d.flow = triton_flow(&args);
        d.bytes = match op_cost(op, &args) {
            Ok(c) => {
                let unfused = inductor_unfused(c.bytes, &d.flow, real.len(), &args);
                if unfused.is_none() {
                    d.unfused_unknown = Some(if real.is_empty() {
                        "the kernel name lists no op words to split it into".to_string()
                    } else {
                        "its unfused bytes do not fit in 64 bits".to_string()
                    });
                }
                Ok((c.bytes, unfused))
            }
            Err(e) => Err(format!("{op}: {e}")),
        };
        return d;
    }
    if crate::trace::time::perf::triton::is_triton(op) {
        d.how = How::KernelName;
        d.unfused_unknown =
            Some("the kernel name lists no op words (Inductor before 2023 named kernels triton__0d1d2d…)".to_string());
    }
    let args = match args {
        Ok(a) => a,
        Err(e) => {
            d.bytes = Err(e);
            return d;
        }
    };
    if let Some(serving) = serving_cost(op, &args) {
        match serving {
            Ok(c) => {
                d.kind = Some(c.kind);
                d.parts = c.parts.iter().map(|p| p.to_string()).collect();
                d.flow = Flow { out_bytes: Some(c.out_bytes), in_bytes: c.in_bytes, space: c.space };
                d.bytes = Ok((c.fused, Some(c.unfused)));
            }
            Err(e) => d.bytes = Err(format!("{op}: {e}")),
        }
        return d;
    }
    match op_cost(op, &args) {
        Err(e) => d.bytes = Err(format!("{e}")),
        Ok(c) => {
            d.kind = Some(Kind::of_family(c.family));
            d.flow = eager_flow(op, &c, &args);
            let composite = composite(op, c.family, &args);
            let unfused = match composite {
                None => Some(c.bytes),
                Some(comp) => {
                    d.parts = comp.parts().iter().map(|p| p.to_string()).collect();
                    composite_unfused(comp, &c, &d.flow, &args)
                }
            };
            if d.how == How::KernelName {
                // A Triton kernel's buffers are inputs and outputs alike: its last is the output.
                d.flow = triton_flow(&args);
                d.bytes = Ok((c.bytes, None));
                d.parts.clear();
            } else {
                if unfused.is_none() {
                    d.unfused_unknown = Some("its unfused bytes do not fit in 64 bits".to_string());
                }
                d.bytes = Ok((c.bytes, unfused));
            }
        }
    }
    d
}

/// `aten::cat`/`aten::stack` without an `out=` tensor: the profiler records the list's shapes
/// but not its element type, and PyTorch's CUDA/HIP cat kernel is instantiated on an opaque type
/// of the element's size (`CatArrayBatchedCopy<…OpaqueType<2u>…>`), so the kernel name gives it.
/// Every input is read once and the output, of their summed size, written once.
fn list_copy_from_kernel(op: &str, raw: RawArgs<'_>, kernel: &str) -> Option<(u64, Flow)> {
    if !matches!(op, "aten::cat" | "aten::stack") || !kernel.contains("CatArrayBatchedCopy") {
        return None;
    }
    let rest = &kernel[kernel.find("OpaqueType<")? + "OpaqueType<".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let size: u64 = digits.parse().ok().filter(|&n| (1..=16).contains(&n))?;
    let args = OpArgs::parse(raw).ok()?;
    let Some(Input::List(List::Tensors(shapes))) = args.input(0) else { return None };
    let in_bytes = shapes.iter().map(|s| s.numel()?.checked_mul(size)).collect::<Option<Vec<u64>>>()?;
    let out = in_bytes.iter().try_fold(0u64, |s, &b| s.checked_add(b))?;
    let space = out / size;
    Some((out.checked_mul(2)?, Flow { out_bytes: Some(out), in_bytes, space: Some(space) }))
}

/// Whether an Inductor op word does work of its own (views and GEMM words outside templates
/// do not).
fn works(word: &str) -> bool {
    inductor::OPS.iter().any(|(name, c)| *name == word && c.is_some())
}

/// The library fusion an op is, if it is one.
fn composite(op: &str, family: Family, args: &OpArgs) -> Option<Composite> {
    let name = op.strip_prefix("aten::").unwrap_or(op);
    match (family, name) {
        (Family::Gemm, "addmm" | "baddbmm") => Some(Composite::GemmBias),
        (Family::Gemm, "linear") => matches!(args.input(2), Some(Input::Tensor(_))).then_some(Composite::GemmBias),
        (Family::Attention, _) => Some(Composite::Attention),
        (Family::Norm, "_C::fused_add_rms_norm") => Some(Composite::AddRmsNorm),
        _ => None,
    }
}

/// Unfused bytes of a library fusion: its fused bytes plus each intermediate tensor written by
/// one part and read back by the next.
fn composite_unfused(comp: Composite, c: &OpCost, flow: &Flow, args: &OpArgs) -> Option<u64> {
    let intermediate = match comp {
        // C: the output's size.
        Composite::GemmBias => flow.out_bytes?,
        // S and P: one score per (query head, query, key) pair the model counts, in Q's type.
        // FLOPs are 2·pairs·(d + dv), so pairs = FLOPs / (2·(d + dv)).
        Composite::Attention => {
            let mut tensors = args.tensors();
            let q = tensors.next()?;
            let _k = tensors.next()?;
            let v = tensors.next()?;
            let d = *q.dims().last()?;
            let dv = *v.dims().last()?;
            let pairs = c.flops.checked_div(d.checked_add(dv)?.checked_mul(2)?)?;
            pairs.checked_mul(q.dtype().size_bytes())?.checked_mul(2)?
        }
        // The residual sum: an output either way (the next layer's residual), so unfused only
        // its read-back by the norm is extra.
        Composite::AddRmsNorm => {
            let sum = args.tensors().nth(1)?.bytes().ok()?;
            return c.bytes.checked_add(sum);
        }
    };
    c.bytes.checked_add(intermediate.checked_mul(2)?)
}

/// Tensor-input bytes, the iteration space and the output of an eager op whose model counts
/// each tensor input once and one output (`docs/perf-models.md`): the output is the rest.
/// In-place ops that overwrite their first tensor without reading it.
const OVERWRITES: &[&str] = &[
    "aten::fill_",
    "aten::zero_",
    "aten::copy_",
    "aten::uniform_",
    "aten::normal_",
    "aten::random_",
    "aten::bernoulli_",
];

/// An in-place op (`add_`, `copy_`) writes its first tensor, which the model does not count as
/// read too, so its output is that tensor.
fn eager_flow(op: &str, c: &OpCost, args: &OpArgs) -> Flow {
    let in_bytes: Vec<u64> = args.tensors().filter_map(|t| t.bytes().ok()).collect();
    let list_inputs = args.inputs().iter().any(|i| matches!(i, Input::List(List::Tensors(s)) if !s.is_empty()));
    let read = in_bytes.iter().try_fold(0u64, |s, &b| s.checked_add(b));
    let out_bytes = match (read, list_inputs) {
        (Some(r), false) => c.bytes.checked_sub(r).filter(|&o| o > 0),
        _ => None,
    };
    let out_bytes = match out_bytes {
        None if op.ends_with('_') && !list_inputs => in_bytes.first().copied().filter(|&b| b > 0),
        other => other,
    };
    // An op that overwrites its first tensor without reading it does not consume what was there.
    let mut in_bytes = in_bytes;
    if OVERWRITES.contains(&op) && !in_bytes.is_empty() {
        in_bytes.remove(0);
    }
    let mut space = args.tensors().filter_map(|t| t.numel().ok()).max();
    if c.family == Family::Gemm || c.family == Family::Conv {
        // A product iterates over its output.
        space = out_bytes.and_then(|o| o.checked_div(c.dtype.size_bytes()));
    }
    Flow { out_bytes, in_bytes, space }
}

/// A Triton kernel's buffers: the last is taken as its output (Inductor lists `out_ptr`s last),
/// the largest as its iteration space.
fn triton_flow(args: &OpArgs) -> Flow {
    let tensors: Vec<_> = args.tensors().collect();
    let in_bytes: Vec<u64> = tensors.iter().filter_map(|t| t.bytes().ok()).collect();
    Flow {
        out_bytes: tensors.last().and_then(|t| t.bytes().ok()),
        in_bytes,
        space: tensors.iter().filter_map(|t| t.numel().ok()).max(),
    }
}

/// Unfused bytes of an Inductor kernel of `parts` working ops: the kernel's own bytes plus, for
/// each of the `parts − 1` hand-offs between its ops, one intermediate written and read back, at
/// the size of the kernel's largest buffer (its iteration space in its type).
fn inductor_unfused(fused: u64, flow: &Flow, parts: usize, args: &OpArgs) -> Option<u64> {
    if parts == 0 {
        return None;
    }
    let largest = args.tensors().filter_map(|t| t.bytes().ok()).max().or(flow.out_bytes)?;
    let handoffs = u64::try_from(parts - 1).ok()?;
    fused.checked_add(largest.checked_mul(2)?.checked_mul(handoffs)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw<'a>(dims: &'a str, types: &'a str, concrete: Option<&'a str>) -> RawArgs<'a> {
        RawArgs { input_dims: Some(dims), input_type: Some(types), concrete_inputs: concrete }
    }

    #[test]
    fn addmm_is_a_matmul_and_a_bias_add() {
        let d = describe(
            "aten::addmm",
            raw("[[64], [32, 16], [16, 64], [], []]", r#"["float", "float", "float", "Scalar", "Scalar"]"#, None),
        );
        let out = 32 * 64 * 4;
        let fused = (64 + 32 * 16 + 16 * 64) * 4 + out;
        assert_eq!(d.bytes, Ok((fused, Some(fused + 2 * out))));
        assert_eq!(d.parts, vec!["matmul", "add (bias)"]);
        assert_eq!(d.kind, Some(Kind::Matmul));
        assert_eq!(d.flow.out_bytes, Some(out));
        assert_eq!(d.flow.space, Some(32 * 64));
    }

    #[test]
    fn a_pointwise_op_is_one_part() {
        let d = describe("aten::mul", raw("[[8, 4], [8, 4]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, None));
        assert_eq!(d.bytes, Ok((3 * 64, Some(3 * 64))));
        assert_eq!((d.kind, d.flow.out_bytes, d.flow.space), (Some(Kind::Elementwise), Some(64), Some(32)));
        // copy_(self, src) writes self: a bf16 copy of an fp32 tensor hands on the bf16 bytes.
        let d = describe("aten::copy_", raw("[[8, 4], [8, 4], []]", r#"["c10::BFloat16", "float", "Scalar"]"#, None));
        assert_eq!((d.bytes, d.flow.out_bytes), (Ok((64 + 128, Some(64 + 128))), Some(64)));
        // It reads only its source: a kernel that wrote a tensor of self's size does not feed it.
        assert_eq!(d.flow.in_bytes, vec![128]);
        let d = describe("aten::fill_", raw("[[8, 4], []]", r#"["float", "Scalar"]"#, Some(r#"["", "0"]"#)));
        assert!(d.flow.in_bytes.is_empty());
    }

    #[test]
    fn inductor_kernel_is_split_into_its_op_words() {
        let d = describe(
            "triton_poi_fused__unsafe_view_mul_silu_2",
            raw(
                "[[8, 4096, 8192], [32768, 8192], []]",
                r#"["c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
                Some(r#"["", "", "268435456"]"#),
            ),
        );
        let n: u64 = 268_435_456 * 2;
        assert_eq!(d.parts, vec!["mul", "silu"]);
        assert_eq!(d.ops.len(), 3);
        assert_eq!(d.how, How::KernelName);
        assert_eq!(d.bytes, Ok((2 * n, Some(2 * n + 2 * n))));
    }

    #[test]
    fn cat_takes_its_element_size_from_the_kernel_name() {
        let kernel = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(…)";
        let r = raw("[[[1, 16, 8, 64], [1, 16, 8, 64]], []]", r#"["TensorList", "Scalar"]"#, Some(r#"["", "-1"]"#));
        assert!(describe("aten::cat", r).bytes.is_err());
        let (bytes, flow) = list_copy_from_kernel("aten::cat", r, kernel).unwrap();
        let each = 16 * 8 * 64 * 2;
        assert_eq!((bytes, flow.out_bytes, flow.in_bytes), (4 * each, Some(2 * each), vec![each, each]));
        assert!(list_copy_from_kernel("aten::cat", r, "CatArrayBatchedCopy<float>").is_none());
        assert!(list_copy_from_kernel("aten::add", r, kernel).is_none());
    }

    #[test]
    fn unknown_op_words_leave_the_unfused_bytes_unknown_and_say_why() {
        let d = describe(
            "triton_poi_fused_frobnicate_0",
            raw("[[4, 8], [4, 8], []]", r#"["float", "float", "Scalar"]"#, None),
        );
        assert_eq!(d.bytes, Ok((2 * 32 * 4, None)));
        assert!(d.parts.is_empty());
        assert_eq!(d.unfused_unknown.as_deref(), Some("the kernel name lists no op words to split it into"));
        let d = describe("triton__0d1d2d", raw("[[16], [16]]", r#"["float", "float"]"#, None));
        assert_eq!(d.bytes, Ok((128, None)));
        assert!(d.unfused_unknown.unwrap().contains("triton__0d1d2d"));
    }

    #[test]
    fn missing_shapes_say_why() {
        let d = describe("aten::mm", RawArgs::default());
        assert!(d.bytes.unwrap_err().contains("record_shapes"));
        let d = describe("aten::mm", raw("[[2, -3], [3, 2]]", r#"["float", "float"]"#, None));
        assert!(d.bytes.unwrap_err().contains("dim -3"));
    }
}
