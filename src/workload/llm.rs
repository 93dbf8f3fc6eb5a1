//! Decoder LLMs: Llama (GQA attention + SwiGLU FFN) and DeepSeek (MLA attention + MoE FFN
//! with shared and routed experts), prefill and one decode step, sharded over `tp` chips.

use fusion::OpType::{Elementwise, Matmul, Reduction, Reshape};

use super::config::LlmConfig;
use super::net::Net;
use super::{positive, LayerPart, Phase, ResolvedParams, Workload, WorkloadError, WorkloadParams};
use limits::WORKLOAD_EXPERTS_PER_CHIP;

/// Token counts of one pass: `q` new tokens per sequence, attending over `ctx` tokens.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tokens {
    pub batch: u64,
    pub q: u64,
    pub ctx: u64,
    pub decode: bool,
}

/// Multi-head or grouped-query attention on the local heads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttentionDims {
    pub d_model: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub d_head: u64,
    pub rope: bool,
}

fn div_exact(name: &'static str, value: u64, tp: u64) -> Result<u64, WorkloadError> {
    if !value.is_multiple_of(tp) {
        return Err(WorkloadError::Param {
            name: "tp",
            value: tp.to_string(),
            reason: match name {
                "num_heads" => "must divide num_heads",
                _ => "must divide the FFN width",
            },
        });
    }
    Ok(value / tp)
}

/// Norm → Q/K/V projections (K/V with `kv_heads`) → RoPE → heads → scores → softmax → ·V →
/// merge → output projection → residual. Decode reads K and V from the cache (`ctx` tokens) and
/// writes the new token's K and V into it. Returns the residual's output.
pub(crate) fn attention(net: &mut Net, p: &str, x: &str, a: AttentionDims, t: Tokens) -> Result<String, WorkloadError> {
    let (b, s, d, dh) = (t.batch, t.q, a.d_model, a.d_head);
    let norm_w = net.input(&format!("{p}.attn_norm.weight"), &[d])?;
    let n = net.op(&format!("{p}.attn_norm"), Reduction, &[x, &norm_w], &[b, s, d])?;
    let wq = net.input(&format!("{p}.wq"), &[d, a.heads * dh])?;
    let wk = net.input(&format!("{p}.wk"), &[d, a.kv_heads * dh])?;
    let wv = net.input(&format!("{p}.wv"), &[d, a.kv_heads * dh])?;
    let mut q = net.op(&format!("{p}.q_proj"), Matmul, &[&n, &wq], &[b, s, a.heads * dh])?;
    let mut k = net.op(&format!("{p}.k_proj"), Matmul, &[&n, &wk], &[b, s, a.kv_heads * dh])?;
    let v = net.op(&format!("{p}.v_proj"), Matmul, &[&n, &wv], &[b, s, a.kv_heads * dh])?;
    if a.rope {
        let rope = format!("{p}.rope_table");
        net.input(&rope, &[s, dh])?;
        q = net.op(&format!("{p}.q_rope"), Elementwise, &[&q, &rope], &[b, s, a.heads * dh])?;
        k = net.op(&format!("{p}.k_rope"), Elementwise, &[&k, &rope], &[b, s, a.kv_heads * dh])?;
    }
    let qh = net.op(&format!("{p}.q_heads"), Reshape, &[&q], &[b, a.heads, s, dh])?;
    let kh = net.op(&format!("{p}.k_heads"), Reshape, &[&k], &[b, a.kv_heads, s, dh])?;
    let vh = net.op(&format!("{p}.v_heads"), Reshape, &[&v], &[b, a.kv_heads, s, dh])?;
    let (keys, values) = if t.decode {
        // The new token's K/V go into the cache; attention reads the cache's `ctx` tokens.
        net.op(&format!("{p}.k_cache_write"), Elementwise, &[&kh], &[b, a.kv_heads, s, dh])?;
        net.op(&format!("{p}.v_cache_write"), Elementwise, &[&vh], &[b, a.kv_heads, s, dh])?;
        (
            net.input(&format!("{p}.k_cache"), &[b, a.kv_heads, t.ctx, dh])?,
            net.input(&format!("{p}.v_cache"), &[b, a.kv_heads, t.ctx, dh])?,
        )
    } else {
        (kh, vh)
    };
    // GQA: each K/V head serves heads / kv_heads query heads; the matmuls read K and V at their
    // own (smaller) size.
    let scores = net.op(&format!("{p}.attn_scores"), Matmul, &[&qh, &keys], &[b, a.heads, s, t.ctx])?;
    let probs = net.op(&format!("{p}.softmax"), Reduction, &[&scores], &[b, a.heads, s, t.ctx])?;
    let ctx = net.op(&format!("{p}.attn_v"), Matmul, &[&probs, &values], &[b, a.heads, s, dh])?;
    let merged = net.op(&format!("{p}.attn_merge"), Reshape, &[&ctx], &[b, s, a.heads * dh])?;
    let wo = net.input(&format!("{p}.wo"), &[a.heads * dh, d])?;
    let o = net.op(&format!("{p}.o_proj"), Matmul, &[&merged, &wo], &[b, s, d])?;
    net.op(&format!("{p}.attn_residual"), Elementwise, &[&o, x], &[b, s, d])
}

