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

/// The nodes of `graph` that `names` name, sorted, each once; and the names it does not have.
pub fn resolve(graph: &Graph, names: &[String]) -> (Vec<u32>, Vec<String>) {
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
    (nodes, missing)
}

/// Which kernels of a graph hold each node. Inductor recomputes a node in every kernel whose
/// provenance lists it (the bias add of a fused QKV projection is in each of the q, k and v
/// kernels), so a node's value that flows only into kernels holding that node too is never
/// written to memory.
pub struct Membership(Vec<Vec<u32>>);

impl Membership {
    /// Over the node sets of every kernel of a graph of `node_count` nodes.
    pub fn of<'a>(node_count: usize, kernels: impl Iterator<Item = &'a [u32]>) -> Membership {
        let mut of_node = vec![Vec::new(); node_count];
        for (k, nodes) in kernels.enumerate() {
            for &n in nodes {
                if let Some(held) = of_node.get_mut(n as usize) {
                    held.push(k as u32);
                }
            }
        }
        Membership(of_node)
    }

    /// Whether some kernel holds both `consumer` and `producer`: there the consumer reads a
    /// value its own kernel recomputes.
    fn recomputes(&self, consumer: u32, producer: u32) -> bool {
        let of = |n: u32| self.0.get(n as usize).map_or(&[][..], Vec::as_slice);
        of(consumer).iter().any(|k| of(producer).contains(k))
    }
}

/// The kernel of `key` over `names`, its nodes found in `graph`; `membership` is every kernel
/// of the graph's ([`Membership::of`]).
pub fn kernel(graph: &Graph, consumers: &[Vec<u32>], membership: &Membership, key: &str, names: &[String]) -> Kernel {
    let (name, handle) = split_key(key);
    let (nodes, missing) = resolve(graph, names);
    let (fused_bytes, unfused_bytes) = bytes(graph, consumers, membership, &nodes);
    Kernel { name: name.to_string(), handle, kind: KernelKind::of(name), nodes, missing, fused_bytes, unfused_bytes }
}

/// Alias chains (a view of a view) are followed at most this far.
const ALIAS_DEPTH: usize = 64;

/// Fused and unfused bytes of the node set `set` (sorted indices).
fn bytes(graph: &Graph, consumers: &[Vec<u32>], membership: &Membership, set: &[u32]) -> (Option<u64>, Option<u64>) {
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
        let reach = Reach { graph, consumers, membership, inside: &inside, producer: i };
        let escaping = match &n.tensor {
            Some(_) if reach.escapes(i, 0) => out,
            Some(_) => 0,
            None => consumers[i as usize]
                .iter()
                .filter(|&&g| node(g).target == "getitem" && reach.escapes(g, 0))
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

/// Where one node's value goes, for [`Reach::escapes`].
struct Reach<'a, F: Fn(u32) -> bool> {
    graph: &'a Graph,
    consumers: &'a [Vec<u32>],
    membership: &'a Membership,
    inside: &'a F,
    /// The node whose value it is (`escapes` follows its views).
    producer: u32,
}

impl<F: Fn(u32) -> bool> Reach<'_, F> {
    /// Whether node `i`'s value (the producer's, or a view of it) is returned, or read outside
    /// the set by a kernel that does not recompute the producer, looking through views.
    fn escapes(&self, i: u32, depth: usize) -> bool {
        if self.graph.outputs.contains(&i) {
            return true;
        }
        self.consumers[i as usize].iter().any(|&c| {
            let n = &self.graph.nodes[c as usize];
            if (self.inside)(c) && !n.is_alias() {
                return false;
            }
            if n.is_alias() && depth < ALIAS_DEPTH {
                return self.escapes(c, depth + 1);
            }
            !(self.inside)(c) && !self.membership.recomputes(c, self.producer)
        })
    }
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
        let set = names(&["sigmoid", "relu", "add_tensor_1"]);
        let m = Membership::of(g.nodes.len(), [resolve(&g, &set).0.as_slice()].into_iter());
        let k = kernel(&g, &c, &m, "triton_poi_fused_addmm_relu_sigmoid_0:1", &set);
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
        let set = names(&["mm_default_1", "nonexistent"]);
        let m = Membership::of(g.nodes.len(), [resolve(&g, &set).0.as_slice()].into_iter());
        let k = kernel(&g, &c, &m, "extern_kernels.mm", &set);
        assert_eq!(k.kind, KernelKind::Library);
        assert_eq!(k.missing, ["nonexistent"]);
        // x (320 B) and the transposed weight (640 B) in, 512 B out.
        assert_eq!(k.fused_bytes, Some(320 + 640 + 512));
        assert_eq!(k.unfused_bytes, k.fused_bytes);
    }
}
