//! Which model, chip, phase and sizes a simulator table was made for, so that the page can put
//! our analysis of the same workload beside it ([`side_by_side`], the same [`compare`] as
//! `fusionscope model … --simcsv FILE`).
//!
//! The simulator's tables say little about their workload; its file names say more
//! (`llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill.csv`). [`infer_setup`] reads:
//!
//! - the model: the longest built-in model name the file name starts with;
//! - the chip: the first `_`-separated token that is a chip preset (`tpuv5p`);
//! - `bsN` batch, `inN` prompt length, `outN` output length, `tpN` tensor parallelism (else
//!   `Nchip` as the tensor-parallel degree);
//! - the phase: a `prefill` or `decode` token, else the table's rows (decode rows say
//!   `decode` in their description);
//! - for an LLM prefill without `inN`: the prompt length (and batch, without `bsN`) from the
//!   input shape `[batch, tokens, hidden]` of the table's first norm row.
//!
//! Whatever is not found takes a default and is said in [`InferredSetup::notes`]; the page
//! lets the user change every field.
//!
//! A table may hold both phases (the simulator's combined output): only the rows of the
//! compared phase are compared.

use serde::{Deserialize, Serialize};

use super::compare::{compare, role_of, Comparison};
use super::{SimRow, SimTable};
use hardware::{preset, preset_names};
use workload::report::model_time;
use workload::{build_workload, model_names, preset_model, ModelConfig, Phase, ResolvedParams, WorkloadParams};

/// The workload a simulator table is compared with: built-in model and chip names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimSetup {
    pub model: String,
    pub chip: String,
    pub phase: Phase,
    pub params: WorkloadParams,
}

/// A setup read from a file name and table, with what had to be assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferredSetup {
    pub setup: SimSetup,
    pub notes: Vec<String>,
}

/// Used when the file name names no model or chip (the simulator's own example pair).
pub const DEFAULT_MODEL: &str = "llama3-8b";
pub const DEFAULT_CHIP: &str = "tpuv5p";

/// The phase a row belongs to: the simulator's decode rows say so (`Attention-serving-decode-…`,
/// `…-serving-decoder-…`); every other row is a prefill (forward-pass) row.
pub fn row_phase(row: &SimRow) -> Phase {
    if row.description.contains("decode") {
        Phase::Decode
    } else {
        Phase::Prefill
    }
}

/// `bs8` with prefix `bs` → 8.
fn number_after(token: &str, prefix: &str) -> Option<u64> {
    token.strip_prefix(prefix).filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
}

/// The input shape of the first norm row as dims (`DT_BFLOAT16:[8,1024,320]` → `[8, 1024, 320]`).
fn first_norm_shape(table: &SimTable) -> Option<Vec<u64>> {
    let row = table.rows.iter().find(|r| role_of(&r.description).is_some_and(|(role, _)| role == "attn_norm"))?;
    let inside = row.input_shapes.split('[').nth(1)?.split(']').next()?;
    inside.split(',').map(|d| d.trim().parse().ok()).collect()
}

