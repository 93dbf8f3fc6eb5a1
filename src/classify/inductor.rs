//! TorchInductor kernel names: `triton_{poi,red,per,tem}_fused_<op1>_<op2>_…_<n>`, and the C++
//! kernels of a CPU graph, `cpp_fused_<op1>_…_<n>` (`graph_<N>_cpp_fused_…` as the profiler
//! records them with `enable_kernel_profile`).
//!
//! Inductor names a generated Triton kernel after the ATen nodes it fuses, so the op words
//! give the components: `triton_red_fused_add_mean_mul_pow_rsqrt_0` is a residual add plus an
//! RMSNorm (the norm appears decomposed as `mean`, `pow`, `rsqrt`). Two things the words do not
//! mean literally:
//! - a norm or softmax is often listed decomposed; [`COMPOSITES`] recognise those;
//! - GEMM words (`mm`, `addmm`, vLLM's `rocm_unquantized_gemm`) inside a pointwise or reduction
//!   kernel are not a matrix multiply: Inductor names the kernel after the nodes it came from
//!   (the bias add split off `addmm`, the cast feeding a custom GEMM op). They count as the
//!   bias add (`addmm`, `baddbmm`, `linear`) or nothing (`mm`, `bmm`, `*gemm`). Only template
//!   kernels (`triton_tem_fused_…`) are GEMMs.

use serde::Serialize;

use crate::category::Category;
use crate::name::{ops_in, strip_index};
use Category::*;

/// The kind of Inductor kernel, from the name's second word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InductorKind {
    /// `poi`: pointwise.
    Pointwise,
    /// `red`: looped reduction.
    Reduction,
    /// `per`: persistent (single-pass) reduction.
    PersistentReduction,
    /// `tem`: a template kernel (GEMM, convolution or flex attention) with fused epilogue.
    Template,
    /// `for`: a combo/foreach kernel of several pointwise ops.
    Foreach,
    /// `cpp_fused_…`: a C++ kernel of a CPU graph, pointwise or reducing (its name does not say).
    Cpp,
}

impl InductorKind {
    fn from_word(word: &str) -> Option<InductorKind> {
        Some(match word {
            "poi" => InductorKind::Pointwise,
            "red" => InductorKind::Reduction,
            "per" => InductorKind::PersistentReduction,
            "tem" => InductorKind::Template,
            "for" => InductorKind::Foreach,
            _ => return None,
        })
    }

    /// The component a kernel of this kind has when none of its words is known.
    fn default_component(self) -> Category {
        match self {
            InductorKind::Pointwise | InductorKind::Foreach => Elementwise,
            InductorKind::Reduction | InductorKind::PersistentReduction => Reduction,
            InductorKind::Template => Gemm,
            InductorKind::Cpp => Elementwise,
        }
    }
}

