//! Inductor's compile log joined to a profiler trace of the same run: each kernel the log
//! records (its exact post-grad nodes and bytes, the `inductor` crate) gets the calls and the
//! time the trace measured.
//!
//! Kernel names restart at `_0` in every compiled graph, so a name is looked up only among the
//! graphs of the compiled region it ran in (`Torch-Compiled Region: F/C`, the compile id the
//! log records). Within one call of a graph, the log's kernels are taken in launch order (the
//! debug handles, `…:N`) and each is given the next unjoined CPU op of its name: the C++
//! kernel's range (`graph_0_cpp_fused_…`, with `enable_kernel_profile`), the op a Triton
//! kernel's launch records (its own name), the ATen op of a library call (`extern_kernels.mm`
//! → `aten::mm`). The kernels linked to that op carry the kernel's time: on a GPU those it
//! launched, on a CPU run the C++ kernel's range itself, which the Kineto reader also reads as a
//! kernel of the CPU device.

pub use inductor::CompileLog;
use inductor::{CompiledGraph, Kernel};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::trace_fusion::TraceFusion;
use trace::compiled::{CompiledGroup, CompiledOp, Compiler, Estimate};
use trace::Trace;

/// One kernel of the log with what the trace measured of it.
#[derive(Debug, Clone, Serialize)]
pub struct JoinedKernel {
    /// Indices into the log's graphs and that graph's kernels.
    pub graph: u32,
    pub kernel: u32,
    /// Calls the trace recorded.
    pub calls: u64,
    /// Time of its kernels, µs: those it launched on a GPU, or on a CPU run the C++ kernel's
    /// own range, which the reader makes a kernel of the CPU device (0 for a library call on
    /// the CPU, which runs no kernel).
    pub gpu_us: f64,
    /// Time of the CPU op that ran or launched it, µs.
    pub cpu_us: f64,
    /// Its kernels (as `gpu_us` counts them), by name, each once.
    pub gpu_kernels: Vec<String>,
    /// The ids of the CPU ops that ran or launched it ([`trace::CpuOp::external_id`]).
    #[serde(skip)]
    pub ops: Vec<u64>,
    /// Inductor's own estimate of one call, as its launch recorded it (`benchmark_kernel`).
    pub estimate: Option<Estimate>,
}

/// A CPU op that looks like a generated kernel but matched none of the log's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Unjoined {
    pub name: String,
    pub calls: u64,
    pub why: String,
}

/// The log's kernels with the trace's figures; the trace's compiled kernels the log does not
/// name; how many compiled regions the trace has.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Joined {
    pub kernels: Vec<JoinedKernel>,
    pub unjoined: Vec<Unjoined>,
    pub regions: u64,
}

impl Joined {
    /// The joined figures of a kernel of the log, if the trace ran it.
    pub fn of(&self, graph: u32, kernel: u32) -> Option<&JoinedKernel> {
        self.kernels.iter().find(|k| k.graph == graph && k.kernel == kernel)
    }
}

/// The name a CPU op of the trace has when it runs or launches `kernel`.
pub fn op_name(kernel: &str) -> String {
    if let Some(op) = kernel.strip_prefix("extern_kernels.") {
        return format!("aten::{op}");
    }
    if let Some(op) = kernel.strip_prefix("torch.ops.aten.") {
        return format!("aten::{}", op.split('.').next().unwrap_or(op));
    }
    for device in ["aoti_torch_cpu_", "aoti_torch_cuda_"] {
        if let Some(op) = kernel.strip_prefix(device) {
            return format!("aten::{}", op.strip_suffix("_out").unwrap_or(op));
        }
    }
    kernel.to_string()
}

