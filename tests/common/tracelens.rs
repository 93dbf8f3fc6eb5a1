//! TraceLens's report files (tests/data/reference/tracelens/): CSV rows, and its Python-list
//! cells in the JSON form traces write.

use std::collections::BTreeMap;

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
