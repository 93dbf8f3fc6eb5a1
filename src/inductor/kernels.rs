//! Each kernel Inductor generated, as its provenance artifact records it: the post-grad nodes it
//! was made from, and the bytes it moves fused and would move unfused.

use serde::Serialize;

use crate::graph::{Graph, Node};

/// What made the kernel, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `triton_poi_…`
    TritonPointwise,
    /// `triton_red_…`
    TritonReduction,
    /// `triton_per_…`
    TritonPersistentReduction,
    /// `triton_tem_…`: a GEMM or attention template with its fused epilogue.
    TritonTemplate,
    /// Another Triton kernel (`triton_for_…`, a user's kernel).
    Triton,
    /// `cpp_fused_…`: a C++ kernel of a CPU graph.
    Cpp,
    /// `extern_kernels.mm`, `aoti_torch_cpu_addmm_out`: a library call.
    Library,
}

impl KernelKind {
    pub fn of(name: &str) -> KernelKind {
        match name.split('_').nth(1) {
            _ if name.starts_with("cpp_") => KernelKind::Cpp,
            Some("poi") if name.starts_with("triton_") => KernelKind::TritonPointwise,
            Some("red") if name.starts_with("triton_") => KernelKind::TritonReduction,
            Some("per") if name.starts_with("triton_") => KernelKind::TritonPersistentReduction,
            Some("tem") if name.starts_with("triton_") => KernelKind::TritonTemplate,
            _ if name.starts_with("triton") => KernelKind::Triton,
            _ => KernelKind::Library,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            KernelKind::TritonPointwise => "Triton pointwise",
            KernelKind::TritonReduction => "Triton reduction",
            KernelKind::TritonPersistentReduction => "Triton persistent reduction",
            KernelKind::TritonTemplate => "Triton template",
            KernelKind::Triton => "Triton",
            KernelKind::Cpp => "C++",
            KernelKind::Library => "library call",
        }
    }
}

/// One generated kernel (one launch site, where the log has debug handles).
#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// The kernel's name as the profiler records it (`triton_poi_fused_addmm_gelu_2`).
    pub name: String,
    /// Its launch site's debug handle (`…_2:3`), where the provenance has them (PyTorch 2.9 on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<u32>,
    pub kind: KernelKind,
    /// The post-grad nodes it was made from, in the graph's order.
    pub nodes: Vec<u32>,
    /// Nodes the provenance names that the graph does not have.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Bytes it moves: every tensor it reads from outside its nodes (through views: the
    /// memory they span, at most the whole tensor) and every node's output read outside them
    /// or returned. `None` when a size is symbolic or past 64 bits.
    pub fused_bytes: Option<u64>,
    /// Bytes its nodes would move as kernels of their own: each reads its inputs and writes
    /// its output (views, graph inputs and tuple elements move nothing).
    pub unfused_bytes: Option<u64>,
}

/// The key of a provenance entry split into the kernel's name and its debug handle.
pub fn split_key(key: &str) -> (&str, Option<u32>) {
    match key.rsplit_once(':') {
        Some((name, handle)) if !handle.is_empty() && handle.bytes().all(|b| b.is_ascii_digit()) => {
            (name, handle.parse().ok())
        }
        _ => (key, None),
    }
}

/// The kernel of `key` over `names`, its nodes found in `graph`.
pub fn kernel(graph: &Graph, consumers: &[Vec<u32>], key: &str, names: &[String]) -> Kernel {
    let (name, handle) = split_key(key);
    let mut nodes = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        match graph.by_name.get(n) {
            Some(&i) if !nodes.contains(&i) => nodes.push(i),
            Some(_) => {}
            None => missing.push(n.clone()),
        }
    }
    nodes.sort_unstable();
    let (fused_bytes, unfused_bytes) = bytes(graph, consumers, &nodes);
    Kernel { name: name.to_string(), handle, kind: KernelKind::of(name), nodes, missing, fused_bytes, unfused_bytes }
}

/// Alias chains (a view of a view) are followed at most this far.
const ALIAS_DEPTH: usize = 64;

