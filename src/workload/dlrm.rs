//! DLRM: bottom MLP on dense features, embedding-bag lookups pooled per table, dot
//! interaction, top MLP. One forward pass (inference).

use fusion::OpType::{Elementwise, Matmul, Reduction, Reshape};

use super::config::{DlrmConfig, MlpLayer};
use super::net::Net;
use super::{positive, LayerPart, Phase, ResolvedParams, Workload, WorkloadError, WorkloadParams};

/// Linear (+ bias) (+ activation) layers; returns the last output.
fn mlp(net: &mut Net, p: &str, x: &str, batch: u64, layers: &[MlpLayer]) -> Result<String, WorkloadError> {
    let mut x = x.to_string();
    for (i, l) in layers.iter().enumerate() {
        let q = format!("{p}{i}");
        let w = net.input(&format!("{q}.weight"), &[l.in_features, l.out_features])?;
        x = net.op(&format!("{q}.linear"), Matmul, &[&x, &w], &[batch, l.out_features])?;
        if l.bias {
            let b = net.input(&format!("{q}.bias_vec"), &[l.out_features])?;
            x = net.op(&format!("{q}.bias"), Elementwise, &[&x, &b], &[batch, l.out_features])?;
        }
        if let Some(act) = l.activation.as_deref().filter(|a| !a.is_empty() && *a != "none") {
            x = net.op(&format!("{q}.{act}"), Elementwise, &[&x], &[batch, l.out_features])?;
        }
    }
    Ok(x)
}

pub(crate) fn build(c: &DlrmConfig, phase: Phase, params: WorkloadParams) -> Result<Workload, WorkloadError> {
    if phase == Phase::Decode {
        return Err(WorkloadError::PhaseNotApplicable {
            model: c.model_name.clone(),
            phase,
            reason: "a recommendation model has no decode; use prefill for one forward pass",
        });
    }
    let batch = positive("batch", params.batch.unwrap_or(c.global_batch_size))?;
    let (bottom, top) = match (c.bottom_mlp_config.first(), c.top_mlp_config.first()) {
        (Some(b), Some(t)) => (b, t),
        _ => {
            return Err(WorkloadError::Config(format!(
                "{}: bottom_mlp_config and top_mlp_config must not be empty",
                c.model_name
            )))
        }
    };
    if c.num_indices_per_lookup.len() != c.embedding_table_sizes.len() {
        return Err(WorkloadError::Config(format!(
            "{}: num_indices_per_lookup has {} entries but embedding_table_sizes has {}",
            c.model_name,
            c.num_indices_per_lookup.len(),
            c.embedding_table_sizes.len()
        )));
    }
    let dim = positive("embedding_dim", c.embedding_dim)?;
    let mut net = Net::new(2);
    let dense = net.input("dense_features", &[batch, bottom.in_features])?;
    let bottom_out = mlp(&mut net, "bottom_mlp", &dense, batch, &c.bottom_mlp_config)?;
    let mut features = vec![bottom_out.clone()];
    for (t, &n) in c.num_indices_per_lookup.iter().enumerate() {
        // Only the looked-up rows are read, not the table.
        let rows = net.input(&format!("emb{t}.rows"), &[batch, n, dim])?;
        features.push(net.op(&format!("emb{t}.pool"), Reduction, &[&rows], &[batch, dim])?);
    }
    let refs: Vec<&str> = features.iter().map(String::as_str).collect();
    let f = features.len() as u64;
    let z = net.op("interaction.concat", Reshape, &refs, &[batch, f, dim])?;
    let dots = net.op("interaction.dot", Matmul, &[&z, &z], &[batch, f, f])?;
    let flat = net.op("interaction.flatten", Reshape, &[&dots, &bottom_out], &[batch, top.in_features])?;
    mlp(&mut net, "top_mlp", &flat, batch, &c.top_mlp_config)?;
    let parts = vec![LayerPart { kind: "forward".into(), layers: 1, repeat: 1, first_op: 0, op_count: net.len() }];
    let (graph, op_repeat) = net.build()?;
    let total_flops = super::count_flops(&graph, &op_repeat)?;
    Ok(Workload {
        model: c.model_name.clone(),
        phase,
        params: ResolvedParams { batch, seq_len: 1, output_len: 0, tp: 1, dtype_bytes: 2 },
        layers: 1,
        steps: 1,
        graph,
        op_repeat,
        parts,
        not_modelled: vec![
            "embedding tables are not read whole: only the looked-up rows (batch × indices × dim per table)".into(),
            "the interaction's upper-triangle selection: its output width is taken from the top MLP's in_features"
                .into(),
            format!("interaction `{}` is modelled as the dot interaction", c.interaction.as_deref().unwrap_or("dot")),
            "data/model parallelism of the embedding tables".into(),
        ],
        total_flops,
    })
}