/// ATen op names as they appear in Inductor kernel names (underscore-joined, leading `_`
/// dropped), with the component each contributes; `None` marks ops that do no work of their own
/// in a fused kernel (views) or that must not be read literally (GEMM words outside templates).
/// Words not listed are ignored.
pub const OPS: &[(&str, Option<Category>)] = &[
    // pointwise arithmetic, comparisons, casts of value
    ("add", Some(Elementwise)),
    ("sub", Some(Elementwise)),
    ("rsub", Some(Elementwise)),
    ("mul", Some(Elementwise)),
    ("div", Some(Elementwise)),
    ("true_divide", Some(Elementwise)),
    ("floor_divide", Some(Elementwise)),
    ("neg", Some(Elementwise)),
    ("exp", Some(Elementwise)),
    ("exp2", Some(Elementwise)),
    ("expm1", Some(Elementwise)),
    ("log", Some(Elementwise)),
    ("log2", Some(Elementwise)),
    ("log1p", Some(Elementwise)),
    ("pow", Some(Elementwise)),
    ("sqrt", Some(Elementwise)),
    ("rsqrt", Some(Elementwise)),
    ("reciprocal", Some(Elementwise)),
    ("abs", Some(Elementwise)),
    ("sign", Some(Elementwise)),
    ("sgn", Some(Elementwise)),
    ("sin", Some(Elementwise)),
    ("cos", Some(Elementwise)),
    ("erf", Some(Elementwise)),
    ("floor", Some(Elementwise)),
    ("ceil", Some(Elementwise)),
    ("round", Some(Elementwise)),
    ("trunc", Some(Elementwise)),
    ("remainder", Some(Elementwise)),
    ("fmod", Some(Elementwise)),
    ("maximum", Some(Elementwise)),
    ("minimum", Some(Elementwise)),
    ("clamp", Some(Elementwise)),
    ("clamp_min", Some(Elementwise)),
    ("clamp_max", Some(Elementwise)),
    ("where", Some(Elementwise)),
    ("masked_fill", Some(Elementwise)),
    ("eq", Some(Elementwise)),
    ("ne", Some(Elementwise)),
    ("lt", Some(Elementwise)),
    ("le", Some(Elementwise)),
    ("gt", Some(Elementwise)),
    ("ge", Some(Elementwise)),
    ("bitwise_and", Some(Elementwise)),
    ("bitwise_or", Some(Elementwise)),
    ("bitwise_not", Some(Elementwise)),
    ("bitwise_xor", Some(Elementwise)),
    ("logical_and", Some(Elementwise)),
    ("logical_or", Some(Elementwise)),
    ("logical_not", Some(Elementwise)),
    ("isnan", Some(Elementwise)),
    ("isinf", Some(Elementwise)),
    ("lerp", Some(Elementwise)),
    ("addcmul", Some(Elementwise)),
    ("addcdiv", Some(Elementwise)),
    ("tril", Some(Elementwise)),
    ("triu", Some(Elementwise)),
    ("native_dropout", Some(Elementwise)),
    ("dropout", Some(Elementwise)),
    ("mse_loss", Some(Elementwise)),
    // the bias add that Inductor splits off a linear layer (see the module documentation)
    ("addmm", Some(Elementwise)),
    ("baddbmm", Some(Elementwise)),
    ("linear", Some(Elementwise)),
    // activations
    ("silu", Some(Activation)),
    ("gelu", Some(Activation)),
    ("relu", Some(Activation)),
    ("relu6", Some(Activation)),
    ("sigmoid", Some(Activation)),
    ("tanh", Some(Activation)),
    ("elu", Some(Activation)),
    ("selu", Some(Activation)),
    ("celu", Some(Activation)),
    ("leaky_relu", Some(Activation)),
    ("prelu", Some(Activation)),
    ("hardtanh", Some(Activation)),
    ("hardswish", Some(Activation)),
    ("hardsigmoid", Some(Activation)),
    ("softplus", Some(Activation)),
    ("mish", Some(Activation)),
    ("glu", Some(Activation)),
    ("swiglu", Some(Activation)),
    ("silu_backward", Some(Activation)),
    ("gelu_backward", Some(Activation)),
    ("sigmoid_backward", Some(Activation)),
    ("tanh_backward", Some(Activation)),
    ("threshold", Some(Activation)),
    ("threshold_backward", Some(Activation)),
    // normalisations
    ("native_layer_norm", Some(Norm)),
    ("native_layer_norm_backward", Some(Norm)),
    ("layer_norm", Some(Norm)),
    ("rms_norm", Some(Norm)),
    ("native_group_norm", Some(Norm)),
    ("native_group_norm_backward", Some(Norm)),
    ("group_norm", Some(Norm)),
    ("native_batch_norm", Some(Norm)),
    ("native_batch_norm_legit", Some(Norm)),
    ("native_batch_norm_backward", Some(Norm)),
    ("batch_norm", Some(Norm)),
    // softmax
    ("softmax", Some(Softmax)),
    ("log_softmax", Some(Softmax)),
    ("softmax_backward_data", Some(Softmax)),
    ("log_softmax_backward_data", Some(Softmax)),
    // reductions
    ("sum", Some(Reduction)),
    ("mean", Some(Reduction)),
    ("amax", Some(Reduction)),
    ("amin", Some(Reduction)),
    ("max", Some(Reduction)),
    ("min", Some(Reduction)),
    ("prod", Some(Reduction)),
    ("var", Some(Reduction)),
    ("var_mean", Some(Reduction)),
    ("std", Some(Reduction)),
    ("argmax", Some(Reduction)),
    ("argmin", Some(Reduction)),
    ("any", Some(Reduction)),
    ("all", Some(Reduction)),
    ("cumsum", Some(Reduction)),
    ("cumprod", Some(Reduction)),
    ("logsumexp", Some(Reduction)),
    ("linalg_vector_norm", Some(Reduction)),
    ("nll_loss_forward", Some(Reduction)),
    ("max_pool2d_with_indices", Some(Reduction)),
    ("avg_pool2d", Some(Reduction)),
    // sorting
    ("sort", Some(Sort)),
    ("argsort", Some(Sort)),
    ("topk", Some(Sort)),
    // data movement and tensor creation
    ("clone", Some(Memory)),
    ("copy", Some(Memory)),
    ("to_copy", Some(Memory)),
    ("convert_element_type", Some(Memory)),
    ("cat", Some(Memory)),
    ("stack", Some(Memory)),
    ("constant_pad_nd", Some(Memory)),
    ("index", Some(Memory)),
    ("index_select", Some(Memory)),
    ("index_put", Some(Memory)),
    ("index_add", Some(Memory)),
    ("gather", Some(Memory)),
    ("scatter", Some(Memory)),
    ("scatter_add", Some(Memory)),
    ("slice_scatter", Some(Memory)),
    ("select_scatter", Some(Memory)),
    ("full", Some(Memory)),
    ("full_like", Some(Memory)),
    ("zeros", Some(Memory)),
    ("zeros_like", Some(Memory)),
    ("ones", Some(Memory)),
    ("ones_like", Some(Memory)),
    ("fill", Some(Memory)),
    ("new_zeros", Some(Memory)),
    ("arange", Some(Memory)),
    ("iota", Some(Memory)),
    ("repeat", Some(Memory)),
    ("repeat_interleave", Some(Memory)),
    ("flip", Some(Memory)),
    ("roll", Some(Memory)),
    // embedding, rotary, quantization
    ("embedding", Some(Embedding)),
    ("embedding_dense_backward", Some(Embedding)),
    ("rotary_embedding", Some(Rotary)),
    ("apply_rotary_emb", Some(Rotary)),
    ("quant", Some(Quantization)),
    ("quantize", Some(Quantization)),
    ("dequantize", Some(Quantization)),
    // views: no work of their own
    ("view", None),
    ("unsafe_view", None),
    ("reshape", None),
    ("permute", None),
    ("transpose", None),
    ("t", None),
    ("expand", None),
    ("squeeze", None),
    ("unsqueeze", None),
    ("slice", None),
    ("select", None),
    ("as_strided", None),
    ("alias", None),
    ("detach", None),
    ("split", None),
    ("split_with_sizes", None),
    ("unbind", None),
    ("lift_fresh", None),
    // GEMM words: a pointwise/reduction kernel is not a GEMM (module documentation)
    ("mm", None),
    ("bmm", None),
    ("gemm", None),
    ("unquantized_gemm", None),
    ("rocm_unquantized_gemm", None),
    ("scaled_mm", None),
    ("convolution", None),
];

