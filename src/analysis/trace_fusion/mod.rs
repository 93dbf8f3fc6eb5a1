//! Fusion in real traces (`docs/trace-fusion.md`): every GPU kernel of a Kineto trace as a
//! fusion group with its ops and bytes, the fusion a rule set would still add (the
//! opportunities), and, on a torch.compile trace, how many of Inductor's kernels the rules
//! re-form (the re-prediction).
//!
//! [`analyse`] is the one entry point: a classified trace and [`FusionOptions`] in, a
//! [`TraceFusion`] out (serde-serialisable as the `fusion` key of `fusionscope trace --json`).
//! Browser- and terminal-free, so the page runs the same code.
//!
//! - [`groups`]: a group per (kernel, launching op, recorded shapes), its fused and unfused
//!   bytes per call and how they were known; `compiled`: a group as the compiler recorded it
//!   (XLA's HLO);
//! - [`kind`]: what the rules see a kernel as, and the parts of library-fused ops;
//! - [`flow`]: producer→consumer edges inferred from order and sizes;
//! - [`rules`]: the built-in rule sets and the user rule file;
//! - [`serving_ops`], [`vllm_ops`]: the byte formulas of serving engines' fused ops;
//! - [`collectives`]: a collective kernel's bytes from its c10d op;
//! - [`whatif`]: the opportunities; [`repredict`]: the check against Inductor.

pub mod call_bytes;
pub mod collectives;
mod compiled;
pub mod dag;
pub mod describe;
pub mod flow;
pub mod groups;
pub mod kind;
pub mod op_times;
pub mod repredict;
pub mod rules;
pub mod serving_ops;
pub mod unknown;
pub mod vllm_calls;
pub mod vllm_ops;
pub mod whatif;

use serde::{Deserialize, Serialize};

/// The totals' GPU time is the output's one definition.
pub use crate::summary::GPU_TIME_DEFINITION;
pub use describe::{GroupOp, How};
pub use groups::KernelGroup;
pub use kind::Kind;
pub use op_times::OpTime;
pub use repredict::{Miss, Reprediction};
pub use rules::{parse_rules, BuiltIn, JoinRule, RuleError, RuleSet};
pub use unknown::{Cause, Unknown};
pub use whatif::{kinds_text, Measured, Opportunity, PerStep};

use crate::exec_trace::{link, ExecTrace, ExecTraceSummary};
use crate::structure::Structure;
use crate::summary::{gpu_time_us, round3, ClassifiedTrace};
use calib::CalibrationProfile;
use hardware::Chip;
use trace::Processor;

/// The GPU time whose bytes are unknown, µs, by whose gap it is ([`Cause`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct UnknownTime {
    pub not_recorded: f64,
    pub no_model: f64,
    pub bad_input: f64,
}

/// What the analysis is run with.
#[derive(Debug, Clone)]
pub struct FusionOptions<'a> {
    pub rules: RuleSet,
    /// The chip whose bandwidth turns saved bytes into time; `None`: bytes only.
    pub chip: Option<&'a Chip>,
    pub calibration: Option<&'a CalibrationProfile>,
    /// An execution trace of the same run, its file name for the output.
    pub exec_trace: Option<(&'a ExecTrace, &'a str)>,
    /// The trace's steps and layers (the summary's `structure`), for per-step figures.
    pub structure: Option<&'a Structure>,
}

impl FusionOptions<'_> {
    /// A rule set and nothing else: bytes only (no chip), no calibration, no execution trace,
    /// no per-step figures.
    pub fn rules_only(rules: RuleSet) -> Self {
        FusionOptions { rules, chip: None, calibration: None, exec_trace: None, structure: None }
    }
}

/// Whole-trace figures of the groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusionTotals {
    /// What ran the kernels: a GPU, or the CPU of a CPU run (then only the words change:
    /// "CPU events", "of CPU time"). Said in the JSON only for a CPU run.
    #[serde(default, skip_serializing_if = "Processor::is_gpu")]
    pub processor: Processor,
    /// GPU events (kernels, memcpys, memsets).
    pub events: u64,
    pub groups: u64,
    /// The sum of every kernel's, memcpy's and memset's duration, µs (`gpu_time_definition`).
    pub gpu_time_us: f64,
    pub gpu_time_definition: String,
    /// Its two parts: kernels alone (the platform line's `kernel_time_us`) and copies, µs.
    pub kernel_time_us: f64,
    pub copy_time_us: f64,
    /// Time of the events whose bytes are known (their group's own, or their op's counted at
    /// another kernel of the call), µs, and its share.
    pub bytes_known_us: f64,
    pub bytes_known_pct: f64,
    /// The rest, µs, by whose gap it is: not recorded by the trace, no model in fusionscope,
    /// bad input. Known + these = the GPU time.
    pub unknown_us: UnknownTime,
    /// The time whose bytes the trace records what they need (the GPU time less `not
    /// recorded`), µs, and the share of it whose bytes are known: the coverage where the trace
    /// could tell, which only missing models and bad input keep under 100 %.
    pub shapes_recorded_us: f64,
    pub bytes_known_of_recorded_pct: f64,
    /// Over the events with known bytes: bytes moved as run, and as each part its own kernel.
    pub fused_bytes: u64,
    pub unfused_bytes: u64,
    /// Bytes the trace's own fusion saved (`unfused_bytes − fused_bytes`).
    pub saved_by_fusion_bytes: u64,
    /// Opportunities' summed saved bytes and time (time only with a chip).
    pub opportunity_bytes: u64,
    pub opportunity_us: Option<f64>,
    /// How many opportunities those sums cover: all of them, where a share link lists only
    /// those that save most (absent from links made before it was kept).
    #[serde(default)]
    pub opportunities: u64,
}

