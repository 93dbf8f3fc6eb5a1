//! Every GPU kernel, memcpy and memset of a trace as a fusion group: the ops it ran, its bytes
//! per call fused (as it ran) and unfused (each of its parts its own kernel), its calls and
//! time, and how its ops were known (`docs/trace-fusion.md`, "Kernel groups").
//!
//! A group is one distinct (kernel name, launching op, recorded shapes): every call of the same
//! kernel for the same op signature moves the same bytes, so calls and time add up over them and
//! each GPU event is in exactly one group.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::collectives;
use super::compiled::{compiled_main_kernels, described};
use super::describe::{describe, list_copy_from_kernel, Flow, GroupOp, How};
use super::kind::Kind;
use super::unknown::{Cause, Unknown};
use super::vllm_ops::{self, MoeKernel, Routing, Steps, ThreadOps};
use crate::exec_trace::{EtLink, ExecTrace};
use crate::summary::{round3, ClassifiedTrace};
use crate::time::recorded_cost::ShapeText;
use classify::category::Category;
use perf::RawArgs;
use trace::compiled::Compiler;
use trace::intern::NameId;
use trace::{EventOps, RecordedShapes, Trace, TransferKind};

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
    /// Why the bytes are not known and whose gap that is (`bytes_unknown`, `bytes_unknown_cause`).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Unknown>,
}

impl KernelGroup {
    /// Both byte figures are known.
    pub fn bytes_known(&self) -> bool {
        self.fused_bytes_per_call.is_some() && self.unfused_bytes_per_call.is_some()
    }

    /// Its time is covered by known bytes: its own, or its op's counted at another kernel of
    /// the same call.
    pub fn covered(&self) -> bool {
        self.bytes_known() || self.cause().is_some_and(Cause::covered)
    }

    /// Whose gap its unknown bytes are; `None` when they are known.
    pub fn cause(&self) -> Option<Cause> {
        self.unknown.as_ref().map(|u| u.cause)
    }

    /// Why its bytes are not known, in words.
    pub fn why_unknown(&self) -> Option<&str> {
        self.unknown.as_ref().map(|u| u.why.as_str())
    }
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
    /// Its launch call's start and CPU time, µs, where recorded (a graph's nodes have none).
    pub launch: Option<(f64, f64)>,
}

/// Groups plus what the later passes need.
pub(crate) struct Grouping {
    pub groups: Vec<KernelGroup>,
    pub flow: Vec<Flow>,
    pub instances: Vec<Instance>,
    /// The group of each kernel, by index into `trace.kernels`.
    pub kernel_groups: Vec<usize>,
    /// Each execution-trace node's output storages (with bytes) and inputs; empty without one.
    pub et_io: Vec<EtIo>,
}

/// An execution-trace node's tensors, by storage (a view of an output is the output).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct EtIo {
    pub outputs: Vec<(u64, Option<u64>)>,
    pub inputs: Vec<u64>,
}

/// A group's key: the kernel, its op (if any) and the op's shapes, whether it is the call's
/// main kernel (the one the op's bytes are counted at), whether it is a copy, the
/// execution-trace node's arguments (where the Kineto op recorded no shapes), the context (a
/// vLLM attention call's step, a MoE kernel's role), the compiled group.
type Key = (NameId, Option<NameId>, RecordedShapes, bool, bool, Option<usize>, Option<Context>, Option<u32>);

/// What a kernel's bytes depend on beyond its op's own arguments ([`vllm_ops`], [`collectives`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Context {
    /// A vLLM attention call in step annotation `n` (`None`: in none).
    Step(Option<usize>),
    /// A kernel of a vLLM MoE call, whether the call has a finalize (scatter-sum) kernel, and
    /// the name of its first GEMM kernel (which says the weights' format).
    Moe(MoeKernel, bool, Option<NameId>),
    /// triton_kernels' `TopK` or `SortTokens` of a vLLM MoE call's routing.
    Routing(Routing),
    /// A collective's kernel in this c10d op (name, shapes).
    Collective(NameId, RecordedShapes),
}

const VLLM_ATTENTION: [&str; 2] = ["vllm::unified_attention_with_output", "vllm::unified_attention"];
const VLLM_MOE: &str = "vllm::moe_forward";

