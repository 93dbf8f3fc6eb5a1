//! DiT: a transformer over image patches (multi-head attention, GELU MLP), run once per
//! diffusion step. Only the transformer blocks are modelled.

use super::config::DitConfig;
use super::llm::{attention, ffn_block, AttentionDims, FfnKind, Tokens};
use super::net::Net;
use super::{positive, LayerPart, Phase, ResolvedParams, Workload, WorkloadError, WorkloadParams};

pub(crate) fn build(
    c: &DitConfig,
    phase: Phase,
    params: WorkloadParams,
    whole: bool,
) -> Result<Workload, WorkloadError> {
    if phase == Phase::Decode {
        return Err(WorkloadError::PhaseNotApplicable {
            model: c.model_name.clone(),
            phase,
            reason: "a diffusion transformer has no KV cache; use prefill for one forward pass per step",
        });
    }
    let batch = positive("batch", params.batch.unwrap_or(c.global_batch_size))?;
    let tp = positive("tp", params.tp.unwrap_or(c.tensor_parallelism_degree))?;
    let patch = positive("patch_size", c.patch_size)?;
    // Tokens = (image_width / patch_size)², as the simulator counts them (its DiT-XL table has
    // 65,536 tokens for 512-pixel images with patch 2).
    let tokens = params.seq_len.unwrap_or((c.image_width / patch).pow(2));
    positive("seq_len", tokens)?;
    if !c.num_heads.is_multiple_of(tp) || !c.d_ff.is_multiple_of(tp) {
        return Err(WorkloadError::Param {
            name: "tp",
            value: tp.to_string(),
            reason: "must divide num_heads and d_ff",
        });
    }
    let steps = positive("num_diffusion_steps", c.num_diffusion_steps)?;
    let layers = positive("num_layers", c.num_layers)?;
    let t = Tokens { batch, q: tokens, ctx: tokens, decode: false };
    let a = AttentionDims {
        d_model: c.d_model,
        heads: c.num_heads / tp,
        kv_heads: c.num_heads / tp,
        d_head: c.d_head,
        rope: false,
    };
    let mut net = Net::new(2);
    let mut x = net.input("x", &[batch, tokens, c.d_model])?;
    net.repeat = if whole { steps } else { layers * steps };
    for i in 0..if whole { layers } else { 1 } {
        let p = format!("layer{i}");
        x = attention(&mut net, &p, &x, a, t)?;
        x = ffn_block(&mut net, &p, &x, t, c.d_model, c.d_ff / tp, FfnKind::Gelu)?;
    }
    let parts = vec![LayerPart { kind: "block".into(), layers, repeat: net.repeat, first_op: 0, op_count: net.len() }];
    let (graph, op_repeat) = net.build()?;
    let total_flops = super::count_flops(&graph, &op_repeat)?;
    Ok(Workload {
        model: c.model_name.clone(),
        phase,
        params: ResolvedParams { batch, seq_len: tokens, output_len: 0, tp, dtype_bytes: 2 },
        layers,
        steps,
        graph,
        op_repeat,
        parts,
        not_modelled: vec![
            "patch embedding and the final unpatchify layer".into(),
            "adaLN-Zero conditioning (timestep/class embedding MLP, shift/scale/gate modulation)".into(),
            "tensor-parallel collectives".into(),
        ],
        total_flops,
    })
}