/// A CPU op's name as the log names kernels: a C++ kernel's range drops its `graph_N_` prefix.
fn kernel_key(op: &str) -> &str {
    let Some(rest) = op.strip_prefix("graph_") else { return op };
    match rest.split_once('_') {
        Some((n, name)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => name,
        _ => op,
    }
}

/// Whether a CPU op's name is one Inductor generates (so one the log should name).
fn looks_generated(key: &str) -> bool {
    key.starts_with("cpp_fused_") || key.starts_with("triton_")
}

/// A compiled region of the trace: its compile id's text and its CPU ops in time order.
struct Region {
    compile: Option<String>,
    ops: Vec<usize>,
}

const REGION: &str = "Torch-Compiled Region: ";

/// The compiled regions of a trace: each `Torch-Compiled Region` range with the CPU ops inside
/// it on its thread; a trace without them (AOTInductor) is one region per thread.
fn regions(trace: &Trace) -> Vec<Region> {
    let mut by_tid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, op) in trace.cpu_ops.iter().enumerate() {
        by_tid.entry(op.tid).or_default().push(i);
    }
    let mut out = Vec::new();
    let mut tids: Vec<_> = by_tid.into_iter().collect();
    tids.sort_unstable_by_key(|(tid, _)| *tid);
    let any_region = trace.cpu_ops.iter().any(|o| trace.name(o.name).starts_with(REGION));
    for (_, mut ops) in tids {
        let key = |i: &usize| (trace.cpu_ops[*i].ts, std::cmp::Reverse(ordered(trace.cpu_ops[*i].dur)));
        ops.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
        if !any_region {
            out.push(Region { compile: None, ops });
            continue;
        }
        let mut i = 0;
        while i < ops.len() {
            let op = &trace.cpu_ops[ops[i]];
            let Some(id) = trace.name(op.name).strip_prefix(REGION) else {
                i += 1;
                continue;
            };
            let end = op.ts + op.dur;
            let mut j = i + 1;
            let mut inside = Vec::new();
            while j < ops.len() && trace.cpu_ops[ops[j]].ts <= end {
                inside.push(ops[j]);
                j += 1;
            }
            out.push(Region { compile: Some(id.trim().to_string()), ops: inside });
            i = j;
        }
    }
    out
}

/// A duration as an orderable integer (ns), for sorting enclosing ranges first.
fn ordered(dur: f64) -> i64 {
    (dur * 1000.0) as i64
}

