//! The overview of an op graph's fusion (the built-in transformer block or a graph file): a
//! verdict on what fusion saves, then findings ranked by the time they explain at a chip's
//! memory bandwidth, as a trace's are: the groups that save most, and the groups that move most
//! after fusion (where the traffic left is).

use fusion::summary::Tables;
use hardware::Chip;
use units::{format_bytes, format_duration_us, format_pct};

use super::{rank, Evidence, Finding, FindingKind, Overview, Verdict};

/// Groups named at most by each kind of finding.
const GROUPS: usize = 3;

/// A group as sentences name it: its number (from 1), kind and ops, at most four of them.
fn group_name(r: &impl Tables, g: usize) -> String {
    let ops: Vec<&str> = r.group_ops(g).take(4).collect();
    let more = r.group_ops(g).count().saturating_sub(ops.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let ops = if ops.is_empty() { "no op".to_string() } else { ops.join(" + ") };
    format!("Group {} ({}: {ops}{more})", g + 1, r.group_kind(g).as_str())
}

/// The `GROUPS` groups of largest `key` (the first of equals), largest first: one pass, so a
/// million-group graph is not sorted.
fn largest(r: &impl Tables, key: impl Fn(usize) -> u64) -> Vec<usize> {
    let mut top: Vec<usize> = Vec::with_capacity(GROUPS + 1);
    for g in 0..r.group_count() {
        let at = top.partition_point(|&t| key(t) >= key(g));
        if at < GROUPS {
            top.insert(at, g);
            top.truncate(GROUPS);
        }
    }
    top
}

/// The overview of `r` (the page's report or the command line's view of one) on `chip`: bytes
/// turned into time at its HBM bandwidth, the traffic time a memory-bound kernel cannot beat.
pub fn graph_overview(r: &impl Tables, chip: &Chip) -> Overview {
    let at = |bytes: u64| bytes as f64 / chip.hbm_bandwidth * 1e6;
    let bandwidth = format!("{}'s {:.2} TB/s", chip.name, chip.hbm_bandwidth / 1e12);
    let (unfused, fused) = (r.unfused().total, r.fused().total);
    let saved = unfused.saturating_sub(fused);
    let text = format!(
        "{} ops in {} fusion groups move {} instead of {}: fusion saves {} ({}), {} at {bandwidth}",
        r.op_count(),
        r.group_count(),
        format_bytes(fused),
        format_bytes(unfused),
        format_bytes(saved),
        format_pct(r.savings_pct()),
        format_duration_us(at(saved))
    );
    let saving = |g: usize| r.group_unfused(g).total.saturating_sub(r.group_fused(g).total);
    let mut candidates: Vec<Finding> = largest(r, saving)
        .into_iter()
        .filter(|&g| saving(g) > 0)
        .map(|g| Finding {
            kind: FindingKind::GroupSaving,
            time_us: at(saving(g)),
            text: format!(
                "{} moves {} where its ops apart would move {}: fusion saves {}, {} at {bandwidth}",
                group_name(r, g),
                format_bytes(r.group_fused(g).total),
                format_bytes(r.group_unfused(g).total),
                format_bytes(saving(g)),
                format_duration_us(at(saving(g)))
            ),
            evidence: Evidence::Fusion,
        })
        .collect();
    candidates.extend(largest(r, |g| r.group_fused(g).total).into_iter().map(|g| {
        let f = r.group_fused(g);
        let share = if fused > 0 { 100.0 * f.total as f64 / fused as f64 } else { 0.0 };
        Finding {
            kind: FindingKind::GroupTraffic,
            time_us: at(f.total),
            text: format!(
                "{} still moves {} after fusion ({} of all traffic; {} read, {} written), {} at {bandwidth}",
                group_name(r, g),
                format_bytes(f.total),
                format_pct(share),
                format_bytes(f.bytes_read),
                format_bytes(f.bytes_written),
                format_duration_us(at(f.total))
            ),
            evidence: Evidence::Fusion,
        }
    }));
    Overview { verdict: Verdict { text, sides: Vec::new() }, findings: rank(candidates) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fusion::transformer::{transformer_block, TransformerConfig};

    #[test]
    fn the_transformer_block_s_overview_names_its_savings_and_its_traffic() {
        let graph = transformer_block(TransformerConfig::default()).unwrap();
        let r = fusion::analysis::analyse(&graph).report(&graph);
        let analysis = fusion::analysis::analyse(&graph);
        // The command line's view of the report gives the same overview as the page's report.
        assert_eq!(
            graph_overview(&analysis.view(&graph), &hardware::chip::preset("h100").unwrap()),
            graph_overview(&r, &hardware::chip::preset("h100").unwrap())
        );
        let chip = hardware::chip::preset("h100").unwrap();
        let o = graph_overview(&r, &chip);
        // S = 2048, H = 4096, 2 bytes: 2.19 GiB unfused, 1.83 GiB fused (the CLI's table).
        assert!(
            o.verdict.text.starts_with(
                "16 ops in 9 fusion groups move 1.83 GiB instead of 2.19 GiB: fusion saves 368.00 MiB (16.43 %)"
            ),
            "{}",
            o.verdict.text
        );
        // The QKV projection with its splits saves most (144 MiB); softmax moves most (512 MiB).
        let saving = o.findings.iter().find(|f| f.kind == FindingKind::GroupSaving).unwrap();
        assert!(saving.text.starts_with("Group 1 (matmul: qkv_proj + split_q + split_k + split_v) moves 208.00 MiB where its ops apart would move 352.00 MiB: fusion saves 144.00 MiB"), "{}", saving.text);
        // 144 MiB at the H100's 3.35 TB/s, to the ns.
        assert_eq!(saving.time_us, 45.073);
        let traffic = o.findings.iter().find(|f| f.kind == FindingKind::GroupTraffic).unwrap();
        assert!(
            traffic.text.starts_with("Group 3 (reduction: softmax) still moves 512.00 MiB after fusion"),
            "{}",
            traffic.text
        );
        assert!(o.findings.windows(2).all(|w| w[0].time_us >= w[1].time_us));
        assert!(o.findings.len() <= super::super::MAX_FINDINGS);
    }
}
