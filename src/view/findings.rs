//! The overview as the command line and the Markdown export write it: the verdict, each
//! side's busy and idle time, and the findings as a numbered table (the page draws the same
//! [`Overview`] as a list).

use table::{Cell, DataTable};
use units::format_duration_us;

use analysis::findings::{busy_lines, Evidence, Overview};

/// Where a finding's evidence is, in words (the page's tab of the same name).
pub fn evidence_label(e: Evidence) -> &'static str {
    match e {
        Evidence::Fusion => "Fusion",
        Evidence::Kernels => "Kernels & mapping",
        Evidence::Time => "Where the time goes",
        Evidence::Ranks => "Ranks",
    }
}

/// The findings, largest time first: rank, the time each explains, the sentence, and where
/// its evidence is.
pub fn findings_table(o: &Overview) -> DataTable {
    let mut t = DataTable::new(
        "findings",
        "Findings, ranked by the time they explain",
        &[("#", true), ("explains", true), ("finding", false), ("evidence", false)],
    );
    for (i, f) in o.findings.iter().enumerate() {
        t.rows.push(vec![
            Cell::count(i as u64 + 1),
            Cell::micros(f.time_us),
            Cell::text(f.text.clone()),
            Cell::text(evidence_label(f.evidence)),
        ]);
    }
    t
}

/// The verdict and its busy lines, one per line.
pub fn verdict_lines(o: &Overview) -> Vec<String> {
    std::iter::once(o.verdict.text.clone()).chain(busy_lines(&o.verdict)).collect()
}

/// The overview as the command line prints it first: the verdict, then one line per finding
/// ("1.  1.25 ms  aten::mm … (Where the time goes)"), whole, as sentences do not fit a table's
/// column.
pub fn overview_text(o: &Overview) -> String {
    let mut out: String = verdict_lines(o).iter().map(|l| format!("{l}\n")).collect();
    if o.findings.is_empty() {
        return out;
    }
    out += "\nFindings, ranked by the time they explain\n";
    let times: Vec<String> = o.findings.iter().map(|f| format_duration_us(f.time_us)).collect();
    let width = times.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    for (i, (f, t)) in o.findings.iter().zip(&times).enumerate() {
        out += &format!("{:>2}. {t:>width$}  {} [{}]\n", i + 1, f.text, evidence_label(f.evidence));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::findings::{Finding, FindingKind, Verdict, VerdictSide};

    fn overview() -> Overview {
        let side = |key: &str, idle: f64| VerdictSide {
            key: key.into(),
            name: format!("{key} GPU"),
            gpu_time_us: 100.0,
            span_us: Some(150.0),
            busy_us: Some(150.0 - idle),
            idle_us: Some(idle),
            processor: Default::default(),
        };
        Overview {
            verdict: Verdict { text: "a is faster".into(), sides: vec![side("a", 50.0), side("b", 30.0)] },
            findings: vec![
                Finding { kind: FindingKind::Idle, time_us: 1500.0, text: "x | y".into(), evidence: Evidence::Time },
                Finding { kind: FindingKind::OpGap, time_us: 2.5, text: "z".into(), evidence: Evidence::Fusion },
            ],
        }
    }

    #[test]
    fn text_lists_the_verdict_busy_lines_and_numbered_findings() {
        let text = overview_text(&overview());
        let expected = [
            "a is faster",
            "a GPU: GPU busy 100.00 µs, idle 50.00 µs (33 %) of a 150.00 µs span",
            "b GPU: GPU busy 120.00 µs, idle 30.00 µs (20 %) of a 150.00 µs span",
            "",
            "Findings, ranked by the time they explain",
            " 1. 1.50 ms  x | y [Where the time goes]",
            " 2. 2.50 µs  z [Fusion]",
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn the_markdown_table_escapes_a_finding_s_pipes() {
        let md = findings_table(&overview()).shown_table().to_markdown();
        assert!(md.contains(r"x \| y"), "{md}");
        assert_eq!(md.lines().count(), 4, "{md}");
    }
}
