//! XLA's kernel names, which are its HLO instructions': a fusion `[loop_|input_]<op>_<op>…_fusion`
//! (GPU: `loop_add_fusion`, `input_transpose_fusion_1`; CPU: `subtract_exponential_fusion`,
//! `multiply_bitcast_fusion.2`), and on CPU one op run alone, `wrapped_<op>`
//! (`wrapped_reduce-window.1`). The words are HLO opcodes, `-` written `_` or kept; XLA names a
//! fusion after its instructions, so they give its components as Inductor's op words do
//! ([`super::inductor`]). A name with a word that is no opcode (`ynn_fusion`, a YNNPACK call;
//! another library's `add_rmsnorm_fusion`) is not read here: the HLO module, where the profile
//! has it, says what such a kernel ran.

use crate::category::Category::{self, *};
use crate::name::{ops_in, strip_index};

/// HLO opcodes (lower case, `_` for `-`) and what each is. Layout-only instructions (bitcast,
/// broadcast, reshape) move no data in a fusion: they are known words that add no component.
const OPS: &[(&str, Option<Category>)] = &[
    ("add", Some(Elementwise)),
    ("subtract", Some(Elementwise)),
    ("multiply", Some(Elementwise)),
    ("divide", Some(Elementwise)),
    ("remainder", Some(Elementwise)),
    ("negate", Some(Elementwise)),
    ("abs", Some(Elementwise)),
    ("sign", Some(Elementwise)),
    ("maximum", Some(Elementwise)),
    ("minimum", Some(Elementwise)),
    ("clamp", Some(Elementwise)),
    ("compare", Some(Elementwise)),
    ("select", Some(Elementwise)),
    ("and", Some(Elementwise)),
    ("or", Some(Elementwise)),
    ("xor", Some(Elementwise)),
    ("not", Some(Elementwise)),
    ("shift_left", Some(Elementwise)),
    ("shift_right_logical", Some(Elementwise)),
    ("shift_right_arithmetic", Some(Elementwise)),
    ("power", Some(Elementwise)),
    ("sqrt", Some(Elementwise)),
    ("rsqrt", Some(Elementwise)),
    ("cbrt", Some(Elementwise)),
    ("exponential", Some(Elementwise)),
    ("exponential_minus_one", Some(Elementwise)),
    ("log", Some(Elementwise)),
    ("log_plus_one", Some(Elementwise)),
    ("floor", Some(Elementwise)),
    ("ceil", Some(Elementwise)),
    ("round_nearest_afz", Some(Elementwise)),
    ("round_nearest_even", Some(Elementwise)),
    ("sine", Some(Elementwise)),
    ("cosine", Some(Elementwise)),
    ("atan2", Some(Elementwise)),
    ("is_finite", Some(Elementwise)),
    ("convert", Some(Elementwise)),
    ("tanh", Some(Activation)),
    ("logistic", Some(Activation)),
    ("erf", Some(Activation)),
    ("reduce", Some(Reduction)),
    ("reduce_window", Some(Reduction)),
    ("sort", Some(Sort)),
    ("dot", Some(Gemm)),
    ("convolution", Some(Gemm)),
    ("transpose", Some(Memory)),
    ("copy", Some(Memory)),
    ("slice", Some(Memory)),
    ("dynamic_slice", Some(Memory)),
    ("dynamic_update_slice", Some(Memory)),
    ("concatenate", Some(Memory)),
    ("pad", Some(Memory)),
    ("gather", Some(Memory)),
    ("scatter", Some(Memory)),
    ("reverse", Some(Memory)),
    ("iota", Some(Memory)),
    ("bitcast", None),
    ("broadcast", None),
    ("reshape", None),
];

/// Longest opcode in [`OPS`], in words.
const MAX_OP_WORDS: usize = 3;

/// The opcodes a name of XLA's gives (lower case), or None where it is not one: no `_fusion`
/// or `wrapped_` form, or a word that is no opcode.
pub fn parse(base: &str) -> Option<Vec<&'static str>> {
    // XLA numbers a name that repeats: `.1` on CPU, `_1` on GPU.
    let name = strip_index(base, '.');
    let name = strip_index(name, '_');
    let ops = match name.strip_prefix("wrapped_") {
        Some(op) => op,
        None => {
            let ops = name.strip_suffix("_fusion")?;
            ops.strip_prefix("loop_").or_else(|| ops.strip_prefix("input_")).unwrap_or(ops)
        }
    };
    let words: Vec<&str> = ops.split(['_', '-']).filter(|w| !w.is_empty()).collect();
    // XLA's names are its opcodes only: another word (`rmsnorm` in `add_rmsnorm_fusion`, `ynn`
    // in `ynn_fusion`) means another naming, which the other rules read.
    match ops_in(&words, OPS, MAX_OP_WORDS) {
        (found, true) if !found.is_empty() => Some(found),
        _ => None,
    }
}