/// A fused operation Inductor lists decomposed: when the words contain `all_of` and at least
/// one of `any_of`, the kernel has component `category`, and the words in `absorbs` are taken
/// as parts of it rather than components of their own.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Composite {
    pub name: &'static str,
    pub all_of: &'static [&'static str],
    pub any_of: &'static [&'static str],
    pub absorbs: &'static [&'static str],
    pub category: Category,
}

/// Decomposed norms and softmax.
pub const COMPOSITES: &[Composite] = &[
    Composite {
        name: "RMSNorm / LayerNorm: rsqrt of a mean or variance (x * rsqrt(mean(x^2) + eps))",
        all_of: &["rsqrt"],
        any_of: &["mean", "var_mean", "var", "sum"],
        absorbs: &["mean", "var_mean", "var", "sum", "pow", "rsqrt"],
        category: Norm,
    },
    Composite {
        name: "softmax: exp(x - amax) / sum",
        all_of: &["exp", "sum"],
        any_of: &["amax", "max"],
        absorbs: &["amax", "max", "exp", "sub", "sum", "div", "log"],
        category: Softmax,
    },
];

/// Longest op name in [`OPS`], in words.
const MAX_OP_WORDS: usize = 4;

/// The kind and op words of an Inductor kernel name (lowercase), or None if `base` is not one.
/// Op words are the [`OPS`] entries found, longest match first; unknown words are dropped.
pub fn parse(base: &str) -> Option<(InductorKind, Vec<&'static str>)> {
    let (kind, rest) = match cpp_kernel(base) {
        Some(rest) => (InductorKind::Cpp, rest),
        None => {
            let rest = base.strip_prefix("triton_")?;
            let (kind_word, rest) = rest.split_once('_').unwrap_or((rest, ""));
            (InductorKind::from_word(kind_word)?, rest)
        }
    };
    let ops = rest.strip_prefix("fused").unwrap_or(rest);
    // Drop the trailing kernel index `_<n>`; unknown words are dropped too.
    let words: Vec<&str> = strip_index(ops, '_').split('_').filter(|w| !w.is_empty()).collect();
    let (found, _) = ops_in(&words, OPS, MAX_OP_WORDS);
    Some((kind, found))
}

