//! The ranks of one distributed job ([`JobReport`], `fusionscope ranks`) as the page shows
//! them: a strip per rank of where its busiest device's time went ([`rank_strips`]), and the
//! ranks, the collectives matched across ranks, what could not be matched and the stragglers
//! as [`DataTable`]s ([`ranks_tables`]). The cells' exact values are the `--json` figures.
//!
//! The page's worker draws them ([`RanksDrawn::of`]) and sends the drawing, not the report:
//! the report's types and these tables are then no part of the page's first download. The
//! strips cross as figures ([`StripRow`]) and are drawn on the page ([`strips_svg`]), so that a
//! share link, which carries the drawing, never carries markup.

use serde::{Deserialize, Serialize};

use analysis::ranks::job::JobReport;
use draw::chart::{escape_xml, svg_start};
use table::{Cell, Column, DataTable};
use trace::platform::Processor;
use units::{format_duration_us, format_pct};

use super::time::TIMELINE_PARTS;

/// Ids of the tables [`ranks_tables`] gives, in order (the unmatched table only when some
/// collectives were not matched).
pub const RANKS_TABLE: &str = "ranks";
pub const COLLECTIVES_TABLE: &str = "collectives";
pub const UNMATCHED_TABLE: &str = "unmatched";
pub const STRAGGLERS_TABLE: &str = "stragglers";

/// The Ranks view drawn: what the page shows of a [`JobReport`], and the report's JSON text
/// (its export), as the worker sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanksDrawn {
    /// The verdict on the job and the findings ranked by time
    /// ([`analysis::findings::ranks::ranks_overview`]).
    #[serde(default, with = "analysis::findings::as_value")]
    pub overview: analysis::findings::Overview,
    pub headline: String,
    /// Each rank's strip ([`strips_svg`]).
    pub strips: Vec<StripRow>,
    pub tables: Vec<WireTable>,
    /// Each rank and its file, in rank order (a rank clicked opens the trace of that file).
    pub ranks: Vec<(u32, String)>,
    /// What reading the ranks and matching them noted.
    pub notes: Vec<String>,
    /// The report as `fusionscope ranks --json` writes it (none in a share link).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub report_json: String,
    /// From a share link whose collectives table was shortened.
    #[serde(default)]
    pub trimmed: bool,
}

/// One rank's strip: its busiest device and the parts of its whole trace (µs): computation,
/// exposed communication, exposed memcpy, idle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StripRow {
    pub rank: u32,
    pub device: String,
    pub total_us: f64,
    pub parts: [f64; 4],
}

/// The strips of the ranks, in rank order (no parts for a rank without GPU work).
pub fn strip_rows(r: &JobReport) -> Vec<StripRow> {
    r.ranks
        .iter()
        .map(|e| match &e.timeline {
            Some(w) => StripRow {
                rank: e.rank,
                device: w.device.clone(),
                total_us: w.total_us,
                parts: [w.computation_us, w.exposed_communication_us, w.exposed_memcpy_us, w.idle_us],
            },
            None => StripRow { rank: e.rank, device: String::new(), total_us: 0.0, parts: [0.0; 4] },
        })
        .collect()
}

/// A [`DataTable`] as it crosses from the worker (its id a string; sort keys that are not
/// finite, which JSON cannot write, as `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireTable {
    pub id: String,
    pub title: String,
    pub columns: Vec<(String, bool)>,
    pub rows: Vec<Vec<(String, String, Option<f64>)>>,
}

impl WireTable {
    fn of(t: &DataTable) -> WireTable {
        WireTable {
            id: t.id.to_string(),
            title: t.title.clone(),
            columns: t.columns.iter().map(|c| (c.header.clone(), c.numeric)).collect(),
            rows: t
                .rows
                .iter()
                .map(|r| {
                    r.iter().map(|c| (c.text.clone(), c.exact.clone(), c.sort.is_finite().then_some(c.sort))).collect()
                })
                .collect(),
        }
    }

    /// The table again (an id this build does not know becomes `table`).
    pub fn table(&self) -> DataTable {
        let id = [RANKS_TABLE, COLLECTIVES_TABLE, UNMATCHED_TABLE, STRAGGLERS_TABLE]
            .into_iter()
            .find(|&k| k == self.id)
            .unwrap_or("table");
        DataTable {
            id,
            title: self.title.clone(),
            columns: self
                .columns
                .iter()
                .map(|(header, numeric)| Column { header: header.clone(), numeric: *numeric, detail: false })
                .collect(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|(text, exact, sort)| Cell {
                            text: text.clone(),
                            exact: exact.clone(),
                            sort: sort.unwrap_or(f64::NEG_INFINITY),
                        })
                        .collect()
                })
                .collect(),
        }
    }
}

