//! What is shown of a calibration file: the hardware summary with units, one row per fusion
//! pattern with its verdict, and the measured subgraphs. The command line prints it as tables
//! or JSON; the page renders the same rows.

use serde::Serialize;

use super::pattern::{pattern_mappings, PatternMapping};
use super::profile::{CalibrationFile, CalibrationProfile, FusionPattern, MeasuredSubgraphs};
use super::verdict::Verdict;
use table::Table;

/// Which of the two file shapes was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    HardwareProfile,
    MeasuredSubgraphs,
}

/// One line of the hardware summary: a quantity, its value and unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryItem {
    pub quantity: String,
    pub value: SummaryValue,
    /// Empty for text and counts.
    pub unit: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SummaryValue {
    Number(f64),
    Text(String),
}

/// One fusion pattern's measurement and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternRow {
    pub fusion_pattern: String,
    pub speedup_factor: f64,
    /// Fraction of memory traffic removed (0.33 = 33 %).
    pub memory_reduction: Option<f64>,
    pub verdict: Verdict,
    pub verdict_text: &'static str,
    pub operators: Vec<String>,
    pub unfused_latency_ms: Option<f64>,
    pub fused_latency_ms: Option<f64>,
    pub unfused_gflops: Option<f64>,
    pub fused_gflops: Option<f64>,
    /// Fused minus unfused, GFLOP/s.
    pub gflops_change: Option<f64>,
    pub gflops_change_pct: Option<f64>,
}

impl PatternRow {
    fn of(p: &FusionPattern) -> Self {
        let verdict = Verdict::of_speedup(p.speedup_factor);
        PatternRow {
            fusion_pattern: p.name.clone(),
            speedup_factor: p.speedup_factor,
            memory_reduction: p.memory_reduction,
            verdict,
            verdict_text: verdict.text(),
            operators: p.operators.clone(),
            unfused_latency_ms: p.unfused_latency_ms,
            fused_latency_ms: p.fused_latency_ms,
            unfused_gflops: p.unfused_gflops,
            fused_gflops: p.fused_gflops,
            gflops_change: p.gflops_change(),
            gflops_change_pct: p.gflops_change_pct(),
        }
    }
}

/// One measured subgraph of a measured-subgraph file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubgraphRow {
    pub subgraph_id: Option<u32>,
    pub fusion_pattern: String,
    pub nodes: Vec<String>,
    pub flops: Option<f64>,
    pub total_bytes: Option<u64>,
    pub latency_ms: Option<f64>,
    /// Achieved GFLOP/s.
    pub achieved_gflops: Option<f64>,
    /// Fraction of the theoretical peak.
    pub efficiency: Option<f64>,
}

/// Everything shown of one calibration file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibReport {
    pub hardware: String,
    pub kind: FileKind,
    /// Measured fusion patterns in file order; empty for old profiles and subgraph files.
    pub patterns: Vec<PatternRow>,
    pub summary: Vec<SummaryItem>,
    /// How each pattern maps to fusion groups for the calibrated time model.
    pub pattern_mapping: Vec<PatternMapping>,
    /// Only in measured-subgraph files.
    pub subgraphs: Vec<SubgraphRow>,
}

impl CalibReport {
    pub fn new(file: &CalibrationFile) -> Self {
        let hardware = file.hardware().to_string();
        match file {
            CalibrationFile::Profile(p) => CalibReport {
                hardware,
                kind: FileKind::HardwareProfile,
                patterns: p.fusion_patterns.iter().map(PatternRow::of).collect(),
                summary: profile_summary(p),
                pattern_mapping: pattern_mappings(p),
                subgraphs: Vec::new(),
            },
            CalibrationFile::Measured(m) => CalibReport {
                hardware,
                kind: FileKind::MeasuredSubgraphs,
                patterns: Vec::new(),
                summary: measured_summary(m),
                pattern_mapping: Vec::new(),
                subgraphs: m
                    .subgraphs
                    .iter()
                    .map(|s| SubgraphRow {
                        subgraph_id: s.subgraph_id,
                        fusion_pattern: s.fusion_pattern.clone(),
                        nodes: s.node_names.clone(),
                        flops: s.flops,
                        total_bytes: s.total_bytes,
                        latency_ms: s.measured_latency.map(|l| l.mean),
                        achieved_gflops: s.achieved_flops.map(|f| f / 1e9),
                        efficiency: s.efficiency.map(|e| e.mean),
                    })
                    .collect(),
            },
        }
    }

