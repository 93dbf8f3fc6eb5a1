//! Rule sets for the what-if: which consecutive kernels a compiler could make one kernel.
//!
//! A rule set is data ([`RuleSet`]), so the three built-in sets and a user's JSON file are read
//! and applied the same way. A run of kernels grows one kernel at a time: the next kernel joins
//! when some [`JoinRule`] allows it after the run's last kernel and given what the run already
//! holds; a run becomes an opportunity when it holds the kinds `require` lists, in order. The
//! rules and the file format are in `docs/trace-fusion.md`, "Rule sets".

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::kind::Kind;
use limits::{FUSION_RULES, FUSION_RULE_FILE_BYTES, FUSION_RUN_KERNELS};

/// When the next kernel may join a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinRule {
    /// The next kernel's kind.
    pub next: Kind,
    /// The kinds the run's last kernel may have; empty: any.
    #[serde(default)]
    pub after: Vec<Kind>,
    /// The run must already hold each of these kinds.
    #[serde(default)]
    pub if_run_has: Vec<Kind>,
    /// The run must hold none of these kinds.
    #[serde(default)]
    pub unless_run_has: Vec<Kind>,
    /// The next kernel's iteration space must equal the run's (its elements: the largest input,
    /// a product's output).
    #[serde(default)]
    pub same_size: bool,
    /// After this join the run takes no more kernels.
    #[serde(default)]
    pub closes: bool,
}

/// A named rule set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSet {
    pub name: String,
    /// The kinds a run may start with; empty: any but `other`.
    #[serde(default)]
    pub start: Vec<Kind>,
    pub joins: Vec<JoinRule>,
    /// Kinds an opportunity must hold, in this order (not necessarily adjacent); empty: any run
    /// of two or more kernels.
    #[serde(default)]
    pub require: Vec<Kind>,
    /// When a reduction may not join a run that starts with a product, give the product's
    /// epilogue to the reduction instead (the product stays alone), if the rules allow that run.
    #[serde(default)]
    pub prefer_reductions: bool,
}

/// Which rule set to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuiltIn {
    Project,
    Inductor,
    Flash,
}

impl BuiltIn {
    pub const ALL: [BuiltIn; 3] = [BuiltIn::Project, BuiltIn::Inductor, BuiltIn::Flash];

    pub fn id(self) -> &'static str {
        match self {
            BuiltIn::Project => "project",
            BuiltIn::Inductor => "inductor",
            BuiltIn::Flash => "flash",
        }
    }

    pub fn from_id(id: &str) -> Option<BuiltIn> {
        BuiltIn::ALL.into_iter().find(|b| b.id() == id)
    }

    /// The rule set.
    pub fn rules(self) -> RuleSet {
        match self {
            BuiltIn::Project => project(),
            BuiltIn::Inductor => inductor(),
            BuiltIn::Flash => flash(),
        }
    }
}

fn join(next: Kind) -> JoinRule {
    JoinRule {
        next,
        after: Vec::new(),
        if_run_has: Vec::new(),
        unless_run_has: Vec::new(),
        same_size: false,
        closes: false,
    }
}

use Kind::*;

/// `docs/fusion-rules.md` on a kernel sequence: a product starts a run; pointwise work joins
/// unless the run holds a reduction (a reduction closes its group); a reduction joins only a run
/// with neither a product nor a reduction. Softmax and norms are reductions here.
fn project() -> RuleSet {
    let reductions = vec![Softmax, Norm, Reduction];
    let mut products_and_reductions = reductions.clone();
    products_and_reductions.extend([Matmul, Attention]);
    RuleSet {
        name: "project".to_string(),
        start: Vec::new(),
        joins: vec![
            JoinRule { unless_run_has: reductions.clone(), ..join(Elementwise) },
            JoinRule { unless_run_has: products_and_reductions.clone(), ..join(Softmax) },
            JoinRule { unless_run_has: products_and_reductions.clone(), ..join(Norm) },
            JoinRule { unless_run_has: products_and_reductions, ..join(Reduction) },
        ],
        require: Vec::new(),
        prefer_reductions: false,
    }
}