/// Reads the setup from a table's file name and rows (see the module docs).
pub fn infer_setup(file_name: &str, table: &SimTable) -> InferredSetup {
    let stem = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let stem = stem.strip_suffix(".csv").unwrap_or(stem).to_ascii_lowercase();
    let mut notes = Vec::new();
    let key = stem.replace('.', "_");
    let model = model_names().into_iter().filter(|m| key.starts_with(m)).max_by_key(|m| m.len());
    let model = model.map(str::to_string).unwrap_or_else(|| {
        notes.push(format!("The file name names no built-in model: {DEFAULT_MODEL} is assumed."));
        DEFAULT_MODEL.to_string()
    });
    let rest = key[key.len().min(if key.starts_with(&model) { model.len() } else { 0 })..].to_string();
    let tokens: Vec<&str> = rest.split('_').filter(|t| !t.is_empty()).collect();
    let chip = tokens.iter().find(|t| preset_names().contains(t)).map(|t| t.to_string()).unwrap_or_else(|| {
        notes.push(format!("The file name names no chip preset: {DEFAULT_CHIP} is assumed."));
        DEFAULT_CHIP.to_string()
    });
    let find = |prefix: &str| tokens.iter().find_map(|t| number_after(t, prefix));
    let chips = tokens.iter().find_map(|t| t.strip_suffix("chip").and_then(|n| n.parse::<u64>().ok()));
    let mut params =
        WorkloadParams { batch: find("bs"), seq_len: find("in"), output_len: find("out"), tp: find("tp").or(chips) };
    let phases: Vec<Phase> =
        [Phase::Prefill, Phase::Decode].into_iter().filter(|p| table.rows.iter().any(|r| row_phase(r) == *p)).collect();
    let phase = if tokens.contains(&"decode") {
        Phase::Decode
    } else if tokens.contains(&"prefill") {
        Phase::Prefill
    } else {
        if phases.len() == 2 {
            notes.push(
                "The table holds prefill and decode rows: the prefill rows are compared (choose decode for the others)."
                    .to_string(),
            );
        }
        phases.first().copied().unwrap_or(Phase::Prefill)
    };
    let is_llm = matches!(preset_model(&model), Ok(ModelConfig::Llm(_)));
    if is_llm && phase == Phase::Prefill && params.seq_len.is_none() {
        if let Some(shape) = first_norm_shape(table).filter(|s| s.len() == 3) {
            params.seq_len = Some(shape[1]);
            params.batch = params.batch.or(Some(shape[0]));
            notes.push(format!(
                "Prompt length {} read from the simulator's first norm input [{}].",
                shape[1],
                shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    InferredSetup { setup: SimSetup { model, chip, phase, params }, notes }
}

/// The simulator's table beside our analysis of its workload.
#[derive(Debug, Clone, PartialEq)]
pub struct SideBySide {
    pub comparison: Comparison,
    /// The model and chip as named in our presets (`llama3-8b`, `TPU v5p`).
    pub model: String,
    pub chip: String,
    pub phase: Phase,
    pub params: ResolvedParams,
    /// Rows of the compared phase, and of the other one (left out).
    pub rows_compared: usize,
    pub rows_other_phase: usize,
}

impl SideBySide {
    /// `llama3-8b on TPU v5p, prefill: batch 1, 1024 input tokens, 128 output tokens, tp 1`.
    pub fn describe(&self) -> String {
        let p = &self.params;
        format!(
            "{} on {}, {}: batch {}, {} input tokens, {} output tokens, tp {}",
            self.model, self.chip, self.phase, p.batch, p.seq_len, p.output_len, p.tp
        )
    }
}

/// Our analysis of `setup` beside `table`: the rows of the setup's phase, compared by role.
/// The error is a sentence naming what cannot be built.
pub fn side_by_side(table: &SimTable, setup: &SimSetup) -> Result<SideBySide, String> {
    let config = preset_model(&setup.model).map_err(|e| e.to_string())?;
    let chip = preset(&setup.chip).map_err(|e| e.to_string())?;
    let workload = build_workload(&config, setup.phase, setup.params).map_err(|e| e.to_string())?;
    let (_, time) = model_time(&workload, &chip).map_err(|e| e.to_string())?;
    let of_phase = table.only_rows(|r| row_phase(r) == setup.phase);
    Ok(SideBySide {
        comparison: compare(&of_phase, &workload, &time),
        model: workload.model.clone(),
        chip: chip.name,
        phase: setup.phase,
        params: workload.params,
        rows_compared: of_phase.rows.len(),
        rows_other_phase: table.rows.len() - of_phase.rows.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_sim_csv;

    const HEADER: &str = "Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count,Input Tensor Shapes";

    fn table(rows: &str) -> SimTable {
        parse_sim_csv(&format!("{HEADER}\n{rows}")).unwrap()
    }

    #[test]
    fn file_name_gives_model_chip_sizes_and_phase() {
        let t =
            table("1,Attention-serving-decode-Input_layernorm,VPU,4096,Memory,1,1,1,1,1,\"DT_BFLOAT16:[1,1,4096]\"\n");
        let s = infer_setup("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode.csv", &t);
        assert_eq!(s.setup.model, "llama3-8b");
        assert_eq!(s.setup.chip, "tpuv5p");
        assert_eq!(s.setup.phase, Phase::Decode);
        assert_eq!(
            s.setup.params,
            WorkloadParams { batch: Some(1), seq_len: Some(1024), output_len: Some(128), tp: Some(1) }
        );
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }

    #[test]
    fn prompt_length_comes_from_the_norm_shape_when_the_name_lacks_it() {
        let t = table("1,Fwd-Attention-encoder-Input_rmsnorm,VPU,60,Memory,1,1,1,1,1,\"DT_BFLOAT16:[8,1024,320]\"\n");
        let s = infer_setup("deepseekv2-236b_inference_tpuv5p_tp16_ep16_bs8_prefill.csv", &t);
        assert_eq!(s.setup.model, "deepseekv2-236b");
        assert_eq!(
            s.setup.params,
            WorkloadParams { batch: Some(8), seq_len: Some(1024), output_len: None, tp: Some(16) }
        );
        assert!(s.notes[0].contains("[8, 1024, 320]"), "{:?}", s.notes);
    }

    #[test]
    fn unknown_names_take_defaults_and_say_so() {
        let t = table("1,-Q-3,MXU,1,Compute,1,1,1,1,1,\n2,Attention-serving-decode-Q/K/V,MXU,1,Compute,1,1,1,1,1,\n");
        let s = infer_setup("ops.csv", &t);
        assert_eq!((s.setup.model.as_str(), s.setup.chip.as_str()), (DEFAULT_MODEL, DEFAULT_CHIP));
        assert_eq!(s.setup.phase, Phase::Prefill);
        assert_eq!(s.notes.len(), 3, "{:?}", s.notes);
        assert!(s.notes[2].contains("prefill and decode rows"));
    }

    #[test]
    fn side_by_side_names_what_cannot_be_built() {
        let t = table("1,-Q-3,MXU,1,Compute,1,1,1,1,1,\n");
        let setup = SimSetup {
            model: "nosuch".into(),
            chip: "tpuv5p".into(),
            phase: Phase::Prefill,
            params: WorkloadParams::default(),
        };
        assert!(side_by_side(&t, &setup).unwrap_err().contains("unknown model `nosuch`"));
        let setup = SimSetup { model: "llama3-8b".into(), chip: "tpu9000".into(), ..setup };
        assert!(side_by_side(&t, &setup).unwrap_err().contains("tpu9000"));
    }
}