/// Joins the log's kernels to the trace's CPU ops and their GPU kernels.
pub fn join(trace: &Trace, log: &CompileLog) -> Joined {
    let mut gpu_of: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    for (i, k) in trace.kernels.iter().enumerate() {
        if let Some(id) = k.external_id {
            gpu_of.entry(id).or_default().push(i);
        }
    }
    // Each graph's kernels in launch order, with the op name each is looked for under.
    let order: Vec<Vec<(u32, String)>> = log
        .graphs
        .iter()
        .map(|g| g.kernels.iter().enumerate().map(|(i, k)| (i as u32, op_name(&k.name))).collect())
        .collect();
    let mut joined: FxHashMap<(u32, u32), JoinedKernel> = FxHashMap::default();
    let mut unjoined: FxHashMap<String, (u64, String)> = FxHashMap::default();
    let all_regions = regions(trace);
    let regions_count = all_regions.iter().filter(|r| r.compile.is_some()).count() as u64;
    for region in all_regions {
        let candidates: Vec<u32> = (0..log.graphs.len() as u32)
            .filter(|&g| region.compile.as_deref().is_none_or(|id| log.graphs[g as usize].compile.to_string() == id))
            .collect();
        // Per op name, the region's ops of that name in time order, not yet joined.
        let mut queues: FxHashMap<&str, std::collections::VecDeque<usize>> = FxHashMap::default();
        for &i in &region.ops {
            queues.entry(kernel_key(trace.name(trace.cpu_ops[i].name))).or_default().push_back(i);
        }
        // One call of a graph per pass: the candidate that matches the most generated kernels,
        // then the most ops. A library op alone (`aten::mm` runs everywhere) is no evidence of
        // another call: a graph with generated kernels needs one of them to match, a graph of
        // library calls only is taken once per region.
        let mut passes = 0;
        loop {
            let waiting = |name: &str| queues.get(name).is_some_and(|q| !q.is_empty());
            let best = candidates
                .iter()
                .filter_map(|&g| {
                    let kernels = &order[g as usize];
                    let generated = kernels.iter().filter(|(_, n)| looks_generated(n) && waiting(n)).count();
                    let all = kernels.iter().filter(|(_, n)| waiting(n)).count();
                    let has_generated = kernels.iter().any(|(_, n)| looks_generated(n));
                    let plausible = if has_generated { generated > 0 } else { all > 0 && passes == 0 };
                    plausible.then_some((g, generated, all))
                })
                .max_by_key(|&(g, generated, all)| (generated, all, std::cmp::Reverse(g)));
            let Some((g, ..)) = best else { break };
            passes += 1;
            for (k, name) in &order[g as usize] {
                let Some(op) = queues.get_mut(name.as_str()).and_then(|q| q.pop_front()) else { continue };
                let cpu = &trace.cpu_ops[op];
                let entry = joined.entry((g, *k)).or_insert_with(|| JoinedKernel {
                    graph: g,
                    kernel: *k,
                    calls: 0,
                    gpu_us: 0.0,
                    cpu_us: 0.0,
                    gpu_kernels: Vec::new(),
                    ops: Vec::new(),
                    estimate: None,
                });
                entry.calls += 1;
                entry.estimate = entry.estimate.or_else(|| trace.compiled.estimate_of(cpu.external_id).copied());
                entry.ops.push(cpu.external_id);
                entry.cpu_us += cpu.dur;
                for &gk in gpu_of.get(&cpu.external_id).into_iter().flatten() {
                    let kernel = &trace.kernels[gk];
                    entry.gpu_us += kernel.dur;
                    let name = trace.name(kernel.name);
                    if !entry.gpu_kernels.iter().any(|n| n == name) {
                        entry.gpu_kernels.push(name.to_string());
                    }
                }
            }
        }
        for (key, q) in queues {
            if looks_generated(key) && !q.is_empty() {
                let why = match &region.compile {
                    Some(id) if candidates.is_empty() => format!("the log has no graph {id}"),
                    Some(id) => format!("no kernel of this name in the log's graph {id}"),
                    None => "no kernel of this name in the log".to_string(),
                };
                let e = unjoined.entry(key.to_string()).or_insert((0, why));
                e.0 += q.len() as u64;
            }
        }
    }
    let mut kernels: Vec<JoinedKernel> = joined.into_values().collect();
    kernels.sort_by_key(|k| (k.graph, k.kernel));
    let mut unjoined: Vec<Unjoined> =
        unjoined.into_iter().map(|(name, (calls, why))| Unjoined { name, calls, why }).collect();
    unjoined.sort_by(|a, b| a.name.cmp(&b.name));
    Joined { kernels, unjoined, regions: regions_count }
}

/// Joins `log` (the file `file`) to `trace` and records the joined kernels' groups in it: the
/// log's kernels with what the trace measured of each and, from `before` (the trace's fusion
/// made without the log), the group inferred for it. What the command line and the page's
/// worker both do with a compile log.
pub fn apply(trace: &mut Trace, file: &str, log: &CompileLog, before: Option<&TraceFusion>) -> CompiledKernels {
    let joined = join(trace, log);
    link(trace, log, &joined);
    let kernels = CompiledKernels::of(file, log, Some(&joined));
    match before {
        Some(before) => kernels.with_inferred(before),
        None => kernels,
    }
}

/// Records the joined kernels' groups in the trace, so that the fusion analysis takes each
/// profiled kernel's group from the log ([`crate::trace_fusion`], how "Inductor provenance").
pub fn link(trace: &mut Trace, log: &CompileLog, joined: &Joined) {
    for j in &joined.kernels {
        let graph = &log.graphs[j.graph as usize];
        let index = trace.compiled.add(group(graph, &graph.kernels[j.kernel as usize]));
        for &op in &j.ops {
            trace.compiled.link(op, index);
        }
    }
}