    /// The hardware summary as a two-column table.
    pub fn summary_table(&self) -> Table {
        let mut t = Table::new(&["quantity", ">value"]);
        for item in &self.summary {
            let value = match &item.value {
                SummaryValue::Number(v) => format!("{} {}", trim_number(*v), item.unit),
                SummaryValue::Text(s) => s.clone(),
            };
            t.row([item.quantity.clone(), value.trim_end().to_string()]);
        }
        t
    }

    /// One row per fusion pattern.
    pub fn pattern_table(&self) -> Table {
        let mut t = Table::new(&[
            "pattern",
            ">speedup",
            ">memory reduction",
            ">unfused GFLOP/s",
            ">fused GFLOP/s",
            ">GFLOP/s change",
            "verdict",
        ]);
        let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| "-".to_string(), f);
        for p in &self.patterns {
            t.row([
                p.fusion_pattern.clone(),
                format!("{:.3}×", p.speedup_factor),
                opt(p.memory_reduction, &|m| format!("{:.1} %", 100.0 * m)),
                opt(p.unfused_gflops, &|g| format!("{g:.1}")),
                opt(p.fused_gflops, &|g| format!("{g:.1}")),
                match (p.gflops_change, p.gflops_change_pct) {
                    (Some(c), Some(pct)) => format!("{c:+.2} ({pct:+.2} %)"),
                    (Some(c), None) => format!("{c:+.2}"),
                    _ => "-".to_string(),
                },
                p.verdict_text.to_string(),
            ]);
        }
        t
    }

    /// Which op-type sequence each pattern stands for.
    pub fn mapping_table(&self) -> Table {
        let mut t = Table::new(&["pattern", "group op types (reshapes aside)", "used", "note"]);
        for m in &self.pattern_mapping {
            let types = m
                .op_types
                .as_ref()
                .map_or_else(|| "-".to_string(), |ts| ts.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" + "));
            t.row([m.fusion_pattern.clone(), types, if m.used { "yes" } else { "no" }.to_string(), m.note.clone()]);
        }
        t
    }

    /// One row per measured subgraph.
    pub fn subgraph_table(&self) -> Table {
        let mut t = Table::new(&[">id", "pattern", "nodes", ">GFLOP", ">bytes", ">latency", ">GFLOP/s", ">of peak"]);
        for s in &self.subgraphs {
            t.row([
                s.subgraph_id.map_or_else(|| "-".to_string(), |i| i.to_string()),
                s.fusion_pattern.clone(),
                s.nodes.join(", "),
                s.flops.map_or_else(|| "-".to_string(), |f| format!("{:.3}", f / 1e9)),
                s.total_bytes.map_or_else(|| "-".to_string(), units::format_bytes),
                s.latency_ms.map_or_else(|| "-".to_string(), |ms| units::format_duration_us(ms * 1000.0)),
                s.achieved_gflops.map_or_else(|| "-".to_string(), |g| format!("{g:.1}")),
                s.efficiency.map_or_else(|| "-".to_string(), |e| format!("{:.1} %", 100.0 * e)),
            ]);
        }
        t
    }
}

/// Up to three decimals, without trailing zeros (`1280`, `89.6`, `0.772`).
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn push_number(out: &mut Vec<SummaryItem>, quantity: &str, value: Option<f64>, unit: &'static str) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        out.push(SummaryItem { quantity: quantity.to_string(), value: SummaryValue::Number(v), unit });
    }
}

