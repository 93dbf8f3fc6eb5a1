//! A simulator op table and its side-by-side with our analysis as tables for the page and its
//! CSV exports, and the setup form's typed values. Kept in the core so that what the page
//! shows is tested natively.

use std::collections::HashSet;

use table::{Cell, DataTable};
use units::format_flops;
use units::{format_bytes, format_duration_us, group_digits};

use super::setup::SideBySide;
use super::SimTable;

/// Where the differences between the two sides are explained.
pub const DOCS_NOTE: &str = "Where the two sides differ (peak FLOP/s, GB/s read as GiB/s, the 0.5 µs launch overhead, \
     GQA, FlashAttention, operand counting, DeepSeek sharding and MoE routing), docs/time-model.md, \
     section 4 \"Against the simulator\", explains why, figure by figure.";

fn bytes(b: u64) -> Cell {
    Cell { text: format_bytes(b), exact: b.to_string(), sort: b as f64 }
}

fn flops(f: u64) -> Cell {
    Cell { text: format_flops(f as f64), exact: f.to_string(), sort: f as f64 }
}

/// The simulator's fusion-index groups: per group its ops, units, runs, bound, time per run
/// and in total, FLOPs and bytes per run.
pub fn groups_table(t: &SimTable) -> DataTable {
    let mut d = DataTable::new(
        "sim-groups",
        "Simulator fusion groups (by fusion index)",
        &[
            ("fusion index", true),
            ("ops", false),
            ("rows", true),
            ("units", false),
            ("runs", true),
            ("bound", false),
            ("time per run", true),
            ("total time", true),
            ("FLOPs per run", true),
            ("bytes per run", true),
        ],
    );
    d.rows = t
        .groups
        .iter()
        .map(|g| {
            // Each unit once, in order of first use (a decode attention is MXU and VPU rows
            // interleaved); a set, as a crafted group may have 100,000 rows of distinct units.
            let mut seen: HashSet<&str> = HashSet::new();
            let units: Vec<&str> = g.rows.iter().map(|&i| t.rows[i].unit.as_str()).filter(|u| seen.insert(u)).collect();
            vec![
                Cell::count(g.fusion_index),
                Cell::text(g.descriptions.join(" | ")),
                Cell::count(g.rows.len() as u64),
                Cell::text(units.join("+")),
                Cell::count(g.count),
                Cell::text(g.bound.as_str()),
                Cell::micros(g.execution_ns / 1000.0),
                Cell::micros(g.total_ns / 1000.0),
                flops(g.flops),
                bytes(g.bytes),
            ]
        })
        .collect();
    d
}

/// The side-by-side by role, per execution: the ours/simulator ratios first (where the two
/// models differ shows at a glance), then both sides' figures, bounds and ops.
pub fn comparison_table(s: &SideBySide) -> DataTable {
    let mut d = DataTable::new(
        "side-by-side",
        "Side by side, per execution (ours / simulator)",
        &[
            ("role", false),
            ("FLOPs ours/sim", true),
            ("bytes ours/sim", true),
            ("duration ours/sim", true),
            ("sim FLOPs", true),
            ("our FLOPs", true),
            ("sim bytes", true),
            ("our bytes", true),
            ("sim time", true),
            ("our time", true),
            ("sim bound", false),
            ("our bound", false),
            ("simulator ops", false),
            ("our ops", false),
        ],
    );
    d.rows = s
        .comparison
        .roles
        .iter()
        .map(|r| {
            vec![
                Cell::text(&r.role),
                Cell::ratio(r.flops_ratio()),
                Cell::ratio(r.bytes_ratio()),
                Cell::ratio(r.time_ratio()),
                flops(r.sim_flops),
                flops(r.our_flops),
                bytes(r.sim_bytes),
                bytes(r.our_bytes),
                Cell::micros(r.sim_time_us),
                Cell::micros(r.our_time_us),
                Cell::text(&r.sim_bound),
                Cell::text(r.our_bound.map_or("—", |b| b.as_str())),
                Cell::text(r.sim_descriptions.join(" | ")),
                Cell::text(r.our_ops.join(", ")),
            ]
        })
        .collect();
    d
}

/// `28 ops in 20 fusion groups, simulated total 1.23 s`.
pub fn headline(t: &SimTable) -> String {
    format!(
        "{} ops in {} fusion groups, simulated total {}.",
        group_digits(t.rows.len() as u64),
        group_digits(t.groups.len() as u64),
        format_duration_us(t.total_ns / 1000.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_sim_csv, side_by_side, SimSetup};
    use workload::{Phase, WorkloadParams};

    const HEADER: &str = "Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count";

    fn small() -> SimTable {
        parse_sim_csv(&format!(
            "{HEADER}\n3,-Q-3,MXU,32,Compute,1000,1000,20,2048,1000000\n3,-K-3,MXU,32,Compute,500,500,2,1024,500000\n4,Fwd-FFN-encoder-AttnPlusFFn,VPU,32,Memory,5,1,5,50,10\n"
        ))
        .unwrap()
    }

    #[test]
    fn groups_have_times_bound_and_sizes() {
        let d = groups_table(&small());
        assert_eq!(d.rows.len(), 2);
        let g = &d.rows[0];
        assert_eq!(g[1].text, "-Q-3 | -K-3");
        assert_eq!(g[3].text, "MXU");
        assert_eq!(g[5].text, "compute");
        assert_eq!(g[6].text, "1.50 µs");
        assert_eq!(g[7].exact, "48");
        assert_eq!(g[8].text, "1.50 MFLOP");
        assert_eq!(g[9].exact, "3072");
        let csv = d.exact_table().to_csv();
        assert!(csv.starts_with("fusion index,ops,rows,units,runs,bound,time per run (µs),total time (µs),"), "{csv}");
        assert_eq!(headline(&small()), "3 ops in 2 fusion groups, simulated total 48.16 µs.");
    }

    #[test]
    fn side_by_side_rows_carry_both_sides_and_ratios() {
        let setup = SimSetup {
            model: "llama3-8b".into(),
            chip: "tpuv5p".into(),
            phase: Phase::Prefill,
            params: WorkloadParams { batch: Some(1), seq_len: Some(1024), output_len: Some(128), tp: Some(1) },
        };
        let s = side_by_side(&small(), &setup).unwrap();
        let d = comparison_table(&s);
        assert_eq!(d.rows.len(), s.comparison.roles.len());
        let q = d.rows.iter().find(|r| r[0].text == "q_proj").unwrap();
        let role = s.comparison.roles.iter().find(|r| r.role == "q_proj").unwrap();
        assert_eq!(q[5].exact, role.our_flops.to_string());
        assert_eq!(q[1].text, format!("{:.2}×", role.flops_ratio().unwrap()));
        assert_eq!(q[12].text, "-Q-3");
        assert_eq!(q[13].text, "layer0.q_proj");
        assert!(s.describe().starts_with("llama3-8b on TPU v5p, prefill: batch 1, 1024 input tokens"));
    }
}
