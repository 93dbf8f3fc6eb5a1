//! The simulator's table beside our analysis of the same model and chip.
//!
//! Ops are matched by role: each simulator `Description` names a role (`FFgate` is the FFN
//! gate projection, `Input_layernorm` the attention norm …) and each role maps to our ops by
//! name suffix (`.gate_proj`). A role's figures are summed on both sides, per execution, over
//! the main layer kind of the workload (the layer kind with most layers, e.g. DeepSeek's MoE
//! layer). Simulator rows of no known role (collectives) and our ops that no simulator row
//! covers (RoPE, reshapes, the attention residual, cache writes) are listed, not hidden.
//! docs/time-model.md explains every difference.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::{SimBound, SimTable};
use hardware::roofline::{Bound, TimeReport};
use workload::Workload;

/// Simulator description fragment → role name and our op-name suffixes. The first match wins,
/// so longer fragments come before their prefixes (`FFgate_up` before `FFgate`).
const ROLES: &[(&str, &str, &[&str])] = &[
    ("FFgate_up", "ffn_activation", &["silu_mul", "gelu"]),
    ("FFgate", "ffn_gate", &["gate_proj"]),
    ("FFup", "ffn_up", &["up_proj"]),
    ("FFinput", "ffn_up", &["up_proj"]),
    ("FFoutput", "ffn_down", &["down_proj"]),
    ("AttnPlusFFn", "ffn_residual", &["ffn_residual"]),
    ("Input_layernorm", "attn_norm", &["attn_norm"]),
    ("Input_rmsnorm", "attn_norm", &["attn_norm"]),
    ("Attention_layernorm", "ffn_norm", &["ffn_norm"]),
    ("Attention_RMSNorm", "ffn_norm", &["ffn_norm"]),
    ("Attention_output", "o_proj", &["o_proj"]),
    ("x_wo_linear", "o_proj", &["o_proj"]),
    ("Q/K/V", "qkv_proj", &["q_proj", "k_proj", "v_proj"]),
    ("-Q-", "q_proj", &["q_proj"]),
    ("-K-", "k_proj", &["k_proj"]),
    ("-V-", "v_proj", &["v_proj"]),
    ("FlashAttention", "attention", &["attn_scores", "softmax", "attn_v"]),
    ("Softmax(Q*K)*V", "attention", &["attn_scores", "softmax", "attn_v"]),
    ("q_wq_a_linear", "q_a_proj", &["q_a_proj"]),
    ("q_norm", "q_a_norm", &["q_a_norm"]),
    ("q_wq_b_linear", "q_b_proj", &["q_b_proj"]),
    ("apply_rotary_emb", "rope", &["q_rope", "k_rope"]),
    ("kv_k_pe_linear", "kv_a_proj", &["kv_a_proj"]),
    ("q_nope_wkv_b_linear", "q_absorb", &["q_absorb"]),
    ("kv_norm", "kv_norm", &["kv_norm"]),
    ("q_nope_kv_cache_einsum", "scores_nope", &["scores_nope"]),
    ("q_pe_pe_einsum", "scores_rope", &["scores_rope"]),
    ("scores_kv_cache_einsum", "attn_latent", &["attn_latent"]),
    ("x_wkv_b_linear", "v_up", &["v_up"]),
    ("gate-scores_softmax", "router_topk", &["router_topk"]),
    ("gate-scores", "router", &["router"]),
    ("MoE_combine", "moe_combine", &["moe_combine"]),
];

/// The role of a simulator description, if we know it.
pub fn role_of(description: &str) -> Option<(&'static str, &'static [&'static str])> {
    ROLES.iter().find(|(frag, _, _)| description.contains(frag)).map(|(_, role, ops)| (*role, *ops))
}

/// One role on both sides, per execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleComparison {
    pub role: String,
    pub sim_descriptions: Vec<String>,
    pub sim_rows: usize,
    pub sim_flops: u64,
    pub sim_bytes: u64,
    pub sim_time_us: f64,
    /// Bound of the simulator row that takes longest.
    pub sim_bound: String,
    pub our_ops: Vec<String>,
    pub our_flops: u64,
    pub our_bytes: u64,
    /// Our ops as separate kernels (unfused), launch overhead included.
    pub our_time_us: f64,
    /// Bound of our op that takes longest.
    pub our_bound: Option<Bound>,
}

