//! Inductor's compile log: what `torch.compile` records, with `TORCH_TRACE=DIR`, about the
//! kernels it generated. A kernel's provenance artifact lists the post-grad FX nodes it was made
//! from; the `after_post_grad_graph` artifact gives every node's shape, type and inputs; so each
//! kernel's group of ops, and the bytes it moves, are known exactly rather than guessed from its
//! name. The log records no time: joining its kernels to a profiler trace of the same run is the
//! analysis crate's work (`analysis::provenance`).
//!
//! - `log`: the structured log's lines into artifacts.
//! - `graph`, `tensor`: an FX graph's text into nodes with types.
//! - `kernels`: one kernel's nodes and bytes.
//!
//! Formats and versions: `docs/trace-fusion.md`, "Inductor's compile log".

mod error;
pub mod graph;
pub mod kernels;
pub mod log;
pub mod tensor;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub use error::{GraphError, LogError};
pub use graph::{Graph, Node};
pub use kernels::{Kernel, KernelKind};
pub use log::{looks_like, CompileId};

/// The artifacts a kernel's post-grad nodes come from, newest first: the full mappings (2.8
/// on; debug handles from 2.9), then the two names of the plain kernel-to-nodes map.
const MAPPINGS: &str = "inductor_provenance_tracking_node_mappings";
const KERNEL_TO_NODES: [&str; 2] =
    ["inductor_generated_kernel_to_post_grad_nodes", "inductor_triton_kernel_to_post_grad_nodes"];
/// The post-grad graph: `after_post_grad_graph` until PyTorch 2.9, `inductor_post_grad_graph`
/// since.
const POST_GRAD: [&str; 2] = ["after_post_grad_graph", "inductor_post_grad_graph"];
const PRE_GRAD: &str = "after_pre_grad_graph";

/// One graph Inductor compiled, with its kernels.
#[derive(Debug, Clone, Serialize)]
pub struct CompiledGraph {
    pub compile: CompileId,
    /// The line of its `after_post_grad_graph` header in the log.
    pub line: usize,
    pub graph: Graph,
    /// Its kernels: by debug handle (the launch order) where the log has them, else in the
    /// order of their first node in the graph.
    pub kernels: Vec<Kernel>,
    /// Per post-grad node, the model's (pre-grad) ops it came from, as `name (op)`.
    pub model_ops: Vec<Vec<String>>,
    /// The artifact the kernels were read from.
    pub provenance: &'static str,
}

/// A compile log's graphs and kernels, and what could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct CompileLog {
    pub graphs: Vec<CompiledGraph>,
    /// What was passed over, one sentence each, naming the artifact and its line.
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Mappings {
    #[serde(rename = "cppCodeToPost", default)]
    kernels: FxHashMap<String, Vec<String>>,
    #[serde(rename = "postToPre", default)]
    post_to_pre: FxHashMap<String, Vec<String>>,
}

/// A post-grad graph waiting for its provenance.
struct Pending {
    compile: CompileId,
    line: usize,
    graph: Graph,
    pre_grad: Option<Graph>,
    kernels: Option<(&'static str, FxHashMap<String, Vec<String>>)>,
    post_to_pre: FxHashMap<String, Vec<String>>,
}

impl CompileLog {
    /// Reads a log's text. A graph or provenance artifact that cannot be read is passed over
    /// with a warning; the log is refused only when no graph with provenance is left.
    pub fn read(text: &str) -> Result<CompileLog, LogError> {
        if text.len() > limits::COMPILE_LOG_BYTES {
            return Err(LogError::TooLarge { bytes: text.len(), limit: limits::COMPILE_LOG_BYTES });
        }
        let wanted = |n: &str| POST_GRAD.contains(&n) || n == PRE_GRAD || n == MAPPINGS || KERNEL_TO_NODES.contains(&n);
        let (artifacts, skipped) = log::artifacts(text, wanted)?;
        let mut warnings = Vec::new();
        if let Some(line) = skipped.headers {
            warnings.push(format!(
                "{} header line(s) could not be read (the first at line {line}): the log may be cut off",
                skipped.lines
            ));
        }
        let mut pending: Vec<Pending> = Vec::new();
        let mut pre_grad: FxHashMap<CompileId, Graph> = FxHashMap::default();
        for a in artifacts {
            let at = |what: &str| format!("{what} `{}` at line {} ({})", a.name, a.line, a.compile);
            match a.name.as_str() {
                name if POST_GRAD.contains(&name) || name == PRE_GRAD => {
                    match Graph::parse(&a.payload, limits::COMPILE_LOG_NODES) {
                        Ok(graph) if a.name == PRE_GRAD => {
                            pre_grad.insert(a.compile, graph);
                        }
                        Ok(graph) => {
                            if pending.len() >= limits::COMPILE_LOG_GRAPHS {
                                return Err(LogError::TooManyGraphs { limit: limits::COMPILE_LOG_GRAPHS });
                            }
                            pending.push(Pending {
                                compile: a.compile,
                                line: a.line,
                                graph,
                                pre_grad: pre_grad.get(&a.compile).cloned(),
                                kernels: None,
                                post_to_pre: FxHashMap::default(),
                            });
                        }
                        Err(e) => warnings.push(format!("{} was passed over: {e}", at("the graph"))),
                    }
                }
                name => {
                    let Some(p) = pending.iter_mut().rev().find(|p| p.compile == a.compile) else {
                        warnings.push(format!(
                            "{} names kernels, but no post-grad graph comes before it",
                            at("the artifact")
                        ));
                        continue;
                    };
                    let parsed = if name == MAPPINGS {
                        serde_json::from_str::<Mappings>(&a.payload).map(|m| (MAPPINGS, m.kernels, m.post_to_pre))
                    } else {
                        let label = KERNEL_TO_NODES.into_iter().find(|k| *k == name).unwrap_or(KERNEL_TO_NODES[0]);
                        serde_json::from_str(&a.payload).map(|k| (label, k, FxHashMap::default()))
                    };
                    match parsed {
                        Ok((label, kernels, post_to_pre)) => {
                            // The full mappings win over the plain map of the same graph.
                            if p.kernels.as_ref().is_none_or(|(l, _)| *l != MAPPINGS) {
                                p.kernels = Some((label, kernels));
                            }
                            if !post_to_pre.is_empty() {
                                p.post_to_pre = post_to_pre;
                            }
                        }
                        Err(e) => {
                            warnings.push(format!("{} was passed over: its JSON is broken: {e}", at("the artifact")))
                        }
                    }
                }
            }
        }
        let graphs: Vec<CompiledGraph> = pending.into_iter().filter_map(finish).collect();
        if graphs.is_empty() {
            return Err(LogError::NoProvenance);
        }
        Ok(CompileLog { graphs, warnings })
    }