/// The components of an XLA kernel name, or None where it is not one ([`parse`]). A fusion of
/// layout-only instructions alone (`bitcast_fusion`) moves data: memory.
pub fn components(base: &str) -> Option<Vec<Category>> {
    Some(moving_data(parse(base)?.iter().filter_map(|op| op_component(op).flatten()).collect()))
}

/// What opcode `op` (lower case, `_` for `-`) adds to a fusion: `None` where it is no opcode
/// of [`OPS`], `Some(None)` for a layout-only one.
fn op_component(op: &str) -> Option<Option<Category>> {
    OPS.iter().find(|(name, _)| *name == op).map(|(_, c)| *c)
}

/// A fusion's components, or memory for one of layout-only instructions alone: it still
/// moves data.
fn moving_data(mut components: Vec<Category>) -> Vec<Category> {
    if components.is_empty() {
        components.push(Memory);
    }
    components
}

/// The components of the HLO instructions a kernel ran, by their opcodes as a compiled group
/// records them (`multiply`, `reduce-window`, `custom-call __cublas$gemm`): what a kernel whose
/// name says nothing (`ynn_fusion.5`) ran. None where no opcode is known; a custom call is a
/// GEMM where its target names one (`gemm`, `matmul`) or a convolution (`conv`), else unknown.
pub fn of_opcodes<'a>(opcodes: impl IntoIterator<Item = &'a str>) -> Option<Vec<Category>> {
    let mut components = Vec::new();
    let mut known = false;
    for op in opcodes {
        let (code, target) = op.split_once(' ').unwrap_or((op, ""));
        let code = code.to_ascii_lowercase().replace('-', "_");
        if code == "custom_call" {
            let target = target.to_ascii_lowercase();
            if ["gemm", "matmul", "conv"].iter().any(|w| target.contains(w)) {
                components.push(Gemm);
                known = true;
            }
            continue;
        }
        if let Some(c) = op_component(&code) {
            known = true;
            components.extend(c);
        }
    }
    known.then(|| moving_data(components))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusions_and_wrapped_ops_of_gpu_and_cpu_profiles() {
        assert_eq!(parse("loop_add_fusion").unwrap(), vec!["add"]);
        assert_eq!(parse("input_transpose_fusion_1").unwrap(), vec!["transpose"]);
        assert_eq!(parse("multiply_bitcast_fusion.2").unwrap(), vec!["multiply", "bitcast"]);
        assert_eq!(parse("wrapped_reduce-window.1").unwrap(), vec!["reduce_window"]);
        assert_eq!(parse("shift_right_logical_xor_fusion").unwrap(), vec!["shift_right_logical", "xor"]);
        assert_eq!(components("subtract_exponential_fusion").unwrap(), vec![Elementwise, Elementwise]);
        assert_eq!(components("multiply_reduce_fusion").unwrap(), vec![Elementwise, Reduction]);
        assert_eq!(components("copy_bitcast_fusion").unwrap(), vec![Memory]);
        assert_eq!(components("bitcast_fusion").unwrap(), vec![Memory]);
    }

    #[test]
    fn names_that_are_not_xlas_or_say_nothing_are_left_to_other_rules() {
        for name in [
            "ynn_fusion.5",
            "gemm_fusion_dot_2",
            "triton_softmax_8",
            "fusion",
            "wrapped_",
            "add_kernel",
            "add_rmsnorm_fusion",
        ] {
            assert_eq!(parse(name), None, "{name}");
        }
        // Left to the other rules, which read it for what it is.
        assert_eq!(crate::classify("add_rmsnorm_fusion").category, Norm);
        assert_eq!(crate::classify("loop_add_fusion").rule, Some("xla-fusion"));
    }

    #[test]
    fn a_compiled_groups_opcodes_give_its_components() {
        assert_eq!(of_opcodes(["dot"]).unwrap(), vec![Gemm]);
        assert_eq!(of_opcodes(["reduce-window", "multiply"]).unwrap(), vec![Reduction, Elementwise]);
        assert_eq!(of_opcodes(["custom-call __cublas$gemm", "add"]).unwrap(), vec![Gemm, Elementwise]);
        assert_eq!(of_opcodes(["bitcast", "broadcast"]).unwrap(), vec![Memory]);
        assert_eq!(of_opcodes(["custom-call __my$kernel"]), None);
        assert_eq!(of_opcodes(["all-reduce"]), None);
        assert_eq!(of_opcodes([]), None);
        let c = crate::classify_compiled(["dot", "add"]).unwrap();
        assert_eq!((c.category, c.components, c.rule), (Gemm, vec![Gemm, Elementwise], Some(crate::HLO_RULE)));
    }
}