impl RoleComparison {
    fn ratio(ours: f64, sim: f64) -> Option<f64> {
        (sim > 0.0).then(|| ours / sim)
    }
    pub fn flops_ratio(&self) -> Option<f64> {
        Self::ratio(self.our_flops as f64, self.sim_flops as f64)
    }
    pub fn bytes_ratio(&self) -> Option<f64> {
        Self::ratio(self.our_bytes as f64, self.sim_bytes as f64)
    }
    pub fn time_ratio(&self) -> Option<f64> {
        Self::ratio(self.our_time_us, self.sim_time_us)
    }
}

/// The side-by-side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub roles: Vec<RoleComparison>,
    /// Simulator rows with no role here (e.g. collectives), by description.
    pub sim_only: Vec<String>,
    /// Our ops (of the compared layer) that no simulator row covers.
    pub ours_only: Vec<String>,
}

/// Compares a table with our time report of `workload` (its representative graph).
pub fn compare(table: &SimTable, workload: &Workload, time: &TimeReport) -> Comparison {
    let main =
        workload.parts.iter().max_by_key(|p| (p.layers, p.first_op)).map(|p| p.first_op..p.first_op + p.op_count);
    let in_main = |i: usize| main.as_ref().is_none_or(|r| r.contains(&i));
    let mut roles: Vec<RoleComparison> = Vec::new();
    // Per role: the longest simulator row so far, which decides the role's bound.
    let mut sim_longest: Vec<f64> = Vec::new();
    let mut sim_only = Vec::new();
    // Descriptions already listed, as sets: a table may have 100,000 rows, each described
    // differently (only the roles are few, at most one per entry of `ROLES`).
    let mut sim_only_seen: HashSet<&str> = HashSet::new();
    let mut described: HashSet<(usize, &str)> = HashSet::new();
    let mut covered = vec![false; time.ops.len()];
    for row in &table.rows {
        let Some((role, suffixes)) = role_of(&row.description) else {
            if sim_only_seen.insert(&row.description) {
                sim_only.push(row.description.clone());
            }
            continue;
        };
        let pos = match roles.iter().position(|r| r.role == role) {
            Some(p) => p,
            None => {
                let mut c = RoleComparison {
                    role: role.to_string(),
                    sim_descriptions: Vec::new(),
                    sim_rows: 0,
                    sim_flops: 0,
                    sim_bytes: 0,
                    sim_time_us: 0.0,
                    sim_bound: String::new(),
                    our_ops: Vec::new(),
                    our_flops: 0,
                    our_bytes: 0,
                    our_time_us: 0.0,
                    our_bound: None,
                };
                let mut longest = 0.0f64;
                for (i, op) in time.ops.iter().enumerate() {
                    let hit = suffixes.iter().any(|s| op.name.rsplit('.').next() == Some(*s));
                    if hit && in_main(i) {
                        covered[i] = true;
                        c.our_ops.push(op.name.clone());
                        c.our_flops += op.flops;
                        c.our_bytes += op.bytes;
                        c.our_time_us += op.time_us;
                        if op.time_us > longest {
                            longest = op.time_us;
                            c.our_bound = Some(op.bound);
                        }
                    }
                }
                roles.push(c);
                sim_longest.push(-1.0);
                roles.len() - 1
            }
        };
        let c = &mut roles[pos];
        if described.insert((pos, &row.description)) {
            c.sim_descriptions.push(row.description.clone());
        }
        c.sim_rows += 1;
        c.sim_flops += row.flops;
        c.sim_bytes += row.bytes;
        c.sim_time_us += row.execution_ns / 1000.0;
        if row.execution_ns > sim_longest[pos] {
            sim_longest[pos] = row.execution_ns;
            c.sim_bound = SimBound::as_str(&row.bound).to_string();
        }
    }
    let ours_only =
        time.ops.iter().enumerate().filter(|(i, _)| in_main(*i) && !covered[*i]).map(|(_, o)| o.name.clone()).collect();
    Comparison { roles, sim_only, ours_only }
}