/// The FFN's activation: SwiGLU (gate, up, SiLU(gate)·up, down) or a plain GELU MLP (up, GELU, down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FfnKind {
    SwiGlu,
    Gelu,
}

/// `x → (gate, up) → act → down` on `rows` of `d_model`, names under `p`; returns the down
/// projection's output (no residual).
pub(crate) fn ffn_core(
    net: &mut Net,
    p: &str,
    x: &str,
    rows: &[u64],
    d: u64,
    ff: u64,
    kind: FfnKind,
) -> Result<String, WorkloadError> {
    let shape = |w: u64| rows.iter().copied().chain([w]).collect::<Vec<u64>>();
    let w_up = net.input(&format!("{p}.w_up"), &[d, ff])?;
    let w_down = net.input(&format!("{p}.w_down"), &[ff, d])?;
    let act = match kind {
        FfnKind::SwiGlu => {
            let w_gate = net.input(&format!("{p}.w_gate"), &[d, ff])?;
            let gate = net.op(&format!("{p}.gate_proj"), Matmul, &[x, &w_gate], &shape(ff))?;
            let up = net.op(&format!("{p}.up_proj"), Matmul, &[x, &w_up], &shape(ff))?;
            net.op(&format!("{p}.silu_mul"), Elementwise, &[&gate, &up], &shape(ff))?
        }
        FfnKind::Gelu => {
            let up = net.op(&format!("{p}.up_proj"), Matmul, &[x, &w_up], &shape(ff))?;
            net.op(&format!("{p}.gelu"), Elementwise, &[&up], &shape(ff))?
        }
    };
    net.op(&format!("{p}.down_proj"), Matmul, &[&act, &w_down], &shape(d))
}

/// Norm → FFN → residual.
pub(crate) fn ffn_block(
    net: &mut Net,
    p: &str,
    x: &str,
    t: Tokens,
    d: u64,
    ff: u64,
    kind: FfnKind,
) -> Result<String, WorkloadError> {
    let norm_w = net.input(&format!("{p}.ffn_norm.weight"), &[d])?;
    let n = net.op(&format!("{p}.ffn_norm"), Reduction, &[x, &norm_w], &[t.batch, t.q, d])?;
    let down = ffn_core(net, p, &n, &[t.batch, t.q], d, ff, kind)?;
    net.op(&format!("{p}.ffn_residual"), Elementwise, &[&down, x], &[t.batch, t.q, d])
}

/// DeepSeek multi-head latent attention, in the weight-absorbed form the simulator uses:
/// queries through a low-rank `q_lora_rank` bottleneck; keys and values share one compressed
/// latent of `kv_lora_rank` (plus a `qk_rope_head_dim` RoPE key shared by all heads), which is
/// what the KV cache holds; the key/value up-projections are absorbed into the query and the
/// output (`q_absorb`, `v_up`).
struct MlaDims {
    d_model: u64,
    heads: u64,
    q_rank: u64,
    kv_rank: u64,
    nope: u64,
    rope: u64,
    v_dim: u64,
}