/// Each kernel's context: the step of a vLLM attention kernel's launch, the role of a vLLM MoE
/// call's kernel (its GEMMs numbered in start order), the routing's TopK and SortTokens, the c10d op holding a
/// collective's launch.
fn contexts(
    trace: &Trace,
    steps: &Steps,
    threads: Option<&ThreadOps>,
    kernel_ops: &[Option<usize>],
) -> Vec<Option<Context>> {
    let mut out = vec![None; trace.kernels.len()];
    let attention: Vec<NameId> = VLLM_ATTENTION.iter().filter_map(|n| trace.names.get(n)).collect();
    let moe = trace.names.get(VLLM_MOE);
    let routing: Vec<(NameId, Routing)> = Routing::ALL
        .into_iter()
        .filter(|_| moe.is_some())
        .filter_map(|r| Some((trace.names.get(r.op())?, r)))
        .collect();
    let Some(threads) = threads else { return out };
    let mut gemms: Vec<(usize, f64, usize)> = Vec::new();
    let mut finals: Vec<(usize, usize)> = Vec::new();
    for (i, (k, op)) in trace.kernels.iter().zip(kernel_ops).enumerate() {
        let Some(o) = *op else { continue };
        let name = trace.cpu_ops[o].name;
        if is_collective_kernel(trace.name(k.name)) {
            out[i] = threads.enclosing(trace, o, collectives::is_c10d).map(|c| {
                let c = &trace.cpu_ops[c];
                Context::Collective(c.name, c.shapes)
            });
        } else if attention.contains(&name) {
            let ts = k.correlation.and_then(|c| trace.launches.get(&c)).map_or(trace.cpu_ops[o].ts, |l| l.ts);
            out[i] = Some(Context::Step(steps.at(ts).map(|s| s.0)));
        } else if let Some(&(_, which)) = routing.iter().find(|(id, _)| *id == name) {
            out[i] = Some(Context::Routing(which));
        } else if Some(name) == moe {
            match MoeKernel::of(trace.name(k.name)) {
                Some(MoeKernel::Finalize) => finals.push((o, i)),
                Some(MoeKernel::Gemm(_)) => gemms.push((o, k.ts, i)),
                None => {}
            }
        }
    }
    let scattered: rustc_hash::FxHashSet<usize> = finals.iter().map(|&(o, _)| o).collect();
    let mut first_gemm: FxHashMap<usize, NameId> = FxHashMap::default();
    gemms.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut n = 0u32;
    for (j, &(o, _, i)) in gemms.iter().enumerate() {
        n = if j > 0 && gemms[j - 1].0 == o { n.saturating_add(1) } else { 0 };
        let first = *first_gemm.entry(o).or_insert(trace.kernels[i].name);
        out[i] = Some(Context::Moe(MoeKernel::Gemm(n), scattered.contains(&o), Some(first)));
    }
    for (o, i) in finals {
        out[i] = Some(Context::Moe(MoeKernel::Finalize, true, first_gemm.get(&o).copied()));
    }
    out
}

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
    let EventOps { kernels: kernel_ops, transfers: transfer_ops } = side.event_ops();
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
    // A compiled op's kernels (a cuDNN convolution runs an im2col and a GEMM): its bytes are
    // counted at the kernel that takes the most time in all, as for a CPU op's kernels.
    let compiled_main = compiled_main_kernels(trace);
    let steps = Steps::new(trace);
    let needs_threads = VLLM_ATTENTION.iter().chain([&VLLM_MOE]).any(|n| trace.names.get(n).is_some())
        || distinct_kernel_names(trace).any(|name| is_collective_kernel(trace.name(name)));
    let threads = needs_threads.then(|| ThreadOps::new(trace));
    let context = contexts(trace, &steps, threads.as_ref(), kernel_ops);
    let cache = context.iter().any(|c| matches!(c, Some(Context::Step(_)))).then(|| vllm_ops::kv_cache_type(trace));
    let mut index: FxHashMap<Key, usize> = FxHashMap::default();
    let mut groups: Vec<KernelGroup> = Vec::new();
    let mut flow: Vec<Flow> = Vec::new();
    let mut instances: Vec<Instance> = Vec::with_capacity(trace.kernels.len() + trace.transfers.len());
    let mut kernel_groups: Vec<usize> = Vec::with_capacity(trace.kernels.len());
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
        // A MoE kernel has its own model: each is the main kernel of its part of the call.
        let is_main = main == i || matches!(context[i], Some(Context::Moe(..)));
        let cpu = op.map(|o| &trace.cpu_ops[o]);
        let node = et.and_then(|(et, l)| Some((et, op.and_then(|o| l.by_cpu_op[o])?)));
        let from_et = node.filter(|_| cpu.is_some_and(|c| !c.shapes.is_recorded())).map(|(et, i)| &et.nodes[i]);
        let et_key = from_et.map(|n| {
            let next = et_texts.len();
            *et_texts.entry((n.input_dims.as_str(), n.input_types.as_str())).or_insert(next)
        });
        let compiled = cpu.and_then(|c| trace.compiled.of_op(c.external_id));
        let compiled_main = compiled.and_then(|(index, _)| compiled_main.get(&index)).map(|m| m.0);
        let is_main = is_main && compiled_main.is_none_or(|m| m == k.name);
        let key = (
            k.name,
            cpu.map(|c| c.name),
            cpu.map(|c| c.shapes).unwrap_or_default(),
            is_main,
            false,
            et_key,
            context[i],
            compiled.map(|(index, _)| index),
        );
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
                unknown: None,
            };
            let Some(cpu) = cpu else {
                let launch = k.correlation.and_then(|c| trace.launches.get(&c));
                let replay = k.graph_node || launch.is_some_and(|l| trace.name(l.name).contains("Graph"));
                group.unknown = Some(Unknown::not_recorded(if !trace.format.records_ops() {
                    format!("{} records no ops, so no shapes give its bytes", trace.format.describe())
                } else if !trace.format.is_kineto() {
                    // XLA's: a kernel run for no HLO op (a runtime copy kernel).
                    format!("{} names no HLO op for it", trace.format.describe())
                } else if replay {
                    "no CPU op launched it: a graph replay (give its capture trace to see its ops)".to_string()
                } else if launch.is_none() {
                    "no launch call recorded for it: it ran before the profiler's CPU window opened".to_string()
                } else {
                    "its launch call is not inside any recorded CPU op".to_string()
                }));
                return (group, Flow::default());
            };
            let op_name = trace.name(cpu.name);
            group.launched_by = Some(op_name.to_string());
            let raw = match from_et {
                Some(n) => RawArgs {
                    input_dims: Some(&n.input_dims),
                    input_type: Some(&n.input_types),
                    concrete_inputs: Some(&n.concrete_inputs),
                    input_strides: None,
                },
                None => ShapeText::recorded(trace, cpu.shapes).raw(),
            };
            // What the compiler recorded, where it did, in place of any inference.
            if let Some((_, compiled)) = compiled {
                let d = described(compiled);
                (group.ops, group.parts, group.how) = (d.ops, d.parts, d.how);
                match d.bytes {
                    Ok((fused, unfused)) => {
                        (group.fused_bytes_per_call, group.unfused_bytes_per_call) = (Some(fused), unfused)
                    }
                    Err(reason) => group.unknown = Some(reason),
                }
                if let (false, Some(main)) = (is_main, compiled_main) {
                    group.fused_bytes_per_call = None;
                    group.unfused_bytes_per_call = None;
                    group.unknown = Some(Unknown::new(
                        Cause::CountedElsewhere,
                        format!(
                            "one of the kernels of {}; its bytes are counted at its longest, {}",
                            compiled.op,
                            classify::name::short_name(trace.name(main), 60)
                        ),
                    ));
                }
                // The tensors the launch hands on, as without the record: an Inductor kernel's
                // launch records its buffers, which the data-flow edges (and the re-prediction
                // over them) read. XLA's kernels record none.
                let flow = match compiled.compiler {
                    Compiler::Inductor => describe(op_name, raw).flow,
                    Compiler::Xla => Flow::default(),
                };
                return (group, flow);
            }
            let mut described = describe(op_name, raw);
            let in_context = match context[i] {
                Some(Context::Step(step)) if from_et.is_none() => {
                    let step = step.and_then(|n| steps.lengths(n));
                    let cache =
                        cache.clone().unwrap_or_else(|| Err(Unknown::not_recorded("no KV-cache write recorded")));
                    perf::OpArgs::parse(raw).ok().map(|args| vllm_ops::unified_attention(&args, step, cache))
                }
                Some(Context::Moe(role, scattered, gemm)) if from_et.is_none() => threads.as_ref().map(|t| {
                    let name = trace.name(k.name);
                    let o = op.unwrap_or_default();
                    vllm_ops::moe_shapes(trace, t, o, gemm.map_or(name, |g| trace.name(g)))
                        .and_then(|s| vllm_ops::moe_kernel(&s, role, name, scattered))
                        .map_err(|e| e.prefixed(op_name))
                }),
                Some(Context::Routing(which)) if from_et.is_none() => threads.as_ref().map(|t| {
                    vllm_ops::routing(trace, t, op.unwrap_or_default(), which).map_err(|e| e.prefixed(op_name))
                }),
                Some(Context::Collective(name, shapes)) if from_et.is_none() => {
                    Some(collectives::collective(trace, name, shapes))
                }
                _ => None,
            };
            if let Some(cost) = in_context {
                described.take_serving(cost);
                described.how = match context[i] {
                    Some(Context::Step(_)) => How::StepAnnotation,
                    Some(Context::Moe(..) | Context::Routing(_)) => How::OpSubtree,
                    _ => How::RecordedShapes,
                };
                // A collective's op is the c10d op whose buffers gave its bytes.
                if let Some(Context::Collective(name, shapes)) = context[i] {
                    let json = |id: Option<NameId>| {
                        id.and_then(|id| serde_json::from_str(trace.name(id)).ok()).unwrap_or(serde_json::Value::Null)
                    };
                    described.ops = vec![GroupOp {
                        op: trace.name(name).to_string(),
                        input_dims: json(shapes.dims),
                        input_types: json(shapes.types),
                    }];
                }
            }
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
                // A format that records ops but never their shapes (XLA's HLO ops): said as such,
                // not as a PyTorch trace recorded without `record_shapes`.
                Err(_) if raw.input_dims.is_none() && !trace.format.is_kineto() => {
                    group.unknown = Some(Unknown::not_recorded(format!(
                        "{} records no shapes for {op_name}",
                        trace.format.describe()
                    )))
                }
                Err(reason) => group.unknown = Some(reason),
                Ok(_) if !is_main => {
                    group.unknown = Some(Unknown::new(
                        Cause::CountedElsewhere,
                        format!(
                            "one of {count} kernels of each {op_name} call; the op's bytes are counted at its longest, {}",
                            classify::name::short_name(trace.name(trace.kernels[main].name), 60)
                        ),
                    ));
                }
                Ok((fused, unfused)) => {
                    group.fused_bytes_per_call = Some(fused);
                    group.unfused_bytes_per_call = unfused;
                    group.how = if from_et.is_some() { How::ExecutionTrace } else { described.how };
                    if unfused.is_none() {
                        group.unknown = described.unfused_unknown.clone();
                    }
                }
            }
            let f = if is_main { described.flow } else { Flow::default() };
            (group, f)
        });
        kernel_groups.push(g);
        instances.push(Instance {
            group: g,
            device: k.device,
            stream: Some(k.stream),
            ts: k.ts,
            dur: k.dur,
            et: node.map(|(_, i)| i),
            op,
            launch: k.correlation.filter(|_| !k.graph_node).and_then(|c| trace.launches.get(&c)).map(|l| (l.ts, l.dur)),
        });
    }
    for (t, &op) in trace.transfers.iter().zip(transfer_ops) {
        let op_name = op.map(|o| trace.cpu_ops[o].name);
        let key = (t.name, op_name, RecordedShapes::default(), true, true, None, None, None);
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
                unknown: if t.bytes.is_none() {
                    Some(Unknown::not_recorded("the trace records no size for this copy"))
                } else if hbm.is_none() {
                    Some(Unknown::bad_input("the copy's device traffic does not fit in 64 bits"))
                } else {
                    None
                },
            };
            (group, Flow::default())
        });
        let (device, ts, dur) = (t.device, t.ts, t.dur);
        instances.push(Instance { group: g, device, stream: None, ts, dur, et: None, op, launch: None });
    }
    groups.iter_mut().for_each(|g| g.time_us = round3(g.time_us));
    instances.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    Grouping { groups, flow, instances, kernel_groups, et_io }
}