impl RanksDrawn {
    pub fn of(r: &JobReport) -> Result<RanksDrawn, serde_json::Error> {
        let notes = r.ranks.iter().flat_map(|e| e.notes.iter().map(move |n| format!("rank {}: {n}", e.rank)));
        let overview = analysis::findings::ranks::ranks_overview(r);
        Ok(RanksDrawn {
            report_json: serde_json::to_string_pretty(&RanksJson { overview: &overview, report: r })?,
            overview,
            headline: ranks_headline(r),
            strips: strip_rows(r),
            tables: ranks_tables(r).iter().map(WireTable::of).collect(),
            ranks: r.ranks.iter().map(|e| (e.rank, e.file.clone())).collect(),
            notes: notes.chain(r.notes.iter().cloned()).collect(),
            trimmed: false,
        })
    }
}

/// What `fusionscope ranks --json` writes and the page exports: the overview first, then the
/// job report's keys.
#[derive(Serialize)]
pub struct RanksJson<'a> {
    pub overview: &'a analysis::findings::Overview,
    #[serde(flatten)]
    pub report: &'a JobReport,
}

/// The line under the verdict: what the verdict does not say, the collectives matched across
/// the ranks, and why no rank straggled when none did (the verdict names the one that did).
pub fn ranks_headline(r: &JobReport) -> String {
    let mut line = format!(
        "{} matched across the {} given",
        units::plural(r.collectives.len() as u64, "collective", "collectives"),
        units::plural(r.ranks.len() as u64, "rank", "ranks")
    );
    if r.stragglers.is_empty() && r.ranks.len() > 1 {
        line += "; none had ranks arriving at different times, so no rank straggled";
    }
    line + "."
}

/// The ranks' tables: ranks, collectives, unmatched (when any), stragglers.
pub fn ranks_tables(r: &JobReport) -> Vec<DataTable> {
    let mut tables = vec![rank_table(r), collectives_table(r)];
    if !r.unmatched.is_empty() {
        tables.push(unmatched_table(r));
    }
    tables.push(stragglers_table(r));
    tables
}

fn opt_micros(v: Option<f64>) -> Cell {
    match v {
        Some(us) => Cell::micros(us),
        None => Cell { text: "—".into(), exact: String::new(), sort: f64::NEG_INFINITY },
    }
}

/// One row per rank (its busiest device's whole-trace figures), in rank order: the row index
/// is the rank's index in [`JobReport::ranks`].
pub fn rank_table(r: &JobReport) -> DataTable {
    let reference = r.ranks.first().map_or(0, |e| e.rank);
    let mut t = DataTable::new(
        RANKS_TABLE,
        format!("Ranks (busiest device of each; clock offset against rank {reference}); open one to see its trace"),
        &[
            ("rank", true),
            ("file", false),
            ("device", false),
            ("total", true),
            ("busy", true),
            ("idle", true),
            ("idle on host", true),
            ("computation", true),
            ("communication", true),
            ("exposed comm.", true),
            ("memcpy", true),
            ("clock offset", true),
            ("collectives", true),
            ("kernels", true),
        ],
    );
    for e in &r.ranks {
        let tl = e.timeline.as_ref();
        let f = |g: fn(&analysis::time::timeline::Timeline) -> f64| opt_micros(tl.map(g));
        t.rows.push(vec![
            Cell::count(u64::from(e.rank)),
            Cell::text(e.file.clone()),
            Cell::text(e.device.clone().unwrap_or_else(|| "—".into())),
            f(|t| t.total_us),
            f(|t| t.busy_us),
            f(|t| t.idle_us),
            // The share of its streams' idle time between kernels spent waiting on the host.
            match e.waits.as_ref().and_then(|w| w.total().host_share()) {
                Some(p) => Cell::pct(p),
                None => Cell { text: "—".into(), exact: String::new(), sort: f64::NEG_INFINITY },
            },
            f(|t| t.computation_us),
            f(|t| t.communication_us),
            f(|t| t.exposed_communication_us),
            f(|t| t.memcpy_us),
            Cell::micros(e.clock.offset_us),
            Cell::count(e.collectives as u64),
            Cell::count(e.kernels),
        ]);
    }
    t
}

