//! vLLM's fused-MoE op (`vllm::moe_forward`) and paged attention op
//! (`vllm::unified_attention_with_output`), whose traffic is not among their own recorded
//! arguments, modelled from what else the trace records (`docs/trace-fusion.md`, "vLLM's MoE and
//! attention"): the engine's step annotation gives attention the KV lengths it read; the MoE op's
//! subtree (TopK's `k`, the views of the expert weights the GEMMs are handed) gives each of its
//! kernels its bytes. Where a fact is missing the model says which, never a default.

use rustc_hash::FxHashMap;

use super::call_bytes::{score_round_trips, CallBytes};
use super::kind::Kind;
use super::unknown::Unknown;
use crate::time::recorded_cost::ShapeText;
use perf::{DType, OpArgs, Tensor};
use trace::Trace;

/// The attention work of one engine step, as vLLM's detailed step annotation records it
/// (`execute_{tokens}_context_{n}(sq…sk…sqsq…sqsk…)_generation_{n}(sq…sk…sqsq…sqsk…)`): per
/// phase (context = prefill chunks, generation = decode), Σ query tokens (`sq`), Σ keys attended
/// (`sk`, cached + new), Σ sq² and Σ sq·sk over its requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StepLengths {
    pub c_sq: u64,
    pub c_sk: u64,
    pub c_sqsq: u64,
    pub c_sqsk: u64,
    pub g_sq: u64,
    pub g_sk: u64,
    pub g_sqsq: u64,
    pub g_sqsk: u64,
}

impl StepLengths {
    /// The (query, key) pairs the step's attention scores, per head: Σ sq·sk of both phases, a
    /// causal chunk's upper triangle left out of the context's (Σ sq(sq−1)/2 = (Σ sq² − Σ sq) / 2,
    /// each term even); `None` past 64 bits.
    pub(crate) fn score_pairs(&self) -> Option<u64> {
        let causal_cut = self.c_sqsq.checked_sub(self.c_sq).map(|d| d / 2).unwrap_or(0);
        self.c_sqsk.saturating_sub(causal_cut).checked_add(self.g_sqsk)
    }
}