/// Inductor-like: pointwise work and reductions over the same iteration space fuse (a norm or
/// softmax with the pointwise work around it); a GEMM or convolution takes a pointwise epilogue
/// of its output's size; nothing fuses across a reduction's output of another size, two
/// reductions do not share a kernel, and attention and products never join a run. Pointwise
/// work between a GEMM and a reduction goes to the reduction (`prefer_reductions`), as Inductor
/// fuses it into the reduction's kernel and calls library GEMMs without epilogues.
fn inductor() -> RuleSet {
    let reductions = vec![Softmax, Norm, Reduction];
    let mut no_second = reductions.clone();
    no_second.extend([Matmul, Attention]);
    RuleSet {
        name: "inductor".to_string(),
        start: vec![Matmul, Softmax, Norm, Reduction, Elementwise],
        joins: vec![
            JoinRule { same_size: true, ..join(Elementwise) },
            JoinRule { same_size: true, unless_run_has: no_second.clone(), ..join(Softmax) },
            JoinRule { same_size: true, unless_run_has: no_second.clone(), ..join(Norm) },
            JoinRule { same_size: true, unless_run_has: no_second, ..join(Reduction) },
        ],
        require: Vec::new(),
        prefer_reductions: true,
    }
}

/// FlashAttention: a product, a softmax and a second product (with the pointwise scaling,
/// masking and dropout between them) become one attention kernel; nothing else fuses.
fn flash() -> RuleSet {
    RuleSet {
        name: "flash".to_string(),
        start: vec![Matmul],
        joins: vec![
            JoinRule { after: vec![Matmul, Elementwise], unless_run_has: vec![Softmax], ..join(Elementwise) },
            JoinRule { after: vec![Softmax, Elementwise], if_run_has: vec![Softmax], ..join(Elementwise) },
            JoinRule { after: vec![Matmul, Elementwise], unless_run_has: vec![Softmax], ..join(Softmax) },
            JoinRule { after: vec![Softmax, Elementwise], if_run_has: vec![Softmax], closes: true, ..join(Matmul) },
        ],
        require: vec![Matmul, Softmax, Matmul],
        prefer_reductions: false,
    }
}

/// A rule file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error("rule file {file}: larger than the limit of {limit} bytes")]
    TooLarge { file: String, limit: usize },
    #[error("rule file {file}: {problem}")]
    Json { file: String, problem: String },
    #[error("rule file {file}: the rule set has no name")]
    NoName { file: String },
    #[error("rule file {file}: {count} join rules, more than the limit of {limit}")]
    TooManyRules { file: String, count: usize, limit: usize },
    #[error("rule file {file}: join rule {index} lets `other` kernels join (copies and unknown kernels never fuse)")]
    JoinsOther { file: String, index: usize },
    #[error("unknown rule set \"{0}\" (expected project, inductor, flash or a JSON rule file)")]
    Unknown(String),
}

/// Reads a user's rule file (JSON, `docs/trace-fusion.md`); `file` names it in errors.
pub fn parse_rules(text: &str, file: &str) -> Result<RuleSet, RuleError> {
    let file = file.to_string();
    if text.len() > FUSION_RULE_FILE_BYTES {
        return Err(RuleError::TooLarge { file, limit: FUSION_RULE_FILE_BYTES });
    }
    let rules: RuleSet =
        serde_json::from_str(text).map_err(|e| RuleError::Json { file: file.clone(), problem: e.to_string() })?;
    if rules.name.trim().is_empty() {
        return Err(RuleError::NoName { file });
    }
    if rules.joins.len() > FUSION_RULES {
        return Err(RuleError::TooManyRules { file, count: rules.joins.len(), limit: FUSION_RULES });
    }
    if let Some(index) = rules.joins.iter().position(|j| j.next == Other) {
        return Err(RuleError::JoinsOther { file, index });
    }
    Ok(rules)
}

/// What a run has become while it grows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub kinds: Vec<Kind>,
    pub space: Option<u64>,
    pub closed: bool,
}

impl RuleSet {
    /// Whether a run may start with a kernel of this kind.
    pub(crate) fn starts(&self, kind: Kind) -> bool {
        kind != Other && (self.start.is_empty() || self.start.contains(&kind))
    }

    /// Whether the next kernel (its kind and iteration space) may join the run.
    pub(crate) fn joins(&self, run: &Run, next: Kind, space: Option<u64>) -> Option<&JoinRule> {
        self.joins_in(run, next, space, false)
    }