/// Ops that run on the matrix units.
const MATRIX_OPS: [&str; 8] = [
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "convolution",
    "_scaled_mm",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
];

/// A kernel of the log as the trace's compiled group.
fn group(graph: &CompiledGraph, kernel: &Kernel) -> CompiledGroup {
    let shape =
        |i: u32| graph.graph.nodes[i as usize].tensor.as_ref().map_or_else(|| "tuple".to_string(), |t| t.text.clone());
    let ops: Vec<CompiledOp> = kernel
        .nodes
        .iter()
        .map(|&i| {
            let n = &graph.graph.nodes[i as usize];
            let source = graph.model_ops[i as usize].join(", ");
            CompiledOp {
                name: n.name.clone(),
                opcode: n.op().to_string(),
                shape: shape(i),
                operands: n.inputs.iter().map(|&x| shape(x)).collect(),
                source: Some(source).filter(|s| !s.is_empty()),
            }
        })
        .collect();
    let matrix = kernel.nodes.iter().find(|&&i| MATRIX_OPS.contains(&graph.graph.nodes[i as usize].op()));
    let element = match matrix {
        Some(&i) => {
            graph.graph.nodes[i as usize].inputs.first().and_then(|&x| graph.graph.nodes[x as usize].tensor.as_ref())
        }
        None => kernel.nodes.last().and_then(|&i| graph.graph.nodes[i as usize].tensor.as_ref()),
    }
    .map(|t| t.dtype.clone());
    CompiledGroup {
        compiler: Compiler::Inductor,
        op: match kernel.handle {
            Some(h) => format!("{}:{h}", kernel.name),
            None => kernel.name.clone(),
        },
        kind: kernel.kind.text().to_string(),
        ops,
        fused_bytes: kernel.fused_bytes,
        unfused_bytes: kernel.unfused_bytes,
        flops: None,
        matrix: matrix.is_some(),
        element,
    }
}

/// A compile log's kernels as the views show them, with what a trace of the run measured of
/// each: what travels with a trace's report (`TraceTime::compiled_kernels`) and to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledKernels {
    /// The log's file name.
    pub file: String,
    /// One sentence: graphs, kernels, bytes, and how many of them the trace ran.
    pub line: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Whether a trace was joined (calls and times are known).
    pub joined: bool,
    pub kernels: Vec<KernelRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjoined: Vec<Unjoined>,
}

/// One kernel of a [`CompiledKernels`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    /// The compile id of its graph (`0/0`).
    pub graph: String,
    /// Its name with its debug handle (`triton_poi_fused_addmm_gelu_2:3`).
    pub kernel: String,
    pub kind: String,
    /// Calls and time (its GPU kernels', else its CPU op's, µs) in the joined trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<f64>,
    /// Its post-grad nodes as `name = op shape`.
    pub nodes: Vec<String>,
    /// The model ops they came from (`z (gelu)`).
    pub model_ops: Vec<String>,
    pub fused_bytes: Option<u64>,
    pub unfused_bytes: Option<u64>,
    /// Inductor's own estimate of one call, where the joined trace's launches record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inductor_estimate: Option<Estimate>,
    /// The group the fusion analysis inferred for it without the log (from its name and the
    /// launch's buffers), where the trace ran it: what the exact group corrects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred: Option<Inferred>,
}

/// A kernel's group as inferred without the compiler's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inferred {
    /// How it was known (`kernel name`, `recorded shapes`, `unknown`).
    pub how: String,
    pub parts: Vec<String>,
    pub fused_bytes: Option<u64>,
}

impl CompiledKernels {
    /// Whether the joined trace ran any of the log's kernels.
    pub fn ran(&self) -> bool {
        self.kernels.iter().any(|k| k.calls.is_some_and(|c| c > 0))
    }