/// Reads `prefix` then a decimal number from `s`.
fn number_after<'a>(s: &'a str, prefix: &str) -> Option<(u64, &'a str)> {
    let s = s.strip_prefix(prefix)?;
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 || end > 19 {
        return None;
    }
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// `(sq{}sk{}sqsq{}sqsk{})`: one phase's four sums.
fn phase(s: &str) -> Option<([u64; 4], &str)> {
    let (sq, s) = number_after(s, "(sq")?;
    let (sk, s) = number_after(s, "sk")?;
    let (sqsq, s) = number_after(s, "sqsq")?;
    let (sqsk, s) = number_after(s, "sqsk")?;
    Some(([sq, sk, sqsq, sqsk], s.strip_prefix(')')?))
}

/// The step lengths of a vLLM detailed step annotation, `None` for any other name or one whose
/// sums contradict each other (more queries than keys in a phase).
pub(crate) fn parse_step(name: &str) -> Option<StepLengths> {
    let (_, s) = number_after(name, "execute_")?;
    let (_, s) = number_after(s, "_context_")?;
    let (c, s) = phase(s)?;
    let (_, s) = number_after(s, "_generation_")?;
    let (g, s) = phase(s)?;
    if !s.is_empty() || c[0] > c[1] || g[0] > g[1] {
        return None;
    }
    Some(StepLengths {
        c_sq: c[0],
        c_sk: c[1],
        c_sqsq: c[2],
        c_sqsk: c[3],
        g_sq: g[0],
        g_sk: g[1],
        g_sqsq: g[2],
        g_sqsk: g[3],
    })
}

/// The trace's step annotations (CPU ranges), by start, for the step a launch was made in.
pub(crate) struct Steps {
    /// (start, end, index into `lengths`), sorted by start.
    spans: Vec<(f64, f64, usize)>,
    lengths: Vec<StepLengths>,
}

impl Steps {
    pub(crate) fn new(trace: &Trace) -> Steps {
        let mut spans = Vec::new();
        let mut lengths = Vec::new();
        for a in trace.annotations.iter().filter(|a| !a.gpu) {
            if let Some(l) = parse_step(trace.name(a.name)) {
                spans.push((a.ts, a.ts + a.dur, lengths.len()));
                lengths.push(l);
            }
        }
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        Steps { spans, lengths }
    }

    /// The step whose range holds `ts` (the latest-starting one, if ranges nest): its index and
    /// lengths.
    pub(crate) fn at(&self, ts: f64) -> Option<(usize, StepLengths)> {
        let after = self.spans.partition_point(|s| s.0 <= ts);
        let &(_, end, i) = self.spans[..after].last()?;
        (ts <= end).then(|| (i, self.lengths[i]))
    }

    /// The lengths of step `n` (an index [`Steps::at`] gave).
    pub(crate) fn lengths(&self, n: usize) -> Option<StepLengths> {
        self.lengths.get(n).copied()
    }
}

/// The KV cache's element type, from the trace's KV-cache writes (`reshape_and_cache[_flash]`'s
/// `key_cache`, input 2): the attention op does not record the cache it reads.
pub(crate) fn kv_cache_type(trace: &Trace) -> Result<DType, Unknown> {
    let mut seen: Vec<DType> = Vec::new();
    for op in &trace.cpu_ops {
        let name = trace.name(op.name);
        if !matches!(name, "_C_cache_ops::reshape_and_cache_flash" | "_C_cache_ops::reshape_and_cache") {
            continue;
        }
        let Some(args) = parse_args(trace, op.shapes) else { continue };
        if let Ok(t) = args.tensor(2, "the key cache") {
            if !seen.contains(&t.dtype()) {
                seen.push(t.dtype());
            }
        }
    }
    match seen.as_slice() {
        [one] => Ok(*one),
        [] => Err(Unknown::not_recorded("the KV cache's type is not recorded: the trace has no KV-cache write (reshape_and_cache) whose key_cache says it")),
        many => Err(Unknown::not_recorded(format!(
            "the trace's KV-cache writes name caches of {} types ({}): which one this layer reads is not recorded",
            many.len(),
            many.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn parse_args(trace: &Trace, shapes: trace::RecordedShapes) -> Option<OpArgs> {
    OpArgs::parse(ShapeText::recorded(trace, shapes).raw()).ok()
}

/// Sizes that do not fit in 64 bits: absurd input.
fn overflow() -> Unknown {
    Unknown::bad_input("its bytes do not fit in 64 bits")
}

/// Recorded shapes that do not fit the op.
fn bad(why: impl Into<String>) -> Unknown {
    Unknown::bad_input(why)
}

/// Product of the terms, checked.
fn product(terms: &[u64]) -> Result<u64, Unknown> {
    terms.iter().try_fold(1u64, |p, &t| p.checked_mul(t)).ok_or_else(overflow)
}

fn sum(terms: &[u64]) -> Result<u64, Unknown> {
    terms.iter().try_fold(0u64, |s, &t| s.checked_add(t)).ok_or_else(overflow)
}

fn tensor<'a>(args: &'a OpArgs, i: usize, role: &str) -> Result<&'a Tensor, Unknown> {
    args.tensor(i, "a tensor").map_err(|_| bad(format!("input {i} ({role}) is not a recorded tensor")))
}

/// `[tokens, heads, head dim]` of a recorded attention tensor.
fn heads(t: &Tensor, role: &str) -> Result<[u64; 3], Unknown> {
    match *t.dims() {
        [n, h, d] if h > 0 && d > 0 => Ok([n, h, d]),
        _ => Err(bad(format!("the {role} is {:?}, not [tokens, heads, head dim]", t.dims()))),
    }
}

/// `vllm::unified_attention_with_output(query [N, Hq, Dqk], key [N, Hkv, Dqk], value [N, Hkv,
/// Dv], output [N, Hq, Dv], …)` (or `vllm::unified_attention`, which returns an output of the
/// query's type) in a step of `step`'s lengths, reading a KV cache of `cache`'s type. Each query token's row read and its output row written; the step's new tokens' key and
/// value rows read (in the key's type); every other key the step attends read once from the
/// cache (`sk − sq` per phase, K and V, in the cache's type). Minimal traffic: each K/V row read
/// once per step, though a kernel may read one again per query tile or head group. Unfused, the
/// score matrix S is written and read by the softmax and P written and read by ·V: 4 × the
/// scores in the query's type, scores = Hq × the (query, key) pairs (a causal chunk's upper
/// triangle left out: Σ sq·sk − sq(sq−1)/2 for context, Σ sq·sk for decode).
pub(crate) fn unified_attention(
    args: &OpArgs,
    step: Option<StepLengths>,
    cache: Result<DType, Unknown>,
) -> Result<CallBytes, Unknown> {
    let (q, k) = (tensor(args, 0, "the query")?, tensor(args, 1, "the key")?);
    let v = tensor(args, 2, "the value")?;
    // `unified_attention_with_output` is passed its output; `unified_attention` returns one of
    // the query's type.
    let out = args.tensor(3, "a tensor").ok();
    let [rows, hq, dqk] = heads(q, "query")?;
    let [_, hkv, dk] = heads(k, "key")?;
    let [_, _, dv] = heads(v, "value")?;
    let Some(s) = step else {
        return Err(Unknown::not_recorded(format!(
            "it reads the paged KV cache, which is not among its recorded inputs (query {:?}, key {:?}, value {:?}), and no vLLM step annotation (execute_…_context_…(sq…sk…sqsq…sqsk…)_generation_…) holds its launch to say how many keys each step attends",
            q.dims(), k.dims(), v.dims()
        )));
    };
    let cache = cache?;
    if dk != dqk {
        return Err(bad(format!("the key's head dim {dk} is not the query's {dqk}")));
    }
    let tokens = s.c_sq.checked_add(s.g_sq).ok_or_else(overflow)?;
    if tokens > rows {
        return Err(bad(format!(
            "its step annotation counts {tokens} query tokens but the query has {rows} rows: the annotation is not of this call"
        )));
    }
    // Both phases' cached keys: sk − sq each.
    let cached = s
        .c_sk
        .checked_sub(s.c_sq)
        .zip(s.g_sk.checked_sub(s.g_sq))
        .ok_or_else(|| bad("its step annotation counts more queries than keys"))?;
    let cached = cached.0.checked_add(cached.1).ok_or_else(overflow)?;
    let qb = product(&[tokens, hq, dqk, q.dtype().size_bytes()])?;
    let ob = product(&[tokens, hq, dv, out.unwrap_or(q).dtype().size_bytes()])?;
    let new_k = product(&[tokens, hkv, dk, k.dtype().size_bytes()])?;
    let new_v = product(&[tokens, hkv, dv, v.dtype().size_bytes()])?;
    let cache_kv = product(&[cached, hkv, dk.checked_add(dv).ok_or_else(overflow)?, cache.size_bytes()])?;
    let fused = sum(&[qb, ob, new_k, new_v, cache_kv])?;
    let pairs = s.score_pairs().ok_or_else(overflow)?;
    let scores = score_round_trips(product(&[hq, pairs])?, q.dtype().size_bytes()).ok_or_else(overflow)?;
    Ok(CallBytes {
        fused,
        unfused: Some(sum(&[fused, scores])?),
        unfused_unknown: None,
        kind: Kind::Attention,
        parts: &["matmul (Q·Kᵀ)", "softmax", "matmul (·V)"],
        out_bytes: out.map_or_else(|| q.bytes().ok(), |o| o.bytes().ok()),
        in_bytes: [q, k, v].iter().filter_map(|t| t.bytes().ok()).collect(),
        space: q.numel().ok(),
    })
}

/// What the MoE op's subtree records of one call: tokens `T`, hidden size `H`, experts `E`,
/// experts per token `k`, the expert weights (gate/up `w13`, down `w2`) as stored, the
/// intermediate size `N`, whether gate and up are one GEMM (`w13` is 2N wide), the activations'
/// type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MoeShapes {
    pub tokens: u64,
    pub hidden: u64,
    pub experts: u64,
    pub topk: u64,
    pub w13_bytes: u64,
    pub w2_bytes: u64,
    pub inter: u64,
    pub gated: bool,
    pub act: DType,
}

impl MoeShapes {
    /// Experts that receive at least one token, expected under uniform routing: each token picks
    /// k of E, so an expert is missed by all T tokens with probability ((E−k)/E)^T. The trace
    /// does not record the routing; this is the expectation (TraceLens's too).
    pub fn active_fraction(&self) -> f64 {
        let e = self.experts as f64;
        let miss = ((e - self.topk as f64) / e).clamp(0.0, 1.0);
        1.0 - miss.powf(self.tokens as f64)
    }

    fn active(&self, weight_bytes: u64) -> u64 {
        // ≤ weight_bytes: the fraction is in [0, 1].
        (weight_bytes as f64 * self.active_fraction()).round() as u64
    }
}

/// Ops of each thread in start order, to find an op's subtree (the ops it holds) by range.
pub(crate) struct ThreadOps {
    by_tid: FxHashMap<i64, Vec<usize>>,
}

impl ThreadOps {
    pub(crate) fn new(trace: &Trace) -> ThreadOps {
        let mut by_tid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
        for (i, op) in trace.cpu_ops.iter().enumerate() {
            if !op.annotation {
                by_tid.entry(op.tid).or_default().push(i);
            }
        }
        for ops in by_tid.values_mut() {
            ops.sort_by(|&a, &b| trace.cpu_ops[a].ts.total_cmp(&trace.cpu_ops[b].ts));
        }
        ThreadOps { by_tid }
    }

    /// The innermost op that holds op `o` (same thread, its range inside) and whose name passes
    /// `pred`; `o` itself if it passes. A bounded walk back over the ops that started before it.
    pub(crate) fn enclosing(&self, trace: &Trace, o: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
        let op = &trace.cpu_ops[o];
        if pred(trace.name(op.name)) {
            return Some(o);
        }
        let ops = self.by_tid.get(&op.tid)?;
        let at = ops.partition_point(|&i| trace.cpu_ops[i].ts <= op.ts);
        ops[..at].iter().rev().take(256).copied().find(|&i| {
            let c = &trace.cpu_ops[i];
            i != o && c.ts <= op.ts && c.ts + c.dur >= op.ts + op.dur && pred(trace.name(c.name))
        })
    }

    /// The ops op `o` holds (same thread, inside its range), in start order.
    fn subtree<'a>(&'a self, trace: &'a Trace, o: usize) -> impl Iterator<Item = usize> + 'a {
        let op = &trace.cpu_ops[o];
        let end = op.ts + op.dur;
        let ops = self.by_tid.get(&op.tid).map_or(&[][..], Vec::as_slice);
        let from = ops.partition_point(|&i| trace.cpu_ops[i].ts < op.ts);
        ops[from..]
            .iter()
            .copied()
            .take_while(move |&i| trace.cpu_ops[i].ts <= end)
            .filter(move |&i| i != o && trace.cpu_ops[i].ts + trace.cpu_ops[i].dur <= end)
    }
}

/// The MoE shapes of call `o` of `vllm::moe_forward(hidden_states [T, H], router_logits [T, E],
/// …)`: `k` from the TopK call in its subtree (Concrete Inputs 1), the expert weights from the
/// rank-3 tensors of `E` experts its subtree's ops take (the views handed to the GEMMs, in
/// order: gate/up then down), stored `[E, H, W]` and `[E, N, H]` (W = 2N gated, else N); an
/// `unsigned char` weight packs two 4-bit values a byte when `gemm_kernel`, the name of the
/// call's first GEMM, says `mxfp4`/`fp4`.
pub(crate) fn moe_shapes(
    trace: &Trace,
    threads: &ThreadOps,
    o: usize,
    gemm_kernel: &str,
) -> Result<MoeShapes, Unknown> {
    let op = &trace.cpu_ops[o];
    let args = parse_args(trace, op.shapes).ok_or_else(|| bad("its recorded arguments do not parse"))?;
    let x = tensor(&args, 0, "the hidden states")?;
    let logits = tensor(&args, 1, "the router logits")?;
    let [tokens, hidden] = *x.dims() else {
        return Err(bad(format!("the hidden states are {:?}, not [tokens, hidden]", x.dims())));
    };
    let [_, experts] = *logits.dims() else {
        return Err(bad(format!("the router logits are {:?}, not [tokens, experts]", logits.dims())));
    };
    if tokens == 0 || hidden == 0 || experts == 0 {
        return Err(bad(format!("empty hidden states {:?} or router logits {:?}", x.dims(), logits.dims())));
    }
    let mut topk: Option<u64> = None;
    let mut weights: Vec<Tensor> = Vec::new();
    for i in threads.subtree(trace, o) {
        let child = &trace.cpu_ops[i];
        let Some(a) = parse_args(trace, child.shapes) else { continue };
        let name = trace.name(child.name);
        if topk.is_none() && matches!(name, "TopK" | "aten::topk") {
            topk = a.int(1, "k").ok().flatten().and_then(|k| u64::try_from(k).ok());
        }
        for t in a.tensors() {
            if t.dims().len() == 3
                && t.dims()[0] == experts
                && !weights.iter().any(|w| w.dims() == t.dims() && w.dtype() == t.dtype())
            {
                weights.push(t.clone());
            }
        }
    }
    let topk = topk.ok_or_else(|| {
        Unknown::not_recorded("no TopK call in its subtree records k, the experts each token is routed to")
    })?;
    if topk == 0 || topk > experts {
        return Err(bad(format!("TopK's k = {topk} is not between 1 and the {experts} experts")));
    }
    let [w13, w2] = weights.as_slice() else {
        return Err(Unknown::not_recorded(format!(
            "its subtree hands {} tensors of {experts} experts to its kernels ({}), not the two expert weights (gate/up, down)",
            weights.len(),
            weights.iter().map(|w| format!("{:?}", w.dims())).collect::<Vec<_>>().join(", ")
        )));
    };
    let lower = gemm_kernel.to_ascii_lowercase();
    let per_byte = match w13.dtype() {
        DType::U8 if w2.dtype() == DType::U8 && lower.contains("fp4") => 2,
        DType::U8 => {
            return Err(Unknown::not_recorded(format!(
                "its expert weights are stored as bytes ({:?}, {:?}) and the kernel name does not say their format",
                w13.dims(),
                w2.dims()
            )))
        }
        _ => 1,
    };
    let inter = w2.dims()[1].checked_mul(per_byte).ok_or_else(overflow)?;
    let fits_h = w13.dims()[1].checked_mul(per_byte) == Some(hidden) && w2.dims()[2] == hidden;
    let gated = w13.dims()[2] == inter.checked_mul(2).ok_or_else(overflow)?;
    if !fits_h || inter == 0 || !(gated || w13.dims()[2] == inter) {
        return Err(bad(format!(
            "its expert weights {:?} and {:?} do not fit hidden size {hidden} as [E, H, 2N or N] and [E, N, H]",
            w13.dims(),
            w2.dims()
        )));
    }
    Ok(MoeShapes {
        tokens,
        hidden,
        experts,
        topk,
        w13_bytes: w13.bytes().map_err(|e| bad(e.to_string()))?,
        w2_bytes: w2.bytes().map_err(|e| bad(e.to_string()))?,
        inter,
        gated,
        act: x.dtype(),
    })
}

/// Bytes of the tensor an allocation op of the subtree creates: `aten::empty(size, dtype, …)`
/// and `aten::empty_strided(size, stride, dtype, …)` record the size and the dtype's
/// `c10::ScalarType` number among their Concrete Inputs. `None` for other ops, or where either
/// is missing or not a known type.
fn allocated_bytes(name: &str, args: &OpArgs) -> Option<u64> {
    let dtype_at = match name {
        "aten::empty" => 1,
        "aten::empty_strided" => 2,
        _ => return None,
    };
    let dims = args.int_list(0, "size").ok()??;
    let dtype = DType::from_scalar_type_code(args.int(dtype_at, "dtype").ok()??)?;
    dims.iter().try_fold(dtype.size_bytes(), |p, &d| p.checked_mul(u64::try_from(d).ok()?))
}

/// The routing ops of a vLLM MoE call on the triton_kernels path: `TopK(x [T, E], k,
/// apply_softmax, dim, return_bitmatrix, …)` picks each token's experts, `SortTokens(expt_scal
/// [T, k], expt_indx [T, k], n_expts_tot)` groups the tokens by expert for the GEMMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Routing {
    TopK,
    SortTokens,
}

impl Routing {
    pub(crate) const ALL: [Routing; 2] = [Routing::TopK, Routing::SortTokens];

    /// The op's name in the trace.
    pub(crate) fn op(self) -> &'static str {
        match self {
            Routing::TopK => "TopK",
            Routing::SortTokens => "SortTokens",
        }
    }
}

/// A routing op's bytes: its recorded tensor inputs read once (TopK's logits; SortTokens' top-k
/// values and indices), and the tensors its subtree allocates (`aten::empty` with the size and
/// type recorded: TopK's top-k values, indices and bitmatrix of chosen experts; SortTokens'
/// per-expert histogram, offsets and gather/scatter indices, and their scratch) written once:
/// the ops record their inputs but return their outputs, so these say their sizes. Scratch is
/// counted as written in full, an upper bound where a kernel writes part of it.
pub(crate) fn routing(trace: &Trace, threads: &ThreadOps, o: usize, which: Routing) -> Result<CallBytes, Unknown> {
    let op = &trace.cpu_ops[o];
    let args = parse_args(trace, op.shapes).ok_or_else(|| bad("its recorded arguments do not parse"))?;
    let x = tensor(&args, 0, if which == Routing::TopK { "the router logits" } else { "the top-k values" })?;
    let read = args.tensors().try_fold(0u64, |s, t| {
        let b = t.bytes().map_err(|e| bad(e.to_string()))?;
        s.checked_add(b).ok_or_else(overflow)
    })?;
    let mut written: Vec<u64> = Vec::new();
    for i in threads.subtree(trace, o) {
        let child = &trace.cpu_ops[i];
        let Some(a) = parse_args(trace, child.shapes) else { continue };
        if let Some(b) = allocated_bytes(trace.name(child.name), &a) {
            written.push(b);
        }
    }
    if written.is_empty() {
        return Err(Unknown::not_recorded("no allocation in its subtree records the size and type of its outputs"));
    }
    let fused = sum(&[read, sum(&written)?])?;
    let (kind, parts): (Kind, &'static [&'static str]) = match which {
        Routing::TopK => (Kind::Reduction, &["topk"]),
        Routing::SortTokens => (Kind::Other, &["sort tokens by expert"]),
    };
    Ok(CallBytes {
        fused,
        unfused: Some(fused),
        unfused_unknown: None,
        kind,
        parts,
        out_bytes: None,
        in_bytes: vec![read],
        space: x.numel().ok(),
    })
}