/// The fusion analysis of one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFusion {
    /// Longest total time first.
    pub groups: Vec<KernelGroup>,
    pub totals: FusionTotals,
    pub rule_set: String,
    /// The chip whose bandwidth the saved times use.
    pub chip: Option<String>,
    /// Longest saved time first.
    pub opportunities: Vec<Opportunity>,
    /// On traces with Inductor kernels: the Inductor-like set's re-prediction of them.
    pub reprediction: Option<Reprediction>,
    /// With an execution trace: how many of its ops linked to the trace's CPU ops.
    pub exec_trace: Option<ExecTraceSummary>,
    /// Ops whose own GPU time and whole-subtree time differ, longest subtree first.
    pub op_times: Vec<OpTime>,
}

impl TraceFusion {
    /// Measures the opportunities against another chip (the user's pick on the page): only the
    /// saved times, their order and total and the chip change, so nothing is read again.
    pub fn with_chip(&mut self, chip: &Chip) {
        for o in &mut self.opportunities {
            let total = o.saved_bytes_per_call.saturating_mul(o.calls);
            (o.saved_us, o.capped) = whatif::saved_time(total, o.kernels_time_us, Some(chip));
            if let (Some(p), Some(saved)) = (&mut o.per_step, o.saved_us) {
                p.saved_us_per_step = (o.calls > 0).then(|| round3(saved * p.calls_per_step / o.calls as f64));
            }
        }
        // Stable: equal savings keep the order the analysis found them in.
        self.opportunities.sort_by(|a, b| {
            let bytes = |o: &Opportunity| o.saved_bytes_per_call.saturating_mul(o.calls);
            b.saved_us.unwrap_or(0.0).total_cmp(&a.saved_us.unwrap_or(0.0)).then(bytes(b).cmp(&bytes(a)))
        });
        self.totals.opportunity_us =
            self.opportunities.iter().map(|o| o.saved_us).try_fold(0.0, |s, t| t.map(|t| s + t)).map(round3);
        self.chip = Some(chip.name.clone());
    }
}

/// Groups, opportunities and re-prediction of a trace.
pub fn analyse(side: &ClassifiedTrace<'_>, options: &FusionOptions<'_>) -> TraceFusion {
    analyze_then(side, options, |_, _| ()).0
}

/// [`analyse`], also giving each kernel's group (index into `groups`), by index into
/// `trace.kernels`: what the fleet export's `kernels.fusion_group` holds.
pub fn analyse_with_kernel_groups(side: &ClassifiedTrace<'_>, options: &FusionOptions<'_>) -> (TraceFusion, Vec<u32>) {
    analyze_then(side, options, |grouping, position| {
        grouping.kernel_groups.iter().map(|&g| u32::try_from(position[g]).unwrap_or(u32::MAX)).collect()
    })
}

