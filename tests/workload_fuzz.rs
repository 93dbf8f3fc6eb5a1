//! Model configs: random and truncated input never panics, and any config that loads builds a
//! workload or says why not.

use fusionscope::workload::{build_workload, parse_model_config, Phase, WorkloadParams};
use proptest::prelude::*;

const LLAMA: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/models/models/llama3-8b.json"));
const DEEPSEEK: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/models/models/deepseekv2-236b.json"));

proptest! {
    #[test]
    fn random_text_never_panics(s in "\\PC*") {
        let _ = parse_model_config(&s);
    }

    #[test]
    fn truncated_configs_never_panic(cut in 0usize..1300, deepseek in any::<bool>()) {
        let text = if deepseek { DEEPSEEK } else { LLAMA };
        let _ = parse_model_config(&text[..cut.min(text.len())]);
    }

    #[test]
    fn small_llama_shapes_build_or_explain(
        d in 0u64..256, heads in 0u64..9, kv in 0u64..9, dh in 0u64..33, ff in 0u64..512, tp in 0u64..5,
        batch in 0u64..4, seq in 0u64..64, out in 0u64..8, decode in any::<bool>(),
    ) {
        let text = format!(
            r#"{{"model_type": "llm", "model_name": "t", "d_model": {d}, "num_heads": {heads}, "num_kv_heads": {kv},
                "d_head": {dh}, "d_ff": {ff}, "num_layers": 2}}"#
        );
        let c = parse_model_config(&text).unwrap();
        let phase = if decode { Phase::Decode } else { Phase::Prefill };
        let p = WorkloadParams { batch: Some(batch), seq_len: Some(seq), output_len: Some(out), tp: Some(tp) };
        match build_workload(&c, phase, p) {
            Ok(w) => prop_assert_eq!(w.op_repeat.len(), w.graph.len()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
