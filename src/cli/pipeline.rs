//! The trace pipeline the `trace`, `compare` and `report` subcommands share: read (with a
//! capture trace where given), classify, summarise or compare, time report with its fusion
//! analysis, overview.

use std::path::Path;
use std::sync::OnceLock;

use analysis::capture::{attribute, CaptureReport};
use analysis::compare::{compare, swapped, Comparison, Input};
use analysis::findings::single::trace_overview;
use analysis::findings::{pair_overview, Overview, SideFacts};
use analysis::pipeline::{analyse, fusion, report, TraceTime};
use analysis::provenance;
use analysis::summary::{structure_of, ClassifiedTrace, TraceSummary};
use analysis::time::gap::{gap, Gap};
use hardware::DetectedChip;
use trace::Trace;

use super::io::load_chip;
use super::trace_file::{load, read_log};
use super::trace_fusion::{ExecTraceArg, FusionArgs, FusionSetup};

/// One trace as `trace` (and `report`) analyse it: summary, time report with its fusion
/// analysis, and overview.
pub(super) struct OneTrace {
    pub summary: TraceSummary,
    pub time: TraceTime,
    pub overview: Overview,
}

/// What one trace's analysis is asked for: the file, and the options `trace` takes.
pub(super) struct OneInput<'a> {
    pub file: &'a Path,
    pub chip: Option<&'a str>,
    pub capture: Option<&'a Path>,
    pub fusion: &'a FusionArgs,
    pub exec_trace: &'a ExecTraceArg,
    pub compile_log: Option<&'a Path>,
}

pub(super) fn analyse_trace(args: OneInput<'_>) -> Result<OneTrace, Box<dyn std::error::Error>> {
    let chip = given_chip(args.chip)?;
    let setup = FusionSetup::new(args.fusion)?.with_exec_trace(args.exec_trace)?;
    let choices = setup.choices(chip.as_ref());
    let (mut trace, capture) = load_with_capture(args.file, args.capture)?;
    // The log's groups go into the trace before any analysis reads it.
    let compiled_kernels = match args.compile_log {
        Some(path) => {
            let log = read_log(path)?;
            // The groups the analysis infers without the log, for "inferred vs exact".
            let before = {
                let side = ClassifiedTrace::new(&trace);
                fusion(&side, structure_of(&side).as_deref(), &choices).0
            };
            Some(provenance::apply(&mut trace, &file_name(path), &log, Some(&before)))
        }
        None => None,
    };
    // The page's pipeline, with the flags' choices.
    let side = ClassifiedTrace::new(&trace);
    let (summary, mut time) = analyse(&side, Some(&file_name(args.file)), &choices);
    time.capture = capture;
    time.compiled_kernels = compiled_kernels;
    let overview = trace_overview(&summary, Some(&time));
    Ok(OneTrace { summary, time, overview })
}

/// Two traces as `compare` (and `report`) analyse them, each side's report in the
/// comparison's order (AMD first across vendors).
pub(super) struct Pair {
    pub comparison: Comparison,
    pub gap: Gap,
    pub times: [TraceTime; 2],
    pub overview: Overview,
}

/// What a pair's analysis is asked for: the two files, and per file the options `compare`
/// takes.
pub(super) struct PairInput<'a> {
    pub files: [&'a Path; 2],
    pub chips: [Option<&'a str>; 2],
    pub captures: [Option<&'a Path>; 2],
    pub fusion: &'a FusionArgs,
}

pub(super) fn analyse_pair(args: PairInput<'_>) -> Result<Pair, Box<dyn std::error::Error>> {
    let chips = [given_chip(args.chips[0])?, given_chip(args.chips[1])?];
    let [chip_a, chip_b] = chips;
    let setup = FusionSetup::new(args.fusion)?;
    // Each file is read, classified and its time report made on its own thread: reading is
    // most of a comparison's time, and the reports do not depend on each other. Each trace is
    // kept in a cell that outlives the threads, so that its classification (and the structure
    // search and op links made with it) goes on to the comparison rather than being made again.
    let traces = [OnceLock::new(), OnceLock::new()];
    let side = |i: usize, chip: Option<DetectedChip>| -> Result<_, String> {
        let (trace, capture) = load_with_capture(args.files[i], args.captures[i])?;
        let side = ClassifiedTrace::new(traces[i].get_or_init(|| trace));
        let mut time = report(&side, structure_of(&side).as_deref(), &setup.choices(chip.as_ref()));
        time.capture = capture;
        Ok((side, time))
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| side(0, chip_a));
        let b = s.spawn(|| side(1, chip_b));
        (a.join(), b.join())
    });
    let joined = |r: std::thread::Result<Result<_, String>>| r.unwrap_or_else(|_| Err("a reader thread failed".into()));
    let ((side_a, time_a), (side_b, time_b)) = (joined(a)?, joined(b)?);
    let (na, nb) = (file_name(args.files[0]), file_name(args.files[1]));
    let swap = swapped(side_a.platform.vendor, side_b.platform.vendor);
    let comparison = compare(Input { side: side_a, file: Some(&na) }, Input { side: side_b, file: Some(&nb) });
    // The comparison puts AMD first: follow its order.
    let times = if swap { [time_b, time_a] } else { [time_a, time_b] };
    let keys = [&comparison.platforms[0].key, &comparison.platforms[1].key];
    let gap = gap((keys[0], &times[0].op_table()), (keys[1], &times[1].op_table()));
    let overview = pair_overview(&comparison, Some(&gap), [SideFacts::of(&times[0]), SideFacts::of(&times[1])]);
    Ok(Pair { comparison, gap, times, overview })
}

/// Reads a trace and, when a capture trace is given, joins it to the trace's graph replays.
pub(super) fn load_with_capture(file: &Path, capture: Option<&Path>) -> Result<(Trace, Option<CaptureReport>), String> {
    let trace = load(file)?;
    let Some(path) = capture else { return Ok((trace, None)) };
    let captured = load(path)?;
    let (joined, report) = attribute(&trace, &captured)
        .map_err(|e| format!("cannot join {} to {}: {e}", path.display(), file.display()))?;
    Ok((joined, Some(report)))
}

/// The chip the user named, as the report states its origin.
pub(super) fn given_chip(arg: Option<&str>) -> Result<Option<DetectedChip>, Box<dyn std::error::Error>> {
    arg.map(|a| -> Result<DetectedChip, Box<dyn std::error::Error>> {
        let chip = load_chip(a)?;
        let from = if Path::new(a).exists() { format!("chip file {a}") } else { format!("--chip {a}") };
        Ok(DetectedChip { chip, detected_from: from })
    })
    .transpose()
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}