fn mla_attention(net: &mut Net, p: &str, x: &str, m: &MlaDims, t: Tokens) -> Result<String, WorkloadError> {
    let (b, s, d, h) = (t.batch, t.q, m.d_model, m.heads);
    let norm_w = net.input(&format!("{p}.attn_norm.weight"), &[d])?;
    let n = net.op(&format!("{p}.attn_norm"), Reduction, &[x, &norm_w], &[b, s, d])?;
    let wq_a = net.input(&format!("{p}.wq_a"), &[d, m.q_rank])?;
    let qa = net.op(&format!("{p}.q_a_proj"), Matmul, &[&n, &wq_a], &[b, s, m.q_rank])?;
    let qa_w = net.input(&format!("{p}.q_a_norm.weight"), &[m.q_rank])?;
    let qa = net.op(&format!("{p}.q_a_norm"), Reduction, &[&qa, &qa_w], &[b, s, m.q_rank])?;
    let wq_b = net.input(&format!("{p}.wq_b"), &[m.q_rank, h * (m.nope + m.rope)])?;
    let q = net.op(&format!("{p}.q_b_proj"), Matmul, &[&qa, &wq_b], &[b, s, h * (m.nope + m.rope)])?;
    let q_nope = net.op(&format!("{p}.q_nope_heads"), Reshape, &[&q], &[b, h, s, m.nope])?;
    let q_pe = net.op(&format!("{p}.q_pe_heads"), Reshape, &[&q], &[b, h, s, m.rope])?;
    let rope = net.input(&format!("{p}.rope_table"), &[s, m.rope])?;
    let q_pe = net.op(&format!("{p}.q_rope"), Elementwise, &[&q_pe, &rope], &[b, h, s, m.rope])?;
    let wkv_b_k = net.input(&format!("{p}.wkv_b_k"), &[h, m.nope, m.kv_rank])?;
    let q_lat = net.op(&format!("{p}.q_absorb"), Matmul, &[&q_nope, &wkv_b_k], &[b, h, s, m.kv_rank])?;
    let wkv_a = net.input(&format!("{p}.wkv_a"), &[d, m.kv_rank + m.rope])?;
    let kv = net.op(&format!("{p}.kv_a_proj"), Matmul, &[&n, &wkv_a], &[b, s, m.kv_rank + m.rope])?;
    let latent = net.op(&format!("{p}.kv_latent"), Reshape, &[&kv], &[b, s, m.kv_rank])?;
    let kv_w = net.input(&format!("{p}.kv_norm.weight"), &[m.kv_rank])?;
    let latent = net.op(&format!("{p}.kv_norm"), Reduction, &[&latent, &kv_w], &[b, s, m.kv_rank])?;
    let k_pe = net.op(&format!("{p}.k_pe"), Reshape, &[&kv], &[b, s, m.rope])?;
    let k_pe = net.op(&format!("{p}.k_rope"), Elementwise, &[&k_pe, &rope], &[b, s, m.rope])?;
    let (latent, k_pe) = if t.decode {
        net.op(&format!("{p}.kv_cache_write"), Elementwise, &[&latent], &[b, s, m.kv_rank])?;
        net.op(&format!("{p}.pe_cache_write"), Elementwise, &[&k_pe], &[b, s, m.rope])?;
        (
            net.input(&format!("{p}.kv_cache"), &[b, t.ctx, m.kv_rank])?,
            net.input(&format!("{p}.pe_cache"), &[b, t.ctx, m.rope])?,
        )
    } else {
        (latent, k_pe)
    };
    let s_nope = net.op(&format!("{p}.scores_nope"), Matmul, &[&q_lat, &latent], &[b, h, s, t.ctx])?;
    let s_rope = net.op(&format!("{p}.scores_rope"), Matmul, &[&q_pe, &k_pe], &[b, h, s, t.ctx])?;
    let scores = net.op(&format!("{p}.scores_add"), Elementwise, &[&s_nope, &s_rope], &[b, h, s, t.ctx])?;
    let probs = net.op(&format!("{p}.softmax"), Reduction, &[&scores], &[b, h, s, t.ctx])?;
    let ctx = net.op(&format!("{p}.attn_latent"), Matmul, &[&probs, &latent], &[b, h, s, m.kv_rank])?;
    let wkv_b_v = net.input(&format!("{p}.wkv_b_v"), &[h, m.kv_rank, m.v_dim])?;
    let vals = net.op(&format!("{p}.v_up"), Matmul, &[&ctx, &wkv_b_v], &[b, h, s, m.v_dim])?;
    let merged = net.op(&format!("{p}.attn_merge"), Reshape, &[&vals], &[b, s, h * m.v_dim])?;
    let wo = net.input(&format!("{p}.wo"), &[h * m.v_dim, d])?;
    let o = net.op(&format!("{p}.o_proj"), Matmul, &[&merged, &wo], &[b, s, d])?;
    net.op(&format!("{p}.attn_residual"), Elementwise, &[&o, x], &[b, s, d])
}

