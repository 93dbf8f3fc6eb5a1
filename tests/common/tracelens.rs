//! TraceLens's report files (tests/data/reference/tracelens/): CSV rows, and its Python-list
//! cells in the JSON form traces write.

use std::collections::{BTreeMap, HashMap};

use fusionscope::analysis::time::timeline::Timeline;

/// One CSV file as rows of (column → cell). RFC 4180: quoted cells may hold commas, quotes
/// (doubled) and line breaks.
pub fn csv(rel: &str) -> Vec<BTreeMap<String, String>> {
    let text = super::data_text(rel);
    let mut records: Vec<Vec<String>> = Vec::new();
    let (mut record, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => record.push(std::mem::take(&mut cell)),
            ('\n', false) => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            ('\r', false) => {}
            (c, _) => cell.push(c),
        }
    }
    if !cell.is_empty() || !record.is_empty() {
        record.push(cell);
        records.push(record);
    }
    let header = records.remove(0);
    records.into_iter().map(|r| header.iter().cloned().zip(r).collect()).collect()
}

/// The report writes types and concrete values as Python lists (`['c10::BFloat16', '']`);
/// the trace writes JSON (`["c10::BFloat16", ""]`). None of these values holds a quote.
pub fn python_list_to_json(text: &str) -> String {
    text.replace('\'', "\"")
}

/// `ops_unique_args.csv` writes tuples: `((8944, 1024), (1024,))` → `[[8944, 1024], [1024]]`.
pub fn python_tuple_to_json(text: &str) -> String {
    let mut s = python_list_to_json(text).replace('(', "[").replace(')', "]");
    while s.contains(",]") {
        s = s.replace(",]", "]");
    }
    s
}

/// `type,time ms,percent` rows of TraceLens's `gpu_timeline.csv` in `folder`, in µs by type.
pub fn reference_timeline(folder: &str) -> HashMap<String, f64> {
    super::data_text(&format!("reference/tracelens/{folder}/gpu_timeline.csv"))
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?.to_string(), f.next()?.parse::<f64>().ok()? * 1000.0))
        })
        .collect()
}

/// Our figure for each row of `gpu_timeline.csv`, by its `type`.
pub fn timeline_figures(t: &Timeline) -> [(&'static str, f64); 8] {
    [
        ("total_time", t.total_us),
        ("busy_time", t.busy_us),
        ("idle_time", t.idle_us),
        ("computation_time", t.computation_us),
        ("exposed_comm_time", t.exposed_communication_us),
        ("total_comm_time", t.communication_us),
        ("total_memcpy_time", t.memcpy_us),
        ("exposed_memcpy_time", t.exposed_memcpy_us),
    ]
}
