use super::*;
use analysis::compare::{compare, Input};
use analysis::findings::single::trace_overview;
use analysis::findings::{pair_overview, SideFacts};
use analysis::pipeline::{analyse, Choices};
use analysis::summary::ClassifiedTrace;
use analysis::time::gap::gap;
use draw::chart::escape_xml;
use formats::read_trace;
use trace::Trace;

fn read(path: &str) -> Trace {
    let bytes =
        std::fs::read(format!("{}/tests/data/traces/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap();
    read_trace(&bytes).unwrap()
}

fn report(trace: &Trace, file: &str) -> (TraceSummary, TraceTime) {
    analyse(&ClassifiedTrace::new(trace), Some(file), &Choices::default())
}

/// Every element the file opens, in order, with no script anywhere: the names of a stranger's
/// trace are text.
fn tags(html: &str) -> Vec<String> {
    html.split('<')
        .skip(1)
        .map(|s| s.split(|c: char| c.is_whitespace() || c == '>' || c == '/').next().unwrap_or("").to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn a_hostile_kernel_name_stays_text_and_the_file_allows_no_script() {
    let names = ["<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>", "a' onmouseover='alert(3)"];
    let events: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let name = serde_json::to_string(n).unwrap();
            format!(r#"{{"ph":"X","cat":"kernel","name":{name},"pid":0,"tid":7,"ts":{},"dur":5,"args":{{"device":0,"stream":7}}}}"#, i * 10)
        })
        .collect();
    let text =
        format!(r#"{{"deviceProperties":[{{"name":"NVIDIA H100 80GB HBM3"}}],"traceEvents":[{}]}}"#, events.join(","));
    let t = read_trace(text.as_bytes()).unwrap();
    let (summary, time) = report(&t, "<b>evil</b>.json");
    let html = trace_report("<b>evil</b>.json", &summary, Some(&time), &trace_overview(&summary, Some(&time)));
    for n in names {
        assert!(!html.contains(n), "{n} unescaped");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the name is shown, as text");
    assert!(html.contains("Trace &lt;b&gt;evil&lt;/b&gt;.json"));
    let found = tags(&html);
    for bad in ["script", "img", "iframe", "object", "embed", "link", "base", "form"] {
        assert!(!found.iter().any(|t| t == bad), "<{bad}> in the report");
    }
    assert!(html.contains(
        "Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""
    ));
}

#[test]
fn the_pair_report_opens_with_the_overview_then_each_view() {
    let (nv, amd) =
        (read("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"));
    let c = compare(Input::new(&nv, Some("h100.json.gz")), Input::new(&amd, Some("mi300x.json.gz")));
    let ((_, ta), (_, tn)) = (report(&amd, "mi300x.json.gz"), report(&nv, "h100.json.gz"));
    let g = gap(("amd", &ta.op_table()), ("nvidia", &tn.op_table()));
    let o = pair_overview(&c, Some(&g), [SideFacts::of(&ta), SideFacts::of(&tn)]);
    let html = pair_report(("mi300x.json.gz", "h100.json.gz"), &c, Some(&g), PairSides::Reports([&ta, &tn]), &o);
    assert!(html.starts_with("<!DOCTYPE html>"));
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} missing"));
    assert!(at(&escape_xml(&o.verdict.text)) < at("id=\"fusion\""));
    assert!(at("id=\"fusion\"") < at("id=\"kernels\"") && at("id=\"kernels\"") < at("id=\"time\""));
    assert_eq!(html.matches("data-testid=\"finding\"").count(), o.findings.len());
    for f in &o.findings {
        assert!(html.contains(&escape_xml(&f.text)), "{}", f.text);
    }
    // Tables keep their first rows and say how many more there are; numbers align right.
    assert!(html.contains("<h3>Kernel mapping (26 rows)</h3>"));
    assert!(html.contains("<th class=\"num\">amd time</th>"));
    let gap_rows = g.rows.len() + 1;
    if gap_rows > REPORT_ROWS {
        assert!(html.contains(&format!("{} more rows in the JSON export.", gap_rows - REPORT_ROWS)));
    }
    assert!(html.contains("@media print") && html.contains("break-before: page"));
    assert!(!tags(&html).iter().any(|t| t == "script"));
    // The fusion view draws the aligned layer, its one difference marked, inside the view.
    let rows = c.layer_alignment[0].rows.len();
    assert_eq!(html.matches("class=\"aligned-row\"").count(), rows);
    let differs = c.layer_alignment[0].rows.iter().filter(|r| r.difference.is_some()).count();
    assert_eq!(html.matches("data-differs=\"true\"").count(), differs);
    assert!(at("id=\"fusion\"") < at("aligned-row") && at("aligned-row") < at("id=\"kernels\""));
    assert!(html.contains("MI300X (AMD)") && html.contains("H100 SXM (NVIDIA)"));
}

#[test]
fn a_pair_from_a_share_link_has_its_fusion_but_no_roofline() {
    let (nv, amd) = (read("nvidia/hf_bert-small_eager_h100.json.gz"), read("amd/hf_bert-small_eager_mi300x.json.gz"));
    let c = compare(Input::new(&nv, None), Input::new(&amd, None));
    let ((_, ta), (_, tn)) = (report(&amd, "a"), report(&nv, "n"));
    let fusion = [ta.fusion.as_ref().unwrap(), tn.fusion.as_ref().unwrap()];
    let o = pair_overview(&c, None, [SideFacts::default(); 2]);
    let html = pair_report(("a", "n"), &c, None, PairSides::Fusion(fusion), &o);
    assert!(html.contains("amd: kernels as fusion groups") && html.contains("nvidia: fusion left on the table"));
    assert!(!html.contains("rooflines"));
    assert!(!html.contains("id=\"time\""), "no gap and no reports: no time view");
}