/// What a kernel of a MoE call is, by name and order: `matmul_ogs` GEMMs (triton_kernels'), the
/// first of a call the gate/up projection and the second the down projection, and the
/// `finalize_matmul_scatter` that sums each token's experts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MoeKernel {
    Gemm(u32),
    Finalize,
}

impl MoeKernel {
    pub(crate) fn of(kernel: &str) -> Option<MoeKernel> {
        let lower = kernel.to_ascii_lowercase();
        if lower.contains("finalize_matmul_scatter") {
            Some(MoeKernel::Finalize)
        } else if lower.contains("matmul_ogs") {
            Some(MoeKernel::Gemm(0))
        } else {
            None
        }
    }
}

/// The bytes of one MoE kernel (`role`, `kernel` its name) of a call with shapes `s`, where
/// `scattered`: the call has a finalize kernel, so the down GEMM writes each (token, expert)
/// row and the finalize sums them. Activations in `s.act`; weights read for the expected active
/// experts only; the routing indices and the microscaling scales of packed weights are not
/// recorded and not counted.
pub(crate) fn moe_kernel(s: &MoeShapes, role: MoeKernel, kernel: &str, scattered: bool) -> Result<CallBytes, Unknown> {
    let a = s.act.size_bytes();
    let routed = s.tokens.checked_mul(s.topk).ok_or_else(overflow)?;
    let x = product(&[s.tokens, s.hidden, a])?;
    let mid = product(&[routed, s.inter, a])?;
    let lower = kernel.to_ascii_lowercase();
    match role {
        MoeKernel::Gemm(0) => {
            let w = s.active(s.w13_bytes);
            // A gated GEMM with the activation in its epilogue writes N wide; without it, 2N.
            let glu = s.gated && (lower.contains("swiglu") || lower.contains("_glu"));
            let out = if s.gated && !glu { mid.checked_mul(2).ok_or_else(overflow)? } else { mid };
            let fused = sum(&[x, w, out])?;
            let (unfused, parts): (u64, &'static [&'static str]) = if glu {
                // Unfused the GEMM writes the 2N-wide gate/up product and SwiGLU reads it back.
                (sum(&[fused, mid, mid, mid, mid])?, &["matmul (gate/up)", "swiglu"])
            } else {
                (fused, &["matmul (gate/up)"])
            };
            Ok(CallBytes {
                fused,
                unfused: Some(unfused),
                unfused_unknown: None,
                kind: Kind::Matmul,
                parts,
                out_bytes: Some(out),
                in_bytes: vec![x, w],
                space: Some(product(&[routed, s.inter])?),
            })
        }
        MoeKernel::Gemm(1) => {
            let w = s.active(s.w2_bytes);
            let out = if scattered { product(&[routed, s.hidden, a])? } else { x };
            let fused = sum(&[mid, w, out])?;
            Ok(CallBytes {
                fused,
                unfused: Some(fused),
                unfused_unknown: None,
                kind: Kind::Matmul,
                parts: &["matmul (down)"],
                out_bytes: Some(out),
                in_bytes: vec![mid, w],
                space: Some(product(&[routed, s.hidden])?),
            })
        }
        MoeKernel::Gemm(n) => Err(Unknown::no_model(format!(
            "GEMM {} of its call: the model knows two (gate/up, down)",
            n.saturating_add(1)
        ))),
        MoeKernel::Finalize => {
            // Each token's k expert rows and their k routing weights read, its row written.
            let rows = product(&[routed, s.hidden, a])?;
            let gammas = product(&[routed, a])?;
            let fused = sum(&[rows, gammas, x])?;
            Ok(CallBytes {
                fused,
                unfused: Some(fused),
                unfused_unknown: None,
                kind: Kind::Reduction,
                parts: &["sum over experts"],
                out_bytes: Some(x),
                in_bytes: vec![rows, gammas],
                space: Some(product(&[routed, s.hidden])?),
            })
        }
    }
}

#[cfg(test)]
mod tests;
