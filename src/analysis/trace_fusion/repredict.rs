//! Checking the rules against a compiler (`docs/trace-fusion.md`, "Re-prediction"): on a
//! torch.compile trace, each Inductor kernel is expanded back into its ops (its name's
//! components, each over the kernel's iteration space), the rule set is run over that unfused op
//! sequence, and an Inductor kernel counts as re-formed when one run of the rules holds exactly
//! its ops. Library kernels between them (cuBLAS/hipBLASLt GEMMs, attention, copies) are
//! barriers, as they are for Inductor, which calls them as extern kernels.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::describe::How;
use super::flow::{handoff, same_stream, streams};
use super::groups::Grouping;
use super::kind::Kind;
use super::rules::{RuleSet, Run};
use classify::category::Category;
use classify::inductor;
use trace::Trace;

/// How many Inductor kernels the rules re-form exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reprediction {
    pub rule_set: String,
    /// Inductor kernel launches whose names list op words.
    pub kernels: u64,
    pub matched: u64,
    /// `100 × matched / kernels`; `None` when there are none.
    pub matched_pct: Option<f64>,
    /// Kernels with a library kernel (or nothing) on both sides: for them only the rules within
    /// one kernel are tested, never a boundary the rules had to draw between two Inductor kernels.
    pub isolated: u64,
    /// Inductor kernel launches whose names list no op words (`triton__0d1d2d…`): not counted.
    pub not_expandable: u64,
    /// Of `kernels`, those expanded from the compile log's exact post-grad nodes (joined
    /// through Inductor's provenance) rather than from their names: the score against truth.
    #[serde(default)]
    pub exact: u64,
    /// Of `exact`, those whose name's op words give other components than their exact nodes
    /// (the name-inferred expansion would have been wrong).
    #[serde(default)]
    pub name_differs: u64,
    /// Per missed kernel name, how often and why (the first reason seen).
    pub misses: Vec<Miss>,
}

/// A kernel the rules did not re-form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Miss {
    pub kernel: String,
    pub count: u64,
    pub reason: String,
}

/// One op of the expanded sequence.
struct Op {
    instance: usize,
    kind: Kind,
}

/// What a group's kernels expand to in the op sequence.
enum Expansion {
    /// Not an Inductor kernel: a barrier.
    NotInductor,
    /// An Inductor kernel whose name lists no op words: a barrier, counted apart.
    NotExpandable,
    /// The kinds of its components, in order; whether they come from the compile log's exact
    /// nodes, and then whether its name would have given others.
    Ops(Vec<Kind>, Option<bool>),
}

/// The Triton kernel's kind word (`poi`, `red`, `per`, `tem`) of an Inductor kernel name.
fn kind_word(name: &str) -> Option<&str> {
    name.strip_prefix("triton_")?.split('_').next().filter(|w| !w.is_empty())
}

/// An Inductor kernel's components from its exact post-grad nodes (the group's parts, their
/// ops): read as a name made of those ops, so that the name's rules (composites such as a
/// norm's mean and rsqrt, a pointwise kernel reducing nothing) apply to the truth alike.
fn exact_components(name: &str, parts: &[String]) -> Option<Vec<Category>> {
    let ops: Vec<&str> = parts.iter().map(|p| p.rsplit('.').next().unwrap_or(p)).collect();
    inductor::components(&format!("triton_{}_fused_{}_0", kind_word(name)?, ops.join("_")))
}

/// The kind an Inductor kernel's component has: its copies, casts and indexing are pointwise code
/// inside the kernel, so only sorting stays out of the rules.
fn component_kind(c: Category) -> Kind {
    match c {
        Category::Gemm => Kind::Matmul,
        Category::Attention => Kind::Attention,
        Category::Norm => Kind::Norm,
        Category::Softmax => Kind::Softmax,
        Category::Reduction => Kind::Reduction,
        Category::Sort => Kind::Other,
        _ => Kind::Elementwise,
    }
}

/// The re-prediction, or `None` when the trace has no Inductor kernel.
/// The name torch.compile gives the range of one call of a compiled graph.
const COMPILED_CALL: &str = "Torch-Compiled Region: ";