/// DeepSeek MoE FFN sizes on one chip.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MoeDims {
    pub d_model: u64,
    pub expert_ff: u64,
    pub shared: u64,
    pub routed: u64,
    pub top_k: u64,
    /// Expert parallelism: routed experts split over this many chips.
    pub ep: u64,
}

impl MoeDims {
    /// Routed experts that receive tokens on this chip and tokens each, with balanced routing:
    /// `tokens × top_k / ep` assignments spread over at most `routed / ep` local experts. An
    /// error when `tokens × top_k` does not fit in 64 bits.
    pub(crate) fn active_experts(&self, tokens: u64) -> Result<(u64, u64), WorkloadError> {
        let local_experts = self.routed.div_ceil(self.ep);
        let assignments = tokens.checked_mul(self.top_k).ok_or_else(|| {
            WorkloadError::TooLarge(format!(
                "{tokens} tokens × {} routed experts per token does not fit in 64 bits",
                self.top_k
            ))
        })?;
        let assignments = assignments.div_ceil(self.ep);
        let active = local_experts.min(assignments).max(1);
        Ok((active, assignments.div_ceil(active)))
    }
}

/// Norm → router (scores, softmax + top-k) → shared experts on every token, routed experts on
/// their tokens (dispatch = gather, SwiGLU FFN) → weighted combine → residual.
fn moe_block(net: &mut Net, p: &str, x: &str, m: &MoeDims, t: Tokens) -> Result<String, WorkloadError> {
    let (b, s, d) = (t.batch, t.q, m.d_model);
    let norm_w = net.input(&format!("{p}.ffn_norm.weight"), &[d])?;
    let n = net.op(&format!("{p}.ffn_norm"), Reduction, &[x, &norm_w], &[b, s, d])?;
    let w_router = net.input(&format!("{p}.w_router"), &[d, m.routed])?;
    let logits = net.op(&format!("{p}.router"), Matmul, &[&n, &w_router], &[b, s, m.routed])?;
    let route = net.op(&format!("{p}.router_topk"), Reduction, &[&logits], &[b, s, m.top_k])?;
    let mut outs = vec![route.clone()];
    if m.shared > 0 {
        outs.push(ffn_core(
            net,
            &format!("{p}.shared_expert"),
            &n,
            &[b, s],
            d,
            m.shared * m.expert_ff,
            FfnKind::SwiGlu,
        )?);
    }
    // b and s are at most 2^31 each (`positive`), so their product fits.
    let (active, per_expert) = m.active_experts(b * s)?;
    for e in 0..active {
        let ep = format!("{p}.expert{e}");
        let tokens = net.op(&format!("{ep}.dispatch"), Reshape, &[&n, &route], &[per_expert, d])?;
        outs.push(ffn_core(net, &ep, &tokens, &[per_expert], d, m.expert_ff, FfnKind::SwiGlu)?);
    }
    let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
    let combined = net.op(&format!("{p}.moe_combine"), Elementwise, &refs, &[b, s, d])?;
    net.op(&format!("{p}.ffn_residual"), Elementwise, &[&combined, x], &[b, s, d])
}