    /// [`Self::joins`], where `same_space` says the next op is known to iterate over the run's
    /// space whatever the sizes say (the ops of one kernel, in the re-prediction, whose launch
    /// may have recorded no sizes).
    pub(crate) fn joins_in(&self, run: &Run, next: Kind, space: Option<u64>, same_space: bool) -> Option<&JoinRule> {
        if run.closed || next == Other || run.kinds.len() >= FUSION_RUN_KERNELS {
            return None;
        }
        let last = *run.kinds.last()?;
        self.joins.iter().find(|r| {
            r.next == next
                && (r.after.is_empty() || r.after.contains(&last))
                && r.if_run_has.iter().all(|k| run.kinds.contains(k))
                && !r.unless_run_has.iter().any(|k| run.kinds.contains(k))
                && (!r.same_size || same_space || (run.space.is_some() && run.space == space))
        })
    }

    /// Whether a finished run is an opportunity.
    pub(crate) fn accepts(&self, kinds: &[Kind]) -> bool {
        if kinds.len() < 2 {
            return false;
        }
        let mut it = kinds.iter();
        self.require.iter().all(|want| it.any(|k| k == want))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kinds: &[Kind], space: Option<u64>) -> Run {
        Run { kinds: kinds.to_vec(), space, closed: false }
    }

    #[test]
    fn project_rules_close_a_group_at_a_reduction() {
        let p = BuiltIn::Project.rules();
        assert!(p.joins(&run(&[Matmul], None), Elementwise, None).is_some());
        assert!(p.joins(&run(&[Matmul], None), Norm, None).is_none());
        assert!(p.joins(&run(&[Elementwise], None), Norm, None).is_some());
        assert!(p.joins(&run(&[Elementwise, Norm], None), Elementwise, None).is_none());
        assert!(p.joins(&run(&[Elementwise], None), Matmul, None).is_none());
    }

    #[test]
    fn inductor_rules_need_the_same_iteration_space() {
        let i = BuiltIn::Inductor.rules();
        assert!(i.joins(&run(&[Matmul], Some(64)), Elementwise, Some(64)).is_some());
        assert!(i.joins(&run(&[Matmul], Some(64)), Elementwise, Some(32)).is_none());
        assert!(i.joins(&run(&[Elementwise], Some(64)), Norm, Some(64)).is_some());
        assert!(i.joins(&run(&[Norm], Some(64)), Softmax, Some(64)).is_none());
        assert!(i.joins(&run(&[Elementwise], None), Elementwise, None).is_none());
    }

    #[test]
    fn flash_rules_want_product_softmax_product() {
        let f = BuiltIn::Flash.rules();
        assert!(f.joins(&run(&[Matmul, Elementwise], None), Softmax, None).is_some());
        assert!(f.joins(&run(&[Matmul, Elementwise, Softmax], None), Matmul, None).is_some());
        assert!(f.joins(&run(&[Matmul], None), Matmul, None).is_none());
        assert!(f.accepts(&[Matmul, Elementwise, Softmax, Elementwise, Matmul]));
        assert!(!f.accepts(&[Matmul, Elementwise]));
        assert!(!f.starts(Elementwise));
    }

    #[test]
    fn rule_files_are_checked() {
        let ok =
            r#"{"name": "epilogues", "start": ["matmul"], "joins": [{"next": "elementwise", "after": ["matmul"]}]}"#;
        let r = parse_rules(ok, "r.json").unwrap();
        assert_eq!(r.joins[0].after, vec![Matmul]);
        let bad_kind = r#"{"name": "x", "joins": [{"next": "gemm"}]}"#;
        let e = parse_rules(bad_kind, "r.json").unwrap_err().to_string();
        assert!(e.starts_with("rule file r.json: unknown variant `gemm`"), "{e}");
        let other = r#"{"name": "x", "joins": [{"next": "elementwise"}, {"next": "other"}]}"#;
        assert_eq!(
            parse_rules(other, "r.json").unwrap_err(),
            RuleError::JoinsOther { file: "r.json".into(), index: 1 }
        );
        let unknown_key = r#"{"name": "x", "joins": [], "fuse_everything": true}"#;
        assert!(parse_rules(unknown_key, "r.json").unwrap_err().to_string().contains("unknown field"));
        assert_eq!(
            parse_rules(r#"{"name": " ", "joins": []}"#, "f").unwrap_err(),
            RuleError::NoName { file: "f".into() }
        );
    }

    #[test]
    fn built_in_sets_round_trip_as_rule_files() {
        for b in BuiltIn::ALL {
            let text = serde_json::to_string(&b.rules()).unwrap();
            assert_eq!(parse_rules(&text, "x").unwrap(), b.rules());
        }
    }
}