/// Whether `base` is an old TorchInductor name (PyTorch 2.0, before 2023): `triton__` and the
/// argument signature alone (`triton__0d1d2d3`), no op words.
pub fn is_legacy_name(base: &str) -> bool {
    base.strip_prefix("triton__")
        .is_some_and(|sig| !sig.is_empty() && sig.bytes().all(|b| b.is_ascii_digit() || b == b'd' || b == b'e'))
}

/// What follows `cpp_` in a C++ kernel's name, with or without the profiler's `graph_<N>_`.
fn cpp_kernel(base: &str) -> Option<&str> {
    let name = match base.strip_prefix("graph_") {
        Some(rest) => {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            rest[digits..].strip_prefix('_').filter(|_| digits > 0)?
        }
        None => base,
    };
    name.strip_prefix("cpp_")
}

fn component_of(op: &str) -> Option<Category> {
    OPS.iter().find(|(name, _)| *name == op).and_then(|(_, c)| *c)
}

/// The components of an Inductor kernel, or None if `base` is not an Inductor kernel name.
pub fn components(base: &str) -> Option<Vec<Category>> {
    let (kind, mut ops) = parse(base)?;
    let mut components = Vec::new();
    if kind == InductorKind::Template {
        let attention = base.contains("attention");
        components.push(if attention { Attention } else { Gemm });
        // The GEMM words are the template itself, not a bias add.
        ops.retain(|op| !matches!(*op, "mm" | "addmm" | "bmm" | "baddbmm" | "convolution"));
    }
    for composite in COMPOSITES {
        let has = |w: &str| ops.contains(&w);
        if composite.all_of.iter().all(|w| has(w)) && composite.any_of.iter().any(|w| has(w)) {
            components.push(composite.category);
            ops.retain(|op| !composite.absorbs.contains(op));
        }
    }
    components.extend(ops.iter().filter_map(|op| component_of(op)));
    // A pointwise kernel reduces nothing, whatever its name's words: `triton_poi_fused_mean_…`
    // is the pointwise code around a reduction run by another kernel (a mean's division, a
    // norm's scaling by statistics already computed).
    if matches!(kind, InductorKind::Pointwise | InductorKind::Foreach) {
        for c in &mut components {
            if matches!(c, Reduction | Norm | Softmax) {
                *c = Elementwise;
            }
        }
        components.dedup();
    }
    if components.is_empty() {
        components.push(kind.default_component());
    }
    Some(components)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_words_longest_first() {
        let (kind, ops) = parse("triton_per_fused_native_layer_norm_0").unwrap();
        assert_eq!((kind, ops), (InductorKind::PersistentReduction, vec!["native_layer_norm"]));
        let (_, ops) = parse("triton_poi_fused__unsafe_view_add_3").unwrap();
        assert_eq!(ops, vec!["unsafe_view", "add"]);
        let (_, ops) = parse("triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0").unwrap();
        assert_eq!(ops, vec!["add", "bitwise_and", "bitwise_not", "bitwise_or", "ge", "lt", "mul", "sub"]);
    }

    #[test]
    fn not_inductor() {
        assert_eq!(parse("triton__0d1d2d"), None);
        assert_eq!(parse("triton_foo_fused_add_0"), None);
        assert_eq!(parse("attn_fwd"), None);
    }

    #[test]
    fn decomposed_norm_and_softmax() {
        assert_eq!(
            components("triton_red_fused_add_mean_mul_pow_rsqrt_0").unwrap(),
            vec![Norm, Elementwise, Elementwise]
        );
        assert_eq!(components("triton_per_fused__softmax_0").unwrap(), vec![Softmax]);
        assert_eq!(components("triton_per_fused_amax_div_exp_sub_sum_0").unwrap(), vec![Softmax]);
    }

    #[test]
    fn gemm_words_outside_templates() {
        assert_eq!(components("triton_poi_fused_addmm_relu_0").unwrap(), vec![Elementwise, Activation]);
        assert_eq!(components("triton_poi_fused_rocm_unquantized_gemm_0").unwrap(), vec![Elementwise]);
        assert_eq!(components("triton_poi_fused__to_copy_rocm_unquantized_gemm_1").unwrap(), vec![Memory]);
        assert_eq!(components("triton_tem_fused_addmm_relu_0").unwrap(), vec![Gemm, Activation]);
        assert_eq!(components("triton_tem_fused_mm_0").unwrap(), vec![Gemm]);
        assert_eq!(components("triton_tem_fused_flex_attention_0").unwrap(), vec![Attention]);
    }

    #[test]
    fn unknown_words_fall_back_to_the_kind() {
        assert_eq!(components("triton_red_fused_0").unwrap(), vec![Reduction]);
        assert_eq!(components("triton_poi_fused_frobnicate_1").unwrap(), vec![Elementwise]);
    }

    #[test]
    fn a_pointwise_kernel_is_never_a_reduction() {
        assert_eq!(components("triton_poi_fused_add_mean_1").unwrap(), vec![Elementwise]);
        assert_eq!(components("triton_poi_fused_native_layer_norm_2").unwrap(), vec![Elementwise]);
        assert_eq!(components("triton_poi_fused__softmax_3").unwrap(), vec![Elementwise]);
        // The same words in a reduction kernel keep their meaning.
        assert_eq!(components("triton_red_fused_add_mean_1").unwrap(), vec![Elementwise, Reduction]);
    }

    #[test]
    fn a_cpp_kernel_is_read_as_the_profiler_records_it_or_the_log_names_it() {
        // The real C++ kernels of tests/data/compiled/torch_block_cpu: a norm is a norm (a C++
        // kernel may reduce), with or without the profiler's `graph_<N>_`.
        for name in ["graph_0_cpp_fused_native_layer_norm_0", "cpp_fused_native_layer_norm_0"] {
            assert_eq!(parse(name).unwrap().0, InductorKind::Cpp, "{name}");
            assert_eq!(components(name).unwrap(), vec![Norm], "{name}");
        }
        assert_eq!(components("graph_0_cpp_fused__unsafe_view_add_3").unwrap(), vec![Elementwise]);
        assert_eq!(components("graph_7_cpp_fused_0").unwrap(), vec![Elementwise]);
        for not in ["graph_cpp_fused_add_0", "graph_x_cpp_fused_add_0", "cppfused_add_0"] {
            assert!(parse(not).is_none(), "{not}");
        }
        assert_eq!(
            crate::family::readable_name("graph_0_cpp_fused__unsafe_view_gelu_2", 80),
            "C++ (Inductor): unsafe_view, gelu"
        );
    }
}
