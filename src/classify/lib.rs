//! Kernel classification: kernel name → category and, for fused kernels, components.
//!
//! The rules are data ([`rules()`], shown to users by the web app). A name is split into its
//! base name, namespaces and template arguments/parameters ([`name::NameParts`]); base-name
//! rules decide first, so a template argument that mentions another kind of kernel
//! (`Fp8KVCacheDataType` in a paged-attention kernel) cannot mislead the classifier. Only generic
//! launchers (`vectorized_elementwise_kernel`, `cutlass::Kernel2`) and names no base rule knows
//! are looked at further. Matching is case-insensitive.

pub mod category;
pub mod family;
pub mod inductor;
pub mod name;
pub mod rules;
pub mod xla;

use serde::{Deserialize, Serialize};

use category::Category;
use name::NameParts;
pub use rules::{Pattern, Rule, Scope, GEMM_EPILOGUES};

/// The category of one kernel and, for a kernel that fuses several operations, the categories
/// of its components (a single-operation kernel has one component: its category).
///
/// `category` is always the heaviest of `components` ([`Category::heaviest`]); `components` is
/// never empty, has no duplicates and is in [`Classification::canonical_order`]:
/// `["elementwise", "norm"]`, `["activation", "elementwise"]`, `["gemm", "activation"]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub category: Category,
    pub components: Vec<Category>,
    /// The id of the rule that decided ([`Rule::id`]), or [`HLO_RULE`] where the compiler's
    /// record of what the kernel ran decided ([`classify_compiled`]); None when no rule matched
    /// (`other`).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'static str>,
}

impl Classification {
    /// A kernel that fuses two or more operations.
    pub fn is_fused(&self) -> bool {
        self.components.len() > 1
    }

    /// Puts components in the one order every classification uses, so that two platforms'
    /// kernels can be matched by their component lists: a GEMM, attention or MoE core first
    /// (what it fuses is its epilogue: `[gemm, activation]`), then the rest by id
    /// (`[elementwise, norm]`, `[activation, elementwise]`); no duplicates.
    pub fn canonical_order(components: &mut Vec<Category>) {
        let is_core = |c: &Category| matches!(c, Category::Gemm | Category::Attention | Category::Moe);
        components.sort_by_key(|c| (!is_core(c), c.id()));
        components.dedup();
    }

    /// Builds a classification from any list of components: in canonical order, the category
    /// the heaviest; an empty list means `other`.
    fn from_components(mut components: Vec<Category>, rule: Option<&'static str>) -> Classification {
        Self::canonical_order(&mut components);
        if components.is_empty() {
            components.push(Category::Other);
        }
        Classification { category: Category::heaviest(&components), components, rule }
    }
}

/// The rule table, in the order rules are tried within each scope.
pub fn rules() -> &'static [Rule] {
    rules::RULES
}

/// Classifies a kernel by its name (demangled, plain or Itanium-mangled).
pub fn classify(name: &str) -> Classification {
    let parts = NameParts::parse(name);
    let mut launcher: Option<&'static Rule> = None;
    for rule in rules().iter().filter(|r| r.scope == Scope::BaseName) {
        if let Some(components) = apply(rule, &parts.base) {
            if !rule.launcher {
                return Classification::from_components(components, Some(rule.id));
            }
            launcher = Some(rule);
            break;
        }
    }
    let further = [(Scope::Namespace, &parts.namespace), (Scope::Inner, &parts.inner)];
    for (scope, text) in further {
        for rule in rules().iter().filter(|r| r.scope == scope) {
            if let Some(components) = apply(rule, text) {
                return Classification::from_components(components, Some(rule.id));
            }
        }
    }
    match launcher {
        Some(rule) => Classification::from_components(rule.components.to_vec(), Some(rule.id)),
        None => Classification::from_components(vec![Category::Other], None),
    }
}

/// What [`Classification::rule`] says of a kernel classified from the HLO instructions it ran.
pub const HLO_RULE: &str = "xla-hlo";

/// A kernel classified from the opcodes of the HLO instructions it ran ([`xla::of_opcodes`]),
/// where the compiler recorded them: for a name the rules leave `other`.
pub fn classify_compiled<'a>(opcodes: impl IntoIterator<Item = &'a str>) -> Option<Classification> {
    xla::of_opcodes(opcodes).map(|c| Classification::from_components(c, Some(HLO_RULE)))
}