    /// Each generated kernel's group as `before` (the trace's fusion made without the log)
    /// inferred it, beside the exact one.
    pub fn with_inferred(mut self, before: &TraceFusion) -> CompiledKernels {
        for row in &mut self.kernels {
            let (name, _) = inductor::kernels::split_key(&row.kernel);
            if !looks_generated(name) {
                continue;
            }
            let group = before.groups.iter().find(|g| g.launched_by.as_deref() == Some(name) || g.kernel == name);
            row.inferred = group.map(|g| Inferred {
                how: g.how.text().to_string(),
                parts: g.parts.clone(),
                fused_bytes: g.fused_bytes_per_call,
            });
        }
        self
    }

    /// The rows of `log`, with the figures of `joined` where a trace was joined.
    pub fn of(file: &str, log: &CompileLog, joined: Option<&Joined>) -> CompiledKernels {
        let kernels = kernels(log)
            .map(|(g, k, graph, kernel)| {
                let measured = joined.map(|j| j.of(g, k));
                KernelRow {
                    graph: graph.compile.to_string(),
                    kernel: match kernel.handle {
                        Some(h) => format!("{}:{h}", kernel.name),
                        None => kernel.name.clone(),
                    },
                    kind: kernel.kind.text().to_string(),
                    calls: measured.map(|m| m.map_or(0, |m| m.calls)),
                    time_us: measured.flatten().map(|m| if m.gpu_us > 0.0 { m.gpu_us } else { m.cpu_us }),
                    nodes: graph
                        .nodes_of(kernel)
                        .map(|n| match &n.tensor {
                            Some(t) => format!("{} = {} {}", n.name, n.op(), t.text),
                            None => format!("{} = {}", n.name, n.op()),
                        })
                        .collect(),
                    model_ops: graph.model_ops_of(kernel).into_iter().map(str::to_string).collect(),
                    fused_bytes: kernel.fused_bytes,
                    unfused_bytes: kernel.unfused_bytes,
                    inductor_estimate: measured.flatten().and_then(|m| m.estimate),
                    inferred: None,
                }
            })
            .collect();
        CompiledKernels {
            file: file.to_string(),
            line: log_line(log, joined),
            warnings: log.warnings.clone(),
            joined: joined.is_some(),
            kernels,
            unjoined: joined.map(|j| j.unjoined.clone()).unwrap_or_default(),
        }
    }
}

/// One line on the log: graphs, kernels, bytes, and how much of it the trace ran.
fn log_line(log: &CompileLog, joined: Option<&Joined>) -> String {
    use units::{format_bytes, plural};
    let kernels = log.kernels().count();
    let (fused, unfused) = log.kernels().fold((0u64, 0u64), |(f, u), (_, k)| {
        (f.saturating_add(k.fused_bytes.unwrap_or(0)), u.saturating_add(k.unfused_bytes.unwrap_or(0)))
    });
    let mut line = format!(
        "{} and {} with their exact post-grad nodes (Inductor provenance): {} fused, {} if every node were its own kernel",
        plural(log.graphs.len() as u64, "compiled graph", "compiled graphs"),
        plural(kernels as u64, "kernel", "kernels"),
        format_bytes(fused),
        format_bytes(unfused),
    );
    if let Some(j) = joined {
        line += &format!(
            "; {} of {kernels} ran in the trace ({}), {} not in the log",
            j.kernels.len(),
            plural(j.regions, "compiled region", "compiled regions"),
            plural(j.unjoined.len() as u64, "generated kernel", "generated kernels"),
        );
    }
    line
}

/// The kernels of a log, each with its graph, for views.
pub fn kernels(log: &CompileLog) -> impl Iterator<Item = (u32, u32, &CompiledGraph, &Kernel)> {
    log.graphs.iter().enumerate().flat_map(|(g, graph)| {
        graph.kernels.iter().enumerate().map(move |(k, kernel)| (g as u32, k as u32, graph, kernel))
    })
}

#[cfg(test)]
mod tests;