fn push_text(out: &mut Vec<SummaryItem>, quantity: &str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
        out.push(SummaryItem { quantity: quantity.to_string(), value: SummaryValue::Text(v.to_string()), unit: "" });
    }
}

fn profile_summary(p: &CalibrationProfile) -> Vec<SummaryItem> {
    let m = &p.metadata;
    let mut out = Vec::new();
    push_text(&mut out, "hardware", m.hardware_name.as_deref());
    push_text(&mut out, "device type", m.device_type.as_deref());
    push_text(&mut out, "CPU", m.cpu_model.as_deref());
    push_number(&mut out, "CPU cores", m.cpu_count.map(f64::from), "");
    push_number(&mut out, "memory", m.total_memory_gb, "GB");
    push_text(&mut out, "framework", m.framework.as_deref());
    push_text(&mut out, "PyTorch", m.pytorch_version.as_deref());
    push_text(&mut out, "calibrated on", m.calibration_date.as_deref());
    push_number(&mut out, "measurement runs", m.num_measurement_runs.map(f64::from), "");
    if let Some(clock) = &m.gpu_clock {
        push_number(&mut out, "GPU SM clock", clock.sm_clock_mhz, "MHz");
        push_number(&mut out, "GPU max SM clock", clock.max_sm_clock_mhz, "MHz");
        push_text(&mut out, "power mode", clock.power_mode_name.as_deref());
    }
    push_number(&mut out, "theoretical peak", p.theoretical_peak_gflops, "GFLOP/s");
    push_number(&mut out, "theoretical bandwidth", p.theoretical_bandwidth_gbps, "GB/s");
    push_number(&mut out, "best measured", p.best_measured_gflops, "GFLOP/s");
    push_number(&mut out, "average measured", p.avg_measured_gflops, "GFLOP/s");
    push_number(&mut out, "worst measured", p.worst_measured_gflops, "GFLOP/s");
    push_number(&mut out, "measured bandwidth", p.measured_bandwidth_gbps, "GB/s");
    push_number(&mut out, "bandwidth efficiency", p.bandwidth_efficiency.map(|e| 100.0 * e), "%");
    push_number(&mut out, "operation benchmarks", Some(p.operation_profiles.len() as f64), "");
    push_number(&mut out, "fusion patterns", Some(p.fusion_patterns.len() as f64), "");
    if let Some(pm) = &p.precision_matrix {
        for (precision, gflops) in &pm.peak_gflops_by_precision {
            push_number(&mut out, &format!("measured peak {precision}"), Some(*gflops), "GFLOP/s");
        }
    }
    out
}

fn measured_summary(m: &MeasuredSubgraphs) -> Vec<SummaryItem> {
    let mut out = Vec::new();
    push_text(&mut out, "hardware", m.hardware_id.as_deref());
    push_text(&mut out, "device", m.device.as_deref());
    push_text(&mut out, "thermal profile", m.thermal_profile.as_deref());
    push_text(&mut out, "precision", m.precision.as_deref());
    push_text(&mut out, "model", m.model.as_deref());
    push_number(&mut out, "batch size", m.batch_size.map(f64::from), "");
    push_text(&mut out, "measured on", m.measurement_date.as_deref());
    push_number(&mut out, "theoretical peak", m.theoretical_peak_flops.map(|f| f / 1e9), "GFLOP/s");
    push_number(&mut out, "subgraphs", Some(m.subgraphs.len() as f64), "");
    if let Some(s) = &m.model_summary {
        push_number(&mut out, "model GFLOP", s.total_flops.map(|f| f / 1e9), "GFLOP");
        push_number(&mut out, "model bytes", s.total_bytes.map(|b| b as f64 / 1e6), "MB");
        push_number(&mut out, "model latency", s.total_latency_ms, "ms");
        push_number(&mut out, "throughput", s.throughput_fps, "frames/s");
    }
    out
}