/// The components `rule` gives `text`, or None when it does not match.
fn apply(rule: &Rule, text: &str) -> Option<Vec<Category>> {
    if rule.pattern == Pattern::Inductor {
        return inductor::components(text);
    }
    if rule.pattern == Pattern::Xla {
        return xla::components(text);
    }
    if !rule.pattern.matches(text) {
        return None;
    }
    let mut components = rule.components.to_vec();
    if rule.epilogue {
        let epilogue =
            rules::words(text).filter_map(|w| GEMM_EPILOGUES.iter().find(|(word, _)| *word == w).map(|&(_, c)| c));
        components.extend(epilogue);
    }
    Some(components)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Category::*;

    fn check(name: &str, category: Category, components: &[Category]) {
        let got = classify(name);
        assert_eq!((got.category, got.components.as_slice()), (category, components), "{name} (rule {:?})", got.rule);
    }

    #[test]
    fn every_rule_example_is_classified_by_its_rule() {
        let mut wrong = Vec::new();
        for rule in rules() {
            if rule.launcher {
                // A launcher's example is decided by what it launches; the launcher must match.
                if !rule.pattern.matches(&NameParts::parse(rule.example).base) {
                    wrong.push(format!("launcher {} does not match its example", rule.id));
                }
                continue;
            }
            let got = classify(rule.example);
            if got.rule != Some(rule.id) {
                wrong.push(format!("example of {} went to {:?}: {}", rule.id, got.rule, rule.example));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn rule_ids_are_unique_and_patterns_lowercase() {
        let mut ids: Vec<_> = rules().iter().map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), rules().len());
        for rule in rules() {
            let values = match rule.pattern {
                Pattern::Exact(v)
                | Pattern::Prefix(v)
                | Pattern::Contains(v)
                | Pattern::AllOf(v)
                | Pattern::Word(v) => v,
                Pattern::Inductor | Pattern::InductorLegacy | Pattern::Xla => &[],
            };
            for v in values {
                assert_eq!(*v, v.to_ascii_lowercase(), "rule {} pattern {v} would never match", rule.id);
                if let Pattern::Word(_) = rule.pattern {
                    assert!(
                        v.chars().all(char::is_alphanumeric),
                        "rule {}: word {v} can never be a whole word",
                        rule.id
                    );
                }
            }
        }
    }

    #[test]
    fn sage_attention_is_attention_and_its_quantizer_quantization() {
        check("void sage_fwd_kernel<128, 64, 64, 4, __nv_bfloat16>(QkvParams)", Attention, &[Attention]);
        check(
            "void sage_quant_kernel<__nv_bfloat16, 64>(__nv_bfloat16 const*, signed char*)",
            Quantization,
            &[Quantization],
        );
    }

    #[test]
    fn case_insensitive() {
        check("RMS_NORM_KERNEL", Norm, &[Norm]);
        check("NVJET_TST_64X8_V_BZ_TNT", Gemm, &[Gemm]);
    }

    #[test]
    fn gemm_epilogues_add_components() {
        check("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", Gemm, &[Gemm, Elementwise]);
        check(
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
            Gemm,
            &[Gemm, Activation],
        );
        // Tensile's Bias token is a capability, not an epilogue.
        check("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1", Gemm, &[Gemm]);
    }

    #[test]
    fn launchers_fall_back_to_their_own_kind() {
        check("void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<float>, at::detail::Array<char*, 2>)", Elementwise, &[Elementwise]);
        check("void cutlass::Kernel<Unknown>(Unknown::Params)", Other, &[Other]);
        assert_eq!(classify("void cutlass::Kernel<Unknown>(Unknown::Params)").rule, Some("template-launcher"));
    }

    #[test]
    fn unknown_names_are_other_without_rule() {
        let got = classify(
            "void (anonymous namespace)::resolve_future_token_ids_kernel<long>(long*, long const*, unsigned long)",
        );
        assert_eq!(got, Classification { category: Other, components: vec![Other], rule: None });
        assert!(!got.is_fused());
        assert_eq!(classify("").category, Other);
    }

    #[test]
    fn serializes_rule_id_and_table() {
        let json = serde_json::to_value(classify("rms_norm_kernel")).unwrap();
        assert_eq!(json, serde_json::json!({"category": "norm", "components": ["norm"], "rule": "norm"}));
        let back: Classification = serde_json::from_value(json).unwrap();
        assert_eq!((back.category, back.rule), (Norm, None));
        let table = serde_json::to_value(rules()).unwrap();
        assert_eq!(table[0]["id"], "inductor-fused");
        assert_eq!(table.as_array().unwrap().len(), rules().len());
        assert!(rules().iter().all(|r| !r.describe_match().is_empty() && !r.description.is_empty()));
    }
}