/// A collective's kernel: NCCL's (`ncclKernel_…`, `ncclDevKernel_…`) or RCCL's.
/// The names of the trace's kernels, each once (a name search per kernel, rather than per
/// name, was a tenth of the fusion analysis of a 1 GB trace).
fn distinct_kernel_names(trace: &Trace) -> impl Iterator<Item = NameId> + '_ {
    let mut seen = vec![false; trace.names.len()];
    trace.kernels.iter().map(|k| k.name).filter(move |n| !std::mem::replace(&mut seen[n.index()], true))
}

fn is_collective_kernel(name: &str) -> bool {
    name.starts_with("nccl") || name.starts_with("rccl") || name.contains("ncclDevKernel")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw<'a>(dims: &'a str, types: &'a str, concrete: Option<&'a str>) -> RawArgs<'a> {
        RawArgs { input_dims: Some(dims), input_type: Some(types), concrete_inputs: concrete, input_strides: None }
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
        assert_eq!(
            d.unfused_unknown,
            Some(Unknown::not_recorded("the kernel name lists no op words to split it into"))
        );
        let d = describe("triton__0d1d2d", raw("[[16], [16]]", r#"["float", "float"]"#, None));
        assert_eq!(d.bytes, Ok((128, None)));
        let u = d.unfused_unknown.unwrap();
        assert!(u.why.contains("triton__0d1d2d") && u.cause == Cause::NotRecorded, "{u:?}");
    }

    #[test]
    fn missing_shapes_say_why() {
        let d = describe("aten::mm", RawArgs::default());
        let e = d.bytes.unwrap_err();
        assert!(e.why.contains("record_shapes") && e.cause == Cause::NotRecorded, "{e:?}");
        let d = describe("aten::mm", raw("[[2, -3], [3, 2]]", r#"["float", "float"]"#, None));
        let e = d.bytes.unwrap_err();
        assert!(e.why.contains("dim -3") && e.cause == Cause::BadInput, "{e:?}");
        let d = describe("aten::frobnicate", raw("[[2, 3]]", r#"["float"]"#, None));
        assert_eq!(d.bytes, Err(Unknown::no_model("no model for aten::frobnicate")));
    }
}