/// [`analyse`], also handing `then` the grouping with every GPU event in it (one instance per
/// kernel, in `trace.kernels` order, then the copies) and, for each of its groups, the group's
/// index in the result's `groups`: for views that walk the events (the group drawing of a
/// layer) without grouping the trace a second time.
pub(crate) fn analyze_then<T>(
    side: &ClassifiedTrace<'_>,
    options: &FusionOptions<'_>,
    then: impl FnOnce(&groups::Grouping, &[usize]) -> T,
) -> (TraceFusion, T) {
    let et_link = options.exec_trace.map(|(et, _)| (et, link(side.trace, et)));
    let grouping = groups::build(side, et_link.as_ref().map(|(et, l)| (*et, l)));
    let exec_trace = options.exec_trace.zip(et_link.as_ref()).map(|((_, file), (_, l))| ExecTraceSummary {
        file: file.to_string(),
        ops: l.ops,
        linked_ops: l.linked_ops,
        linked_pct: if l.ops > 0 { round3(100.0 * l.linked_ops as f64 / l.ops as f64) } else { 0.0 },
        linked_kernels: grouping.instances.iter().filter(|i| i.et.is_some()).count() as u64,
        note: if l.linked_ops == 0 {
            Some("no execution-trace op has a CPU op of this trace with its record-function id and name, nor is it of this trace's process: it is of another run, and the data flow is inferred".to_string())
        } else if l.by_order {
            Some("the trace and the execution trace share no record-function ids (PyTorch before 2.1): their ops are linked by their order on each thread".to_string())
        } else {
            None
        },
    });
    let opportunities =
        whatif::opportunities(&grouping, &options.rules, options.chip, options.calibration, options.structure);
    let calls = repredict::compiled_calls(side.trace, &grouping);
    let reprediction = repredict::repredict(&grouping, &BuiltIn::Inductor.rules(), &calls);
    let totals = totals(side, &grouping, &opportunities);
    let op_times = op_times::op_times(side.trace, grouping.instances.iter().map(|i| (i.dur, i.op)));
    // Longest first; the permutation is kept for `then`.
    let mut order: Vec<usize> = (0..grouping.groups.len()).collect();
    let gs = &grouping.groups;
    order.sort_by(|&a, &b| gs[b].time_us.total_cmp(&gs[a].time_us).then_with(|| gs[a].kernel.cmp(&gs[b].kernel)));
    let mut position = vec![0; order.len()];
    for (to, &from) in order.iter().enumerate() {
        position[from] = to;
    }
    let extra = then(&grouping, &position);
    let mut slots: Vec<Option<KernelGroup>> = grouping.groups.into_iter().map(Some).collect();
    let groups: Vec<KernelGroup> = order.iter().filter_map(|&i| slots[i].take()).collect();
    let fusion = TraceFusion {
        groups,
        totals,
        rule_set: options.rules.name.clone(),
        chip: options.chip.map(|c| c.name.clone()),
        opportunities,
        reprediction,
        exec_trace,
        op_times,
    };
    (fusion, extra)
}

fn totals(side: &ClassifiedTrace<'_>, g: &groups::Grouping, opportunities: &[Opportunity]) -> FusionTotals {
    let trace = side.trace;
    let gpu = gpu_time_us(trace);
    let copies: f64 = trace.transfers.iter().map(|t| t.dur).sum();
    let (mut known, mut unknown) = (0.0, UnknownTime::default());
    for i in &g.instances {
        let grp = &g.groups[i.group];
        let slot = match grp.cause() {
            _ if grp.covered() => &mut known,
            Some(Cause::NotRecorded) => &mut unknown.not_recorded,
            Some(Cause::BadInput) => &mut unknown.bad_input,
            // No model, a reason of unstated cause, or one figure only and no reason: counted
            // against fusionscope.
            _ => &mut unknown.no_model,
        };
        *slot += i.dur;
    }
    let recorded = known + unknown.no_model + unknown.bad_input;
    let (mut fused, mut unfused) = (0u64, 0u64);
    for grp in &g.groups {
        if let (Some(f), Some(u)) = (grp.fused_bytes_per_call, grp.unfused_bytes_per_call) {
            fused = fused.saturating_add(f.saturating_mul(grp.calls));
            unfused = unfused.saturating_add(u.saturating_mul(grp.calls));
        }
    }
    let opportunity_bytes =
        opportunities.iter().fold(0u64, |s, o| s.saturating_add(o.saved_bytes_per_call.saturating_mul(o.calls)));
    let opportunity_us = opportunities.iter().map(|o| o.saved_us).try_fold(0.0, |s, t| t.map(|t| s + t));
    FusionTotals {
        processor: side.platform.processor(),
        events: g.instances.len() as u64,
        groups: g.groups.len() as u64,
        gpu_time_us: round3(gpu),
        gpu_time_definition: GPU_TIME_DEFINITION.to_string(),
        kernel_time_us: round3(gpu - copies),
        copy_time_us: round3(copies),
        bytes_known_us: round3(known),
        bytes_known_pct: if gpu > 0.0 { round3(100.0 * known / gpu) } else { 0.0 },
        unknown_us: UnknownTime {
            not_recorded: round3(unknown.not_recorded),
            no_model: round3(unknown.no_model),
            bad_input: round3(unknown.bad_input),
        },
        shapes_recorded_us: round3(recorded),
        bytes_known_of_recorded_pct: if recorded > 0.0 { round3(100.0 * known / recorded) } else { 0.0 },
        fused_bytes: fused,
        unfused_bytes: unfused,
        saved_by_fusion_bytes: unfused.saturating_sub(fused),
        opportunity_bytes,
        opportunity_us: opportunity_us.map(round3),
        opportunities: opportunities.len() as u64,
    }
}
