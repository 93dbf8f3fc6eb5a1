//! The NeuSim/ReGate NPU simulator's op tables (CSV, ~70 columns): one row per op with its
//! `Fusion index`, `Description`, `OpType` (MXU, VPU, ICINoCompute), `Count` (how many times
//! it runs: layers, or layers × decode steps), `Bounded-by`, times in ns (`Execution time`,
//! `Compute time`, `Memory time`, `ICI/NVLink time`), `Bytes accessed`, `FLOP Count` and the
//! tensor shapes. Rows are grouped by fusion index; [`compare()`] puts a table beside our
//! analysis of the same model and chip.

pub mod compare;
mod error;
mod reader;
pub mod setup;
pub mod view;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

pub use compare::{compare, Comparison, RoleComparison};
pub use error::SimCsvError;
pub use reader::{read_records, Record};
pub use setup::{infer_setup, side_by_side, InferredSetup, SideBySide, SimSetup};

/// What limits an op in the simulator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimBound {
    Compute,
    Memory,
    /// Inter-chip links (ICI on TPUs, NVLink on GPUs).
    Interconnect,
    Other(String),
}

impl SimBound {
    fn parse(s: &str) -> SimBound {
        match s.trim() {
            "Compute" => SimBound::Compute,
            "Memory" => SimBound::Memory,
            "ICI/NVLink" => SimBound::Interconnect,
            other => SimBound::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            SimBound::Compute => "compute",
            SimBound::Memory => "memory",
            SimBound::Interconnect => "interconnect",
            SimBound::Other(s) => s,
        }
    }
}

/// One op of the simulator's table. Times are per execution, in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRow {
    /// 1-based line of the CSV.
    pub line: usize,
    pub fusion_index: u64,
    pub description: String,
    /// `MXU`, `VPU`, `ICINoCompute` …
    pub unit: String,
    /// Executions in the whole run.
    pub count: u64,
    pub bound: SimBound,
    pub execution_ns: f64,
    pub compute_ns: f64,
    pub memory_ns: f64,
    pub interconnect_ns: f64,
    pub bytes: u64,
    pub flops: u64,
    pub input_shapes: String,
    pub output_shapes: String,
}

/// Rows sharing a fusion index: one fused kernel of the simulator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimGroup {
    pub fusion_index: u64,
    /// Indices into [`SimTable::rows`].
    pub rows: Vec<usize>,
    pub descriptions: Vec<String>,
    /// Executions (the largest count of its rows).
    pub count: u64,
    /// Sum of its rows' execution times, one execution, ns.
    pub execution_ns: f64,
    /// `Σ execution × count` over its rows, ns.
    pub total_ns: f64,
    /// Bound of the row that takes the most total time.
    pub bound: SimBound,
    pub flops: u64,
    pub bytes: u64,
}

/// A parsed table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimTable {
    pub rows: Vec<SimRow>,
    /// In the order each fusion index first appears.
    pub groups: Vec<SimGroup>,
    /// `Σ execution × count` over all rows, ns.
    pub total_ns: f64,
}

struct Columns {
    index: Vec<Option<usize>>,
}

const REQUIRED: [&str; 10] = [
    "Fusion index",
    "Description",
    "OpType",
    "Count",
    "Bounded-by",
    "Execution time",
    "Compute time",
    "Memory time",
    "Bytes accessed",
    "FLOP Count",
];
const OPTIONAL: [&str; 3] = ["ICI/NVLink time", "Input Tensor Shapes", "Output Tensor Shapes"];

impl Columns {
    fn new(header: &[String]) -> Result<Columns, SimCsvError> {
        let find = |name: &str| header.iter().position(|h| h.trim() == name);
        for name in REQUIRED {
            find(name).ok_or(SimCsvError::MissingColumn(name))?;
        }
        Ok(Columns { index: REQUIRED.iter().chain(OPTIONAL.iter()).map(|n| find(n)).collect() })
    }

    fn get<'a>(&self, r: &'a Record, name: &'static str) -> &'a str {
        let pos = REQUIRED.iter().chain(OPTIONAL.iter()).position(|n| *n == name).expect("known column");
        self.index[pos].and_then(|i| r.fields.get(i)).map(|s| s.trim()).unwrap_or("")
    }

    fn number(&self, r: &Record, name: &'static str) -> Result<f64, SimCsvError> {
        let s = self.get(r, name);
        if s.is_empty() && OPTIONAL.contains(&name) {
            return Ok(0.0);
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(SimCsvError::BadNumber { line: r.line, column: name, value: s.to_string() }),
        }
    }

    fn integer(&self, r: &Record, name: &'static str) -> Result<u64, SimCsvError> {
        let v = self.number(r, name)?;
        if v.fract() != 0.0 || v > u64::MAX as f64 {
            return Err(SimCsvError::BadNumber { line: r.line, column: name, value: self.get(r, name).to_string() });
        }
        Ok(v as u64)
    }
}

/// Whether a dropped file is a simulator op table: its first line is a CSV header naming the
/// `Fusion index` and `Bounded-by` columns. Cheap: reads only the first line.
pub fn looks_like_sim_csv(text: &str) -> bool {
    let first = text.strip_prefix('\u{feff}').unwrap_or(text).lines().next().unwrap_or("");
    first.contains("Fusion index") && first.contains("Bounded-by") && first.contains(',')
}