/// Per instance, the call of a compiled graph its launching op ran in (an index among the
/// trace's `Torch-Compiled Region` ranges), where it ran in one. Inductor compiles one call at
/// a time, so two kernels of two calls are never one of its kernels, however adjacent.
pub(crate) fn compiled_calls(trace: &Trace, g: &Grouping) -> Vec<Option<usize>> {
    let mut by_tid: FxHashMap<i64, Vec<(f64, f64, usize)>> = FxHashMap::default();
    for (i, op) in trace.cpu_ops.iter().enumerate() {
        if trace.name(op.name).starts_with(COMPILED_CALL) {
            by_tid.entry(op.tid).or_default().push((op.ts, op.ts + op.dur, i));
        }
    }
    if by_tid.is_empty() {
        return vec![None; g.instances.len()];
    }
    for ranges in by_tid.values_mut() {
        ranges.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    g.instances
        .iter()
        .map(|inst| {
            let op = &trace.cpu_ops[inst.op?];
            let ranges = by_tid.get(&op.tid)?;
            let at = ranges.partition_point(|r| r.0 <= op.ts);
            ranges[..at].last().filter(|r| op.ts <= r.1).map(|r| r.2)
        })
        .collect()
}

pub(crate) fn repredict(g: &Grouping, rules: &RuleSet, calls: &[Option<usize>]) -> Option<Reprediction> {
    // An Inductor kernel is known by its launch op (`triton_…`, recent PyTorch) or its own name;
    // XLA's Triton fusions (`triton_softmax_8`) bear the prefix too, but their HLO says so.
    let inductor_name = |gi: usize| -> Option<String> {
        let grp = &g.groups[gi];
        if grp.how == How::Hlo {
            return None;
        }
        [grp.launched_by.as_deref(), Some(grp.kernel.as_str())]
            .into_iter()
            .flatten()
            .find(|n| n.starts_with("triton_") || (grp.how == How::KernelName && n.starts_with("triton")))
            .map(str::to_ascii_lowercase)
    };
    // Worked out once per group, not per launch: a group's kernels share its name and launch
    // op, and parsing the name was most of the re-prediction's time on a long trace.
    // A kernel joined to the compile log expands into its exact nodes' components; the others
    // into their names'.
    let expansions: Vec<Expansion> = (0..g.groups.len())
        .map(|gi| match inductor_name(gi) {
            None => Expansion::NotInductor,
            Some(op_name) => {
                let components = inductor::components(&op_name);
                let has_words = inductor::parse(&op_name).is_some_and(|(_, w)| !w.is_empty());
                let named = components.filter(|_| has_words);
                let grp = &g.groups[gi];
                let exact = (grp.how == How::Inductor).then(|| exact_components(&op_name, &grp.parts)).flatten();
                match (exact, named) {
                    (Some(exact), named) => {
                        let differs = named.as_ref() != Some(&exact);
                        Expansion::Ops(exact.into_iter().map(component_kind).collect(), Some(differs))
                    }
                    (None, Some(named)) => Expansion::Ops(named.into_iter().map(component_kind).collect(), None),
                    (None, None) => Expansion::NotExpandable,
                }
            }
        })
        .collect();
    let mut kernels = 0u64;
    let (mut exact, mut name_differs) = (0u64, 0u64);
    let mut not_expandable = 0u64;
    let mut matched = 0u64;
    let mut isolated = 0u64;
    let mut misses: FxHashMap<&str, (u64, String)> = FxHashMap::default();
    let mut any = false;
    for stream in streams(&g.instances) {
        // Expand: a barrier is `None`.
        let mut ops: Vec<Option<Op>> = Vec::new();
        let mut kernel_ops: Vec<(usize, usize, usize)> = Vec::new(); // (instance, first op, last op)
        for &i in &stream {
            let kinds = match &expansions[g.instances[i].group] {
                Expansion::NotInductor => {
                    ops.push(None);
                    continue;
                }
                Expansion::NotExpandable => {
                    any = true;
                    not_expandable += 1;
                    ops.push(None);
                    continue;
                }
                Expansion::Ops(kinds, from_log) => {
                    exact += u64::from(from_log.is_some());
                    name_differs += u64::from(*from_log == Some(true));
                    kinds
                }
            };
            any = true;
            kernels += 1;
            let first = ops.len();
            ops.extend(kinds.iter().map(|&kind| Some(Op { instance: i, kind })));
            kernel_ops.push((i, first, ops.len() - 1));
        }
        // The rules' runs over the op sequence, as (first op, last op).
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut cur: Option<(usize, Run)> = None;
        for (at, op) in ops.iter().enumerate() {
            let Some(op) = op else {
                if let Some((start, _)) = cur.take() {
                    runs.push((start, at - 1));
                }
                continue;
            };
            let space = g.flow[g.instances[op.instance].group].space;
            if let Some((start, run)) = cur.as_mut() {
                let prev = ops[at - 1].as_ref().expect("a run's ops are not barriers");
                let same_kernel = prev.instance == op.instance;
                let connected = same_kernel || {
                    let (a, b) = (&g.instances[prev.instance], &g.instances[op.instance]);
                    let call = |i: usize| calls.get(i).copied().flatten();
                    let one_call = match (call(prev.instance), call(op.instance)) {
                        (Some(x), Some(y)) => x == y,
                        _ => true,
                    };
                    one_call && same_stream(a, b) && handoff(g, a, b).0.is_some()
                };
                match rules.joins_in(run, op.kind, space, same_kernel).filter(|_| connected) {
                    Some(rule) => {
                        run.kinds.push(op.kind);
                        run.closed = rule.closes;
                        continue;
                    }
                    None => {
                        runs.push((*start, at - 1));
                    }
                }
            }
            cur = Some((at, Run { kinds: vec![op.kind], space, closed: false }));
        }
        if let Some((start, _)) = cur.take() {
            runs.push((start, ops.len() - 1));
        }
        let exact: rustc_hash::FxHashSet<(usize, usize)> = runs.iter().copied().collect();
        for (inst, first, last) in kernel_ops {
            let barrier_before = first == 0 || ops[first - 1].is_none();
            let barrier_after = last + 1 == ops.len() || ops[last + 1].is_none();
            isolated += u64::from(barrier_before && barrier_after);
            if exact.contains(&(first, last)) {
                matched += 1;
                continue;
            }
            // The reason is worked out at a name's first miss only (it is the one kept).
            let name = g.groups[g.instances[inst].group].kernel.as_str();
            let e = misses.entry(name).or_insert_with(|| (0, miss_reason(&runs, first, last, &ops, g)));
            e.0 += 1;
        }
    }
    if !any {
        return None;
    }
    let mut misses: Vec<Miss> = misses
        .into_iter()
        .map(|(kernel, (count, reason))| Miss { kernel: kernel.to_string(), count, reason })
        .collect();
    misses.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kernel.cmp(&b.kernel)));
    Some(Reprediction {
        rule_set: rules.name.clone(),
        kernels,
        matched,
        isolated,
        matched_pct: (kernels > 0).then(|| crate::summary::round3(100.0 * matched as f64 / kernels as f64)),
        not_expandable,
        exact,
        name_differs,
        misses,
    })
}

/// Why the runs do not hold exactly ops `first..=last`.
fn miss_reason(runs: &[(usize, usize)], first: usize, last: usize, ops: &[Option<Op>], g: &Grouping) -> String {
    let kind = |at: usize| ops[at].as_ref().map_or("?", |o| o.kind.id());
    let name = |at: usize| {
        ops[at].as_ref().map_or_else(String::new, |o| {
            classify::name::short_name(&g.groups[g.instances[o.instance].group].kernel, 50)
        })
    };
    let Some(&(start, end)) = runs.iter().find(|(s, e)| *s <= first && first <= *e) else {
        return "the rules start no run at its first op".to_string();
    };
    if start < first {
        format!(
            "the rules fuse it with the kernel before, {} ({} into {})",
            name(start),
            a(kind(first - 1)),
            a(kind(first))
        )
    } else if end < last {
        format!("the rules end the run inside it: {} may not follow {}", a(kind(end + 1)), a(kind(end)))
    } else {
        format!(
            "the rules fuse it with the kernel after, {} ({} into {})",
            name(last + 1),
            a(kind(last)),
            a(kind(last + 1))
        )
    }
}

/// `a norm`, `an elementwise`.
fn a(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {word}")
}
