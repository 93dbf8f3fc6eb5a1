//! `fusionscope ranks FILE… [--json]`: the ranks of one distributed job read together — each
//! rank's timelines, collectives matched across ranks with skew, waits and bandwidth, what
//! could not be matched, and the stragglers (docs/ranks.md).

use std::path::PathBuf;

use fusionscope::table::Table;
use fusionscope::trace::ranks::job::JobReport;
use fusionscope::trace::ranks::{job_report, RankSink, RankSummary};
use fusionscope::trace::{classify, Reader};
use fusionscope::units::{format_bytes, format_duration_us, group_digits};

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
    if args.files.len() > fusionscope::limits::RANKS_FILES {
        return Err(format!(
            "{} files given: at most {} ranks are opened together",
            args.files.len(),
            fusionscope::limits::RANKS_FILES
        )
        .into());
    }
    let mut summaries: Vec<RankSummary> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let name = path.display().to_string();
        summaries.push(super::trace::load_into(path, Reader::with_sink(RankSink::new(&classify, &name)))?);
    }
    let report = job_report(&summaries)?;
    if args.output.json {
        print_json(&report)
    } else {
        print(&report_text(&report))
    }
}

fn us(x: f64) -> String {
    format_duration_us(x)
}

fn opt_gbps(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.2}"))
}

fn report_text(r: &JobReport) -> String {
    let mut out = String::new();
    let world = r.world_size.map_or("unknown".to_string(), |w| w.to_string());
    out += &format!("Job: {} ranks given, world size {world}\n", r.ranks.len());
    let mut t = Table::new(&[
        ">rank",
        "file",
        "device",
        ">total",
        ">busy",
        ">idle",
        ">computation",
        ">communication",
        ">exposed comm",
        ">memcpy",
        ">clock offset",
        ">collectives",
    ]);
    for e in &r.ranks {
        let tl = e.timeline.as_ref();
        let f = |g: fn(&fusionscope::trace::time::timeline::Timeline) -> f64| tl.map_or("—".into(), |t| us(g(t)));
        t.row([
            e.rank.to_string(),
            e.file.clone(),
            e.device.clone().unwrap_or_else(|| "—".into()),
            f(|t| t.total_us),
            f(|t| t.busy_us),
            f(|t| t.idle_us),
            f(|t| t.computation_us),
            f(|t| t.communication_us),
            f(|t| t.exposed_communication_us),
            f(|t| t.memcpy_us),
            us(e.clock.offset_us),
            group_digits(e.collectives as u64),
        ]);
    }
    out += &format!("\nRanks (busiest device of each; clock offset against rank {})\n{}", r.ranks[0].rank, t.to_text());

    let mut d =
        Table::new(&[">rank", "device", ">pid", ">stream", ">kernels", ">busy", ">computation", ">communication"]);
    for e in &r.ranks {
        for dev in &e.devices {
            for s in &dev.streams {
                d.row([
                    e.rank.to_string(),
                    dev.timeline.device.clone(),
                    dev.pid.to_string(),
                    s.stream.to_string(),
                    group_digits(s.kernels),
                    us(s.busy_us),
                    us(s.computation_us),
                    us(s.communication_us),
                ]);
            }
        }
    }
    out += &format!("\nStreams\n{}", d.to_text());

    let mut c = Table::new(&[
        "group",
        ">seq",
        "collective",
        ">size",
        ">ranks",
        ">start skew",
        "last",
        ">max wait",
        ">duration",
        ">end spread",
        ">algbw GB/s",
        ">busbw GB/s",
    ]);
    for m in r.collectives.iter().take(SHOWN_COLLECTIVES) {
        let max_wait = m.wait_us.values().copied().fold(0.0, f64::max);
        let ranks = match m.missing_ranks {
            Some(missing) if missing > 0 => {
                format!("{} of {}", m.ranks.len(), m.ranks.len() as u64 + u64::from(missing))
            }
            _ => m.ranks.len().to_string(),
        };
        c.row([
            m.group.clone(),
            m.seq.to_string(),
            m.kind.label().to_string(),
            m.bytes.map_or("—".into(), format_bytes),
            ranks,
            us(m.start_skew_us),
            m.last_rank.map_or("—".into(), |x| x.to_string()),
            us(max_wait),
            us(m.duration_us),
            us(m.end_spread_us),
            opt_gbps(m.algbw_gbps),
            opt_gbps(m.busbw_gbps),
        ]);
    }
    let shown = if r.collectives.len() > SHOWN_COLLECTIVES {
        format!("first {SHOWN_COLLECTIVES} of {}; --json lists every one", r.collectives.len())
    } else {
        format!("{}", r.collectives.len())
    };
    out += &format!("\nCollectives matched across ranks ({shown})\n{}", c.to_text());

    if !r.unmatched.is_empty() {
        let mut u = Table::new(&["group", ">from seq", "collectives per rank", "why"]);
        for x in &r.unmatched {
            let counts: Vec<String> = x.counts.iter().map(|(rank, n)| format!("{rank}: {n}")).collect();
            u.row([x.group.clone(), x.from_seq.to_string(), counts.join(", "), x.reason.clone()]);
        }
        out += &format!("\nNot matched\n{}", u.to_text());
    }

    if r.stragglers.is_empty() {
        out += "\nStragglers: none (no collective had ranks arriving at different times)\n";
    } else {
        let mut s = Table::new(&[
            ">rank",
            ">caused wait",
            ">late at",
            ">lead-in",
            ">others' lead-in",
            ">computation",
            ">others' computation",
        ]);
        for x in &r.stragglers {
            s.row([
                x.rank.to_string(),
                us(x.caused_wait_us),
                group_digits(x.late_collectives as u64),
                us(x.lead_in_us),
                us(x.others_lead_in_us),
                x.compute_before_us.map_or("—".into(), us),
                x.others_compute_before_us.map_or("—".into(), us),
            ]);
        }
        out += &format!(
            "\nStragglers (last to arrive; lead-in and computation before those collectives, against the other ranks' mean)\n{}",
            s.to_text()
        );
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