/// Reads a simulator op table.
pub fn parse_sim_csv(text: &str) -> Result<SimTable, SimCsvError> {
    let records = read_records(text)?;
    let (header, body) = records.split_first().ok_or(SimCsvError::Empty)?;
    let cols = Columns::new(&header.fields)?;
    let mut rows = Vec::with_capacity(body.len());
    for r in body {
        if r.fields.len() != header.fields.len() {
            return Err(SimCsvError::FieldCount { line: r.line, expected: header.fields.len(), got: r.fields.len() });
        }
        rows.push(SimRow {
            line: r.line,
            fusion_index: cols.integer(r, "Fusion index")?,
            description: cols.get(r, "Description").to_string(),
            unit: cols.get(r, "OpType").to_string(),
            count: cols.integer(r, "Count")?,
            bound: SimBound::parse(cols.get(r, "Bounded-by")),
            execution_ns: cols.number(r, "Execution time")?,
            compute_ns: cols.number(r, "Compute time")?,
            memory_ns: cols.number(r, "Memory time")?,
            interconnect_ns: cols.number(r, "ICI/NVLink time")?,
            bytes: cols.integer(r, "Bytes accessed")?,
            flops: cols.integer(r, "FLOP Count")?,
            input_shapes: cols.get(r, "Input Tensor Shapes").to_string(),
            output_shapes: cols.get(r, "Output Tensor Shapes").to_string(),
        });
    }
    Ok(SimTable::of_rows(rows))
}

impl SimTable {
    /// Rows grouped by fusion index, with the total.
    fn of_rows(rows: Vec<SimRow>) -> SimTable {
        let groups = group_rows(&rows);
        let total_ns = rows.iter().map(|r| r.execution_ns * r.count as f64).sum();
        SimTable { rows, groups, total_ns }
    }

    /// The table of the rows `keep` accepts, regrouped (e.g. one phase of a combined table).
    pub fn only_rows(&self, keep: impl Fn(&SimRow) -> bool) -> SimTable {
        SimTable::of_rows(self.rows.iter().filter(|r| keep(r)).cloned().collect())
    }
}

/// Groups rows by fusion index, in one pass. Everything a row is compared with is kept at hand
/// (the group of each index, each group's heaviest row and its descriptions so far): a table
/// may have 100,000 rows, all in one group or each in its own, and searching the groups, the
/// group's rows or its descriptions for each row would be quadratic.
fn group_rows(rows: &[SimRow]) -> Vec<SimGroup> {
    let mut groups: Vec<SimGroup> = Vec::new();
    let mut group_of: HashMap<u64, usize> = HashMap::new();
    // Per group: the largest `execution × count` of its rows so far, and its descriptions.
    let mut heaviest: Vec<f64> = Vec::new();
    let mut descriptions: Vec<HashSet<&str>> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let gi = *group_of.entry(r.fusion_index).or_insert_with(|| {
            groups.push(SimGroup {
                fusion_index: r.fusion_index,
                rows: Vec::new(),
                descriptions: Vec::new(),
                count: 0,
                execution_ns: 0.0,
                total_ns: 0.0,
                bound: r.bound.clone(),
                flops: 0,
                bytes: 0,
            });
            heaviest.push(0.0);
            descriptions.push(HashSet::new());
            groups.len() - 1
        });
        let g = &mut groups[gi];
        let weight = r.execution_ns * r.count as f64;
        if weight > heaviest[gi] {
            heaviest[gi] = weight;
            g.bound = r.bound.clone();
        }
        g.rows.push(i);
        if descriptions[gi].insert(&r.description) {
            g.descriptions.push(r.description.clone());
        }
        g.count = g.count.max(r.count);
        g.execution_ns += r.execution_ns;
        g.total_ns += r.execution_ns * r.count as f64;
        g.flops = g.flops.saturating_add(r.flops);
        g.bytes = g.bytes.saturating_add(r.bytes);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count";

    #[test]
    fn rows_group_by_fusion_index() {
        let t = parse_sim_csv(&format!(
            "{HEADER}\n3,-Q-3,MXU,32,Compute,10,10,2,100,1000\n3,-K-3,MXU,32,Compute,10,10,2,100,1000\n4,add,VPU,32,Memory,5,1,5,50,10\n"
        ))
        .unwrap();
        assert_eq!(t.groups.len(), 2);
        assert_eq!(t.groups[0].rows, [0, 1]);
        assert_eq!(t.groups[0].execution_ns, 20.0);
        assert_eq!(t.groups[1].bound, SimBound::Memory);
        assert_eq!(t.total_ns, (10.0 + 10.0 + 5.0) * 32.0);
    }

    #[test]
    fn detector_reads_the_header_only() {
        assert!(looks_like_sim_csv(&format!("{HEADER}\n")));
        assert!(!looks_like_sim_csv("name,op_type\nFusion index,Bounded-by"));
        assert!(!looks_like_sim_csv(""));
    }

    #[test]
    fn errors_name_the_line_and_column() {
        assert_eq!(parse_sim_csv("").unwrap_err(), SimCsvError::Empty);
        assert_eq!(parse_sim_csv("Fusion index,Description\n").unwrap_err(), SimCsvError::MissingColumn("OpType"));
        let e = parse_sim_csv(&format!("{HEADER}\n3,x,MXU,many,Compute,1,1,1,1,1\n")).unwrap_err();
        assert_eq!(e, SimCsvError::BadNumber { line: 2, column: "Count", value: "many".into() });
        let e = parse_sim_csv(&format!("{HEADER}\n3,x,MXU\n")).unwrap_err();
        assert_eq!(e, SimCsvError::FieldCount { line: 2, expected: 10, got: 3 });
    }
}