/// Fused and unfused bytes of the node set `set` (sorted indices).
fn bytes(graph: &Graph, consumers: &[Vec<u32>], set: &[u32]) -> (Option<u64>, Option<u64>) {
    let inside = |i: u32| set.binary_search(&i).is_ok();
    let node = |i: u32| &graph.nodes[i as usize];
    let size = |i: u32| node(i).tensor.as_ref().and_then(|t| t.bytes());
    // The node whose data a view reads, through views inside the set or out of it: a view
    // in the kernel moves nothing, so reading through it reads its base.
    let base = |mut i: u32| {
        for _ in 0..ALIAS_DEPTH {
            let n = node(i);
            match n.inputs.first() {
                Some(&from) if n.is_alias() => i = from,
                _ => break,
            }
        }
        i
    };
    let mut reads: Vec<(u32, u64)> = Vec::new();
    let mut writes = 0u64;
    let mut unfused = 0u64;
    for &i in set {
        let n = node(i);
        if n.is_alias() {
            continue;
        }
        for &input in &n.inputs {
            let Some(b) = size(input).or_else(|| tuple_bytes(graph, consumers, input)) else {
                return (None, None);
            };
            unfused = match unfused.checked_add(b) {
                Some(u) => u,
                None => return (None, None),
            };
            let from = base(input);
            if inside(from) {
                continue;
            }
            // Views of one tensor read at most the tensor: q, k and v sliced from one
            // projection read the projection once.
            match reads.iter_mut().find(|(r, _)| *r == from) {
                Some((_, seen)) => *seen = seen.saturating_add(b),
                None => reads.push((from, b)),
            }
        }
        let out = match &n.tensor {
            Some(_) => size(i),
            None => tuple_bytes(graph, consumers, i),
        };
        let Some(out) = out else { return (None, None) };
        unfused = match unfused.checked_add(out) {
            Some(u) => u,
            None => return (None, None),
        };
        let escaping = match &n.tensor {
            Some(_) if escapes(graph, consumers, &inside, i, 0) => out,
            Some(_) => 0,
            None => consumers[i as usize]
                .iter()
                .filter(|&&g| node(g).target == "getitem" && escapes(graph, consumers, &inside, g, 0))
                .map(|&g| size(g).unwrap_or(0))
                .sum(),
        };
        writes = match writes.checked_add(escaping) {
            Some(w) => w,
            None => return (None, None),
        };
    }
    let fused = reads.iter().try_fold(writes, |sum, &(from, b)| {
        let whole = size(from).or_else(|| tuple_bytes(graph, consumers, from)).unwrap_or(u64::MAX);
        sum.checked_add(b.min(whole))
    });
    (fused, Some(unfused))
}

/// Bytes of a node that yields a tuple: its elements' (`getitem`s').
fn tuple_bytes(graph: &Graph, consumers: &[Vec<u32>], i: u32) -> Option<u64> {
    let node: &Node = &graph.nodes[i as usize];
    if node.tensor.is_some() {
        return None;
    }
    consumers[i as usize]
        .iter()
        .filter(|&&g| graph.nodes[g as usize].target == "getitem")
        .try_fold(0u64, |sum, &g| sum.checked_add(graph.nodes[g as usize].tensor.as_ref()?.bytes()?))
}

/// Whether node `i`'s value is read outside the set or returned, looking through views.
fn escapes(graph: &Graph, consumers: &[Vec<u32>], inside: &impl Fn(u32) -> bool, i: u32, depth: usize) -> bool {
    if graph.outputs.contains(&i) {
        return true;
    }
    consumers[i as usize].iter().any(|&c| {
        let n = &graph.nodes[c as usize];
        if inside(c) && !n.is_alias() {
            return false;
        }
        if n.is_alias() && depth < ALIAS_DEPTH {
            return escapes(graph, consumers, inside, c, depth + 1);
        }
        !inside(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MLP of the shared CUDA log: fc1 (mm + bias, relu, sigmoid) and a gelu after addmm.
    const GRAPH: &str = r#"    def forward(self, arg0_1: "f32[16, 10][10, 1]cuda:0", arg1_1: "f32[16][1]cuda:0", arg2_1: "f32[8, 10][10, 1]cuda:0"):
        permute: "f32[10, 16][1, 10]cuda:0" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        mm_default_1: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.mm.default(arg2_1, permute);  arg2_1 = permute = None
        add_tensor_1: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.add.Tensor(mm_default_1, arg1_1);  mm_default_1 = arg1_1 = None
        relu: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.relu.default(add_tensor_1);  add_tensor_1 = None
        sigmoid: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.sigmoid.default(relu);  relu = None
        return (sigmoid,)
"#;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_pointwise_kernel_reads_its_inputs_once_and_writes_what_leaves() {
        let g = Graph::parse(GRAPH, 100).unwrap();
        let c = g.consumers();
        let k = kernel(&g, &c, "triton_poi_fused_addmm_relu_sigmoid_0:1", &names(&["sigmoid", "relu", "add_tensor_1"]));
        assert_eq!(
            (k.name.as_str(), k.handle, k.kind),
            ("triton_poi_fused_addmm_relu_sigmoid_0", Some(1), KernelKind::TritonPointwise)
        );
        assert_eq!(k.nodes, [5, 6, 7]);
        // Reads mm (512 B) and the bias (64 B), writes sigmoid (512 B).
        assert_eq!(k.fused_bytes, Some(512 + 64 + 512));
        // add: 512 + 64 in, 512 out; relu: 512 + 512; sigmoid: 512 + 512.
        assert_eq!(k.unfused_bytes, Some(576 + 512 + 1024 + 1024));
    }

    #[test]
    fn a_library_kernel_reads_a_view_as_the_memory_it_spans() {
        let g = Graph::parse(GRAPH, 100).unwrap();
        let c = g.consumers();
        let k = kernel(&g, &c, "extern_kernels.mm", &names(&["mm_default_1", "nonexistent"]));
        assert_eq!(k.kind, KernelKind::Library);
        assert_eq!(k.missing, ["nonexistent"]);
        // x (320 B) and the transposed weight (640 B) in, 512 B out.
        assert_eq!(k.fused_bytes, Some(320 + 640 + 512));
        assert_eq!(k.unfused_bytes, k.fused_bytes);
    }
}
