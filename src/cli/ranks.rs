//! `fusionscope ranks FILE… [--json]`: the ranks of one distributed job read together — each
//! rank's timelines, collectives matched across ranks with skew, waits and bandwidth, what
//! could not be matched, and the stragglers (docs/ranks.md).

use std::path::PathBuf;

use analysis::findings::ranks::ranks_overview;
use analysis::ranks::job::JobReport;
use analysis::ranks::{job_report, RankSink, RankSummary};
use units::group_digits;
use view::findings::overview_text;
use view::ranks::{ranks_tables, RanksJson, COLLECTIVES_TABLE, RANKS_TABLE, STRAGGLERS_TABLE};

use super::io::{print, print_json, CliResult, Output};

#[derive(clap::Args)]
pub struct Args {
    /// The ranks' Kineto traces (.json or .json.gz), one file per rank, in any order. Each is
    /// read in bounded memory, one after another; the rank is the trace's `distributedInfo`,
    /// else a `rankN` in the file name, else the order given
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

/// Collectives listed in the text output (the JSON lists every one).
const SHOWN_COLLECTIVES: usize = 40;

pub fn run(args: Args) -> CliResult {
    if args.files.len() > limits::RANKS_FILES {
        return Err(format!(
            "{} files given: at most {} ranks are opened together",
            args.files.len(),
            limits::RANKS_FILES
        )
        .into());
    }
    let mut summaries: Vec<RankSummary> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let name = path.display().to_string();
        summaries.push(super::trace::load_sink(path, RankSink::new(&name))?);
    }
    let report = job_report(&summaries)?;
    let overview = ranks_overview(&report);
    if args.output.json {
        print_json(&RanksJson { overview: &overview, report: &report })
    } else {
        print(&(overview_text(&overview) + &report_text(&report)))
    }
}

/// The job as text: the page's tables (`view::ranks`, so the two cannot drift apart),
/// with the collectives cut to [`SHOWN_COLLECTIVES`] rows, plus a per-stream table the page
/// does not draw, then the notes.
fn report_text(r: &JobReport) -> String {
    let mut out = String::new();
    let world = r.world_size.map_or("unknown".to_string(), |w| w.to_string());
    out += &format!("\nJob: {} given, world size {world}\n", units::plural(r.ranks.len() as u64, "rank", "ranks"));
    for mut t in ranks_tables(r) {
        let mut title = t.title.clone();
        if t.id == STRAGGLERS_TABLE && t.rows.is_empty() {
            out += "\nStragglers: none (no collective had ranks arriving at different times)\n";
            continue;
        }
        if t.id == RANKS_TABLE {
            // The page's title invites a click; text has nothing to open.
            title = title.split("; open one").next().unwrap_or(&title).to_string();
        } else if t.id == COLLECTIVES_TABLE && t.rows.len() > SHOWN_COLLECTIVES {
            title = format!(
                "Collectives matched across ranks (first {SHOWN_COLLECTIVES} of {}; --json lists every one)",
                group_digits(t.rows.len() as u64)
            );
            t.rows.truncate(SHOWN_COLLECTIVES);
        }
        out += &format!("\n{title}\n{}", t.shown_table().to_text());
        if t.id == RANKS_TABLE {
            out += &streams_text(r);
        }
    }
    for e in &r.ranks {
        for n in &e.notes {
            out += &format!("note: rank {}: {n}\n", e.rank);
        }
    }
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out
}

/// Every device's streams of every rank (the `--json` `devices[].streams`).
fn streams_text(r: &JobReport) -> String {
    let rows = r.ranks.iter().flat_map(|e| {
        e.devices.iter().flat_map(move |dev| {
            dev.streams.iter().map(move |s| (Some(e.rank), dev.timeline.device.as_str(), dev.pid, s))
        })
    });
    format!("\nStreams\n{}", super::trace::stream_table(rows).to_text())
}