/// Every matched collective, by earliest start on the reference clock.
pub fn collectives_table(r: &JobReport) -> DataTable {
    let mut t = DataTable::new(
        COLLECTIVES_TABLE,
        format!("Collectives matched across ranks ({})", units::group_digits(r.collectives.len() as u64)),
        &[
            ("group", false),
            ("seq", true),
            ("collective", false),
            ("size", true),
            ("ranks", true),
            ("start skew", true),
            ("last", true),
            ("max wait", true),
            ("duration", true),
            ("end spread", true),
            ("algbw GB/s", true),
            ("busbw GB/s", true),
        ],
    );
    for m in &r.collectives {
        let max_wait = m.wait_us.values().copied().fold(0.0, f64::max);
        let given = m.ranks.len() as u64;
        let ranks = match m.missing_ranks {
            Some(missing) if missing > 0 => Cell {
                text: format!("{given} of {}", given + u64::from(missing)),
                exact: given.to_string(),
                sort: given as f64,
            },
            _ => Cell::count(given),
        };
        t.rows.push(vec![
            Cell::text(m.group.clone()),
            Cell::count(m.seq as u64),
            Cell { text: m.kind.label().to_string(), exact: m.name.clone(), sort: 0.0 },
            m.bytes.map_or_else(|| Cell::decimal(None, 0), Cell::bytes),
            ranks,
            Cell::micros(m.start_skew_us),
            m.last_rank.map_or_else(|| Cell::decimal(None, 0), |x| Cell::count(u64::from(x))),
            Cell::micros(max_wait),
            Cell::micros(m.duration_us),
            Cell::micros(m.end_spread_us),
            Cell::decimal(m.algbw_gbps, 2),
            Cell::decimal(m.busbw_gbps, 2),
        ]);
    }
    t
}

/// Groups (from a sequence on) whose collectives could not be matched, and why.
pub fn unmatched_table(r: &JobReport) -> DataTable {
    let mut t = DataTable::new(
        UNMATCHED_TABLE,
        "Not matched",
        &[("group", false), ("from seq", true), ("collectives per rank", false), ("why", false)],
    );
    for x in &r.unmatched {
        let counts: Vec<String> = x.counts.iter().map(|(rank, n)| format!("{rank}: {n}")).collect();
        t.rows.push(vec![
            Cell::text(x.group.clone()),
            Cell::count(x.from_seq as u64),
            Cell::text(counts.join(", ")),
            Cell::long_text(&x.reason, 80),
        ]);
    }
    t
}

/// The ranks the others waited for, most wait caused first.
pub fn stragglers_table(r: &JobReport) -> DataTable {
    let mut t = DataTable::new(
        STRAGGLERS_TABLE,
        "Stragglers (last to arrive; lead-in and computation before those collectives, against the other ranks' mean)",
        &[
            ("rank", true),
            ("caused wait", true),
            ("late at", true),
            ("lead-in", true),
            ("others' lead-in", true),
            ("computation", true),
            ("others' computation", true),
        ],
    );
    for x in &r.stragglers {
        t.rows.push(vec![
            Cell::count(u64::from(x.rank)),
            Cell::micros(x.caused_wait_us),
            Cell::count(x.late_collectives as u64),
            Cell::micros(x.lead_in_us),
            Cell::micros(x.others_lead_in_us),
            opt_micros(x.compute_before_us),
            opt_micros(x.others_compute_before_us),
        ]);
    }
    t
}

/// A strip per rank, in rank order: its busiest device's whole trace split into computation,
/// exposed communication, exposed memcpy and idle time (they add up to the trace's span), each
/// part coloured as in the trace view's timeline chart. A rank without GPU work has an empty
/// strip. Each strip's group carries `data-rank`.
pub fn rank_strips(r: &JobReport) -> String {
    strips_svg(&strip_rows(r))
}