fn need(c: &LlmConfig, v: Option<u64>, field: &'static str, what: &'static str) -> Result<u64, WorkloadError> {
    match v {
        Some(x) if x > 0 => Ok(x),
        _ => Err(WorkloadError::MissingField { model: c.model_name.clone(), field, what }),
    }
}

/// How one layer's attention and FFN are built.
enum LayerPlan {
    Gqa(AttentionDims),
    Mla(MlaDims),
}

enum FfnPlan {
    Dense { ff: u64 },
    Moe(MoeDims),
}

pub(crate) fn build(
    c: &LlmConfig,
    phase: Phase,
    params: WorkloadParams,
    whole: bool,
) -> Result<Workload, WorkloadError> {
    let batch = positive("batch", params.batch.unwrap_or(c.global_batch_size))?;
    let seq_len = positive("seq_len", params.seq_len.unwrap_or(c.input_seqlen))?;
    let output_len = params.output_len.unwrap_or(c.output_seqlen);
    if output_len > super::config::MAX_DIM {
        return Err(WorkloadError::Param {
            name: "output_len",
            value: output_len.to_string(),
            reason: "must be at most 2^31",
        });
    }
    let tp = positive("tp", params.tp.unwrap_or(c.tensor_parallelism_degree))?;
    for (name, v) in
        [("d_model", c.d_model), ("num_heads", c.num_heads), ("d_head", c.d_head), ("num_layers", c.num_layers)]
    {
        if v == 0 {
            return Err(WorkloadError::Config(format!("{}: field `{name}` must be at least 1", c.model_name)));
        }
    }
    if phase == Phase::Decode && output_len == 0 {
        return Err(WorkloadError::Param {
            name: "output_len",
            value: "0".into(),
            reason: "decode needs at least 1 output token",
        });
    }
    let heads = div_exact("num_heads", c.num_heads, tp)?;
    // Decode: the longest step's context (prompt + every output token), as the simulator does.
    let t = match phase {
        Phase::Prefill => Tokens { batch, q: seq_len, ctx: seq_len, decode: false },
        Phase::Decode => Tokens { batch, q: 1, ctx: seq_len + output_len, decode: true },
    };
    let steps = if phase == Phase::Decode { output_len } else { 1 };
    let mut not_modelled = vec![
        "token embedding and LM head (the configs give no vocabulary size)".to_string(),
        "tensor-parallel collectives (all-reduce/all-gather over ICI/NVLink): the graph is one chip's share"
            .to_string(),
        "causal masking: attention scores cover the full context (2× the causal FLOPs in prefill)".to_string(),
    ];
    let attn = if let Some(kv_rank) = c.kv_lora_rank {
        LayerPlan::Mla(MlaDims {
            d_model: c.d_model,
            heads,
            q_rank: need(c, c.q_lora_rank, "q_lora_rank", "MLA attention")?,
            kv_rank: positive("kv_lora_rank", kv_rank)?,
            nope: need(c, c.qk_nope_head_dim, "qk_nope_head_dim", "MLA attention")?,
            rope: need(c, c.qk_rope_head_dim, "qk_rope_head_dim", "MLA attention")?,
            v_dim: need(c, c.v_head_dim, "v_head_dim", "MLA attention")?,
        })
    } else {
        let kv = c.num_kv_heads.unwrap_or(c.num_heads);
        if kv == 0 || !c.num_heads.is_multiple_of(kv) {
            return Err(WorkloadError::Config(format!(
                "{}: num_kv_heads {kv} must divide num_heads {}",
                c.model_name, c.num_heads
            )));
        }
        if kv < tp {
            not_modelled.push(format!("K/V heads replicated: {kv} KV heads over tp {tp} leaves 1 per chip"));
        }
        LayerPlan::Gqa(AttentionDims {
            d_model: c.d_model,
            heads,
            kv_heads: (kv / tp).max(1),
            d_head: c.d_head,
            rope: true,
        })
    };
    let dense_ff = div_exact("d_ff", c.d_ff, tp)?;
    let (kinds, moe) = match c.ffn_type.as_str() {
        "deepseek_moe" => {
            let moe = MoeDims {
                d_model: c.d_model,
                expert_ff: need(c, c.moe_d_ff, "moe_d_ff", "the MoE FFN")?,
                shared: c.num_shared_experts.unwrap_or(0),
                routed: need(c, c.num_routed_experts, "num_routed_experts", "the MoE FFN")?,
                top_k: need(
                    c,
                    c.num_activated_routed_experts_per_token,
                    "num_activated_routed_experts_per_token",
                    "the MoE FFN",
                )?,
                ep: tp,
            };
            // One op chain per local expert: a config with billions of experts would make
            // billions of ops (and hang the page that opened its link).
            let local = moe.routed.div_ceil(tp);
            if local > WORKLOAD_EXPERTS_PER_CHIP {
                return Err(WorkloadError::Config(format!(
                    "{}: num_routed_experts {} over tp {tp} is {local} experts per chip; at most \
                     {WORKLOAD_EXPERTS_PER_CHIP} are modelled",
                    c.model_name, moe.routed
                )));
            }
            not_modelled.push(
                "MoE routing is balanced (every local expert gets the same tokens); dispatch/combine all-to-all is not timed"
                    .into(),
            );
            let dense = c.num_dense_layers.unwrap_or(0).min(c.num_layers);
            (vec![("dense", dense), ("moe", c.num_layers - dense)], Some(moe))
        }
        "llama" | "default" => (vec![("dense", c.num_layers)], None),
        other => {
            return Err(WorkloadError::Unsupported {
                model: c.model_name.clone(),
                reason: format!("ffn_type `{other}` is not modelled (known: llama, deepseek_moe)"),
            })
        }
    };

    let mut net = Net::new(2);
    let mut x = net.input("x", &[t.batch, t.q, c.d_model])?;
    let mut parts = Vec::new();
    let mut layer_index = 0u64;
    for (kind, count) in kinds.into_iter().filter(|(_, n)| *n > 0) {
        let instances = if whole { count } else { 1 };
        let repeat = if whole { steps } else { count * steps };
        let first_op = net.len();
        net.repeat = repeat;
        for i in 0..instances {
            let p = format!("layer{}", layer_index + i);
            x = match &attn {
                LayerPlan::Gqa(a) => attention(&mut net, &p, &x, *a, t)?,
                LayerPlan::Mla(m) => mla_attention(&mut net, &p, &x, m, t)?,
            };
            let ffn = match (kind, &moe) {
                ("moe", Some(m)) => FfnPlan::Moe(*m),
                _ => FfnPlan::Dense { ff: dense_ff },
            };
            x = match ffn {
                FfnPlan::Dense { ff } => ffn_block(&mut net, &p, &x, t, c.d_model, ff, FfnKind::SwiGlu)?,
                FfnPlan::Moe(m) => moe_block(&mut net, &p, &x, &m, t)?,
            };
        }
        parts.push(LayerPart {
            kind: kind.to_string(),
            layers: count,
            repeat,
            first_op,
            op_count: net.len() - first_op,
        });
        layer_index += count;
    }
    let (graph, op_repeat) = net.build()?;
    let total_flops = super::count_flops(&graph, &op_repeat)?;
    Ok(Workload {
        model: c.model_name.clone(),
        phase,
        params: ResolvedParams { batch, seq_len, output_len, tp, dtype_bytes: 2 },
        layers: c.num_layers,
        steps,
        graph,
        op_repeat,
        parts,
        not_modelled,
        total_flops,
    })
}
