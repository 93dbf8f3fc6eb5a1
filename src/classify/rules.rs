//! The classifier's rules: what a rule looks at and matches ([`Scope`], [`Pattern`], [`Rule`]),
//! the GEMM epilogue words, and the table itself (`rules/table.rs` and `rules/generic.rs`: plain
//! data, in the order the rules are tried).
//!
//! Rules are tried scope by scope: every [`Scope::BaseName`] rule first (in table order, first
//! match wins), then, only if none matched or the match was a generic launcher,
//! [`Scope::Namespace`] and [`Scope::Inner`] rules. Matching on the base name first is what
//! keeps template arguments from misleading the classifier: `paged_attention_…<…,
//! Fp8KVCacheDataType…>` is decided by `paged_attention`, never by what its arguments mention.
//! Within a scope, specific rules come before general ones (`fused_add_rms_norm` before
//! `rms_norm`, `splitKreduce` (a GEMM) before `reduce`, collectives before `reduce`/`gather`).

use serde::Serialize;

use crate::category::Category;
use Category::*;

/// Which part of the kernel name a rule looks at (see [`super::name::NameParts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The function's own identifier, without return type, namespaces, template arguments and
    /// parameters.
    BaseName,
    /// The enclosing namespaces (`moe::dev::finalize`).
    Namespace,
    /// The template arguments and parameters, consulted for generic launchers
    /// (`vectorized_elementwise_kernel<…GeluCUDAKernelImpl…>`, `cutlass::Kernel2<…gemm…>`) and
    /// for names no base-name rule knows.
    Inner,
}

/// How a rule matches its text (already lowercase; patterns are lowercase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "values", rename_all = "snake_case")]
pub enum Pattern {
    /// The text equals one of these.
    Exact(&'static [&'static str]),
    /// The text starts with one of these.
    Prefix(&'static [&'static str]),
    /// The text contains one of these.
    Contains(&'static [&'static str]),
    /// The text contains every one of these.
    AllOf(&'static [&'static str]),
    /// One of the text's words (split at every character that is not a letter or digit,
    /// underscores included) equals one of these.
    Word(&'static [&'static str]),
    /// A TorchInductor kernel `triton_{poi,red,per,tem,for}_fused_<ops>_<n>`; the components come
    /// from the op words (`super::inductor::OPS`).
    Inductor,
    /// An XLA kernel named after its HLO instructions, `[loop_|input_]<ops>_fusion[_n|.n]` or
    /// `wrapped_<op>`; the components come from the opcodes (`super::xla`).
    Xla,
    /// An old TorchInductor name `triton__0d1d2d…` (only the argument signature, no op names).
    InductorLegacy,
}

impl Pattern {
    /// Whether `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        match *self {
            Pattern::Exact(values) => values.contains(&text),
            Pattern::Prefix(values) => values.iter().any(|v| text.starts_with(v)),
            Pattern::Contains(values) => values.iter().any(|v| text.contains(v)),
            Pattern::AllOf(values) => values.iter().all(|v| text.contains(v)),
            Pattern::Word(values) => words(text).any(|w| values.contains(&w)),
            Pattern::Inductor => super::inductor::parse(text).is_some(),
            Pattern::Xla => super::xla::parse(text).is_some(),
            Pattern::InductorLegacy => super::inductor::is_legacy_name(text),
        }
    }

    /// A one-line description for people: `contains "rms_norm" or "rmsnorm"`.
    pub fn describe(&self) -> String {
        let list = |values: &[&str], sep: &str| values.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(sep);
        match *self {
            Pattern::Exact(v) => format!("is {}", list(v, " or ")),
            Pattern::Prefix(v) => format!("starts with {}", list(v, " or ")),
            Pattern::Contains(v) => format!("contains {}", list(v, " or ")),
            Pattern::AllOf(v) => format!("contains {}", list(v, " and ")),
            Pattern::Word(v) => format!("has the word {}", list(v, " or ")),
            Pattern::Inductor => {
                "is triton_{poi,red,per,tem,for}_fused_<ops>_<n> or [graph_<N>_]cpp_fused_<ops>_<n>".to_string()
            }
            Pattern::InductorLegacy => "is triton__ followed by an argument signature (0d1d2d…)".to_string(),
            Pattern::Xla => "is [loop_|input_]<HLO opcodes>_fusion[_<n>|.<n>] or wrapped_<opcode>[.<n>]".to_string(),
        }
    }
}

/// The words of `text`: maximal runs of letters and digits.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// One classification rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable identifier, reported in [`super::Classification::rule`].
    pub id: &'static str,
    pub scope: Scope,
    pub pattern: Pattern,
    /// The kernel's components when this rule decides (for [`Pattern::Inductor`], the
    /// components come from the op words instead and this is empty).
    pub components: &'static [Category],
    /// A generic launcher whose real operation is a template argument: a match sends the
    /// classifier on to the namespace and inner rules, and `components` is only the fallback.
    pub launcher: bool,
    /// A GEMM family whose names spell the fused epilogue: words in [`GEMM_EPILOGUES`] add
    /// components (`nvjet_…_bias_…`, `cutlass_…gemm_relu_…`, `bmm_…_swiGlu_…`).
    pub epilogue: bool,
    /// What the rule recognises and why, for people reading the table.
    pub description: &'static str,
    /// A kernel name the rule classifies (checked by a test).
    pub example: &'static str,
}

impl Rule {
    /// A rule deciding `components` when `pattern` matches the text of `scope`.
    const fn new(
        id: &'static str,
        scope: Scope,
        pattern: Pattern,
        components: &'static [Category],
        description: &'static str,
        example: &'static str,
    ) -> Rule {
        Rule { id, scope, pattern, components, launcher: false, epilogue: false, description, example }
    }

    const fn launcher(mut self) -> Rule {
        self.launcher = true;
        self
    }

    const fn epilogue(mut self) -> Rule {
        self.epilogue = true;
        self
    }

    /// A readable summary of where and how the rule matches.
    pub fn describe_match(&self) -> String {
        let scope = match self.scope {
            Scope::BaseName => "base name",
            Scope::Namespace => "namespace",
            Scope::Inner => "template arguments/parameters",
        };
        format!("{scope} {}", self.pattern.describe())
    }
}

/// Epilogue words of GEMM kernel names and the component each adds. Tensile/hipBLASLt `Cijk_`
/// names are not read this way: their `Bias`, `SAV`, `HA` tokens say what the solution supports,
/// and the same kernel runs with the bias off.
pub const GEMM_EPILOGUES: &[(&str, Category)] = &[
    ("bias", Elementwise),
    ("biasm", Elementwise),
    ("biasn", Elementwise),
    ("relu", Activation),
    ("gelu", Activation),
    ("silu", Activation),
    ("swiglu", Activation),
    ("geglu", Activation),
    ("swish", Activation),
    ("sigmoid", Activation),
    ("tanh", Activation),
];

mod generic;
mod table;
pub use table::RULES;