/// [`rank_strips`] from the strips' figures.
pub fn strips_svg(rows: &[StripRow]) -> String {
    const LABEL_W: f64 = 90.0;
    const BAR_W: f64 = 560.0;
    const ROW: f64 = 22.0;
    const TOP: f64 = 50.0;
    let height = TOP + ROW * rows.len() as f64 + 10.0;
    let devices: Vec<&str> = rows.iter().map(|r| r.device.as_str()).filter(|d| !d.is_empty()).collect();
    let title = format!(
        "Each rank's {} time: computation, exposed communication and memcpy, idle",
        Processor::of_devices(&devices)
    );
    let mut s = svg_start(760, height as u32, &title);
    for (i, (name, color)) in TIMELINE_PARTS.iter().enumerate() {
        let x = 10.0 + 180.0 * i as f64;
        s.push_str(&format!(
            "<rect x=\"{x}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"35\" fill=\"currentColor\">{name}</text>",
            x + 14.0
        ));
    }
    for (i, e) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let label = format!("rank {}", e.rank);
        s.push_str(&format!(
            "<g data-rank=\"{}\"><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"currentColor\">{label}</text>",
            e.rank,
            LABEL_W - 6.0,
            y + 13.0
        ));
        if e.total_us > 0.0 {
            let w = e;
            let mut x = LABEL_W;
            // Parts of a link's figures are not trusted to be numbers: NaN draws nothing.
            for ((name, color), us) in TIMELINE_PARTS.iter().zip(e.parts) {
                if us.is_nan() || us <= 0.0 {
                    continue;
                }
                let width = (BAR_W * us / w.total_us).clamp(0.0, LABEL_W + BAR_W - x);
                s.push_str(&format!(
                    "<rect data-part=\"{name}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"16\" fill=\"{color}\"><title>{}: {name} {} ({})</title></rect>",
                    escape_xml(&format!("{label} ({})", w.device)),
                    format_duration_us(us),
                    format_pct(100.0 * us / w.total_us)
                ));
                x += width;
            }
            s.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"currentColor\">{}</text>",
                LABEL_W + BAR_W + 6.0,
                y + 13.0,
                format_duration_us(w.total_us)
            ));
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use analysis::ranks::synthetic::SyntheticJob;
    use analysis::ranks::{job_report, RankSink};

    fn synthetic() -> (SyntheticJob, JobReport) {
        let job = SyntheticJob::small();
        let summaries: Vec<_> = (0..job.world_size)
            .map(|r| {
                let mut reader = formats::Reader::with_sink(RankSink::new(&format!("rank{r}.json")));
                reader.feed(job.rank_trace(r).as_bytes()).unwrap();
                reader.finish().unwrap()
            })
            .collect();
        let report = job_report(&summaries).unwrap();
        (job, report)
    }

    #[test]
    fn the_tables_hold_the_report_s_figures_row_for_row() {
        let (job, r) = synthetic();
        let tables = ranks_tables(&r);
        let ids: Vec<&str> = tables.iter().map(|t| t.id).collect();
        assert!(ids.starts_with(&[RANKS_TABLE, COLLECTIVES_TABLE]) && ids.ends_with(&[STRAGGLERS_TABLE]), "{ids:?}");
        let ranks = &tables[0];
        assert_eq!(ranks.rows.len(), job.world_size as usize);
        for (row, e) in ranks.rows.iter().zip(&r.ranks) {
            assert_eq!(row[0].exact, e.rank.to_string());
            assert_eq!(row[3].exact, format!("{}", e.timeline.as_ref().unwrap().total_us));
            assert_eq!(row[11].exact, format!("{}", e.clock.offset_us));
            let host_share = e.waits.as_ref().and_then(|w| w.total().host_share());
            assert_eq!(row[6].sort, host_share.unwrap_or(f64::NEG_INFINITY));
        }
        let c = &tables[1];
        assert_eq!(c.rows.len(), r.collectives.len());
        for (row, m) in c.rows.iter().zip(&r.collectives) {
            assert_eq!((row[0].exact.as_str(), row[1].exact.clone()), (m.group.as_str(), m.seq.to_string()));
            assert_eq!(row[5].exact, format!("{}", m.start_skew_us));
            assert_eq!(row[11].exact, m.busbw_gbps.map_or(String::new(), |b| format!("{b}")));
        }
        let s = tables.last().unwrap();
        assert_eq!(s.rows[0][0].exact, job.straggler.to_string());
        let headline = ranks_headline(&r);
        assert_eq!(
            headline,
            format!("{} collectives matched across the {} ranks given.", r.collectives.len(), r.ranks.len())
        );
        // Without a straggler, the line says why none was found.
        let mut even = r.clone();
        even.stragglers.clear();
        assert!(ranks_headline(&even).ends_with("; none had ranks arriving at different times, so no rank straggled."));
    }

    #[test]
    fn the_drawing_crosses_as_json_and_gives_the_same_tables() {
        let (_, r) = synthetic();
        let drawn = RanksDrawn::of(&r).unwrap();
        let back: RanksDrawn = serde_json::from_str(&serde_json::to_string(&drawn).unwrap()).unwrap();
        assert_eq!(back, drawn);
        let tables: Vec<DataTable> = back.tables.iter().map(WireTable::table).collect();
        assert_eq!(tables, ranks_tables(&r));
        assert_eq!(serde_json::from_str::<JobReport>(&back.report_json).unwrap(), r);
        assert_eq!(back.ranks.len(), r.ranks.len());
    }

    #[test]
    fn a_strip_per_rank_whose_parts_fill_it() {
        let (job, r) = synthetic();
        let svg = rank_strips(&r);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<g data-rank=").count(), job.world_size as usize);
        for e in &r.ranks {
            let start = svg.find(&format!("<g data-rank=\"{}\"", e.rank)).unwrap();
            let group = &svg[start..start + svg[start..].find("</g>").unwrap()];
            let widths: f64 =
                group.split("width=\"").skip(1).map(|w| w[..w.find('"').unwrap()].parse::<f64>().unwrap()).sum();
            assert!((widths - 560.0).abs() < 0.5, "rank {}: {widths}", e.rank);
            assert!(group.contains("data-part=\"computation\""));
        }
    }
}