    /// The logs of one `TORCH_TRACE` folder (one per process) as one: every graph of each, in
    /// the order given, and every warning, named by its file.
    pub fn merged(logs: Vec<(String, CompileLog)>) -> Result<CompileLog, LogError> {
        let mut out = CompileLog { graphs: Vec::new(), warnings: Vec::new() };
        for (file, log) in logs {
            out.graphs.extend(log.graphs);
            out.warnings.extend(log.warnings.into_iter().map(|w| format!("{file}: {w}")));
            if out.graphs.len() > limits::COMPILE_LOG_GRAPHS {
                return Err(LogError::TooManyGraphs { limit: limits::COMPILE_LOG_GRAPHS });
            }
        }
        Ok(out)
    }

    /// Every kernel of every graph, with its graph.
    pub fn kernels(&self) -> impl Iterator<Item = (&CompiledGraph, &Kernel)> {
        self.graphs.iter().flat_map(|g| g.kernels.iter().map(move |k| (g, k)))
    }
}

fn finish(p: Pending) -> Option<CompiledGraph> {
    let (provenance, map) = p.kernels?;
    let consumers = p.graph.consumers();
    let sets: Vec<Vec<u32>> = map.values().map(|nodes| kernels::resolve(&p.graph, nodes).0).collect();
    let membership = kernels::Membership::of(p.graph.nodes.len(), sets.iter().map(Vec::as_slice));
    let mut kernels: Vec<Kernel> =
        map.iter().map(|(key, nodes)| kernels::kernel(&p.graph, &consumers, &membership, key, nodes)).collect();
    kernels.sort_by(|a, b| (a.handle, a.nodes.first(), &a.name).cmp(&(b.handle, b.nodes.first(), &b.name)));
    let model_ops = p
        .graph
        .nodes
        .iter()
        .map(|n| {
            p.post_to_pre
                .get(&n.name)
                .map(|pre| pre.iter().map(|name| model_op(p.pre_grad.as_ref(), name)).collect())
                .unwrap_or_default()
        })
        .collect();
    Some(CompiledGraph { compile: p.compile, line: p.line, graph: p.graph, kernels, model_ops, provenance })
}

/// A model op as `name (op)` where the pre-grad graph says what it computes.
fn model_op(pre_grad: Option<&Graph>, name: &str) -> String {
    let op = pre_grad.and_then(|g| g.by_name.get(name).map(|&i| &g.nodes[i as usize]));
    match op {
        Some(n) if n.target.contains('(') || n.target.contains(' ') => format!("{name} ({})", n.target),
        Some(n) => format!("{name} ({})", n.op()),
        None => name.to_string(),
    }
}

impl CompiledGraph {
    /// The nodes of a kernel.
    pub fn nodes_of<'a>(&'a self, kernel: &'a Kernel) -> impl Iterator<Item = &'a Node> + 'a {
        kernel.nodes.iter().map(|&i| &self.graph.nodes[i as usize])
    }

    /// The model ops a kernel's nodes came from, each once, in order.
    pub fn model_ops_of(&self, kernel: &Kernel) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for &i in &kernel.nodes {
            for op in &self.model_ops[i as usize] {
                if !out.contains(&op.as_str()) {
                    out.push(op);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
