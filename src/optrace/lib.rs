//! Op traces in the optrace text form (`docs/optrace.md`): Nova's case view and the fusion
//! analysis of the same trace.
//!
//! The stages, each its own module:
//!
//! 1. [`parse`]: lines into [`Record`]s (stray text before a record ignored, lines that are
//!    not records skipped and counted, a malformed record an error naming its line);
//! 2. [`address`]: every tensor id placed by Nova's bump allocator from 5 TiB;
//! 3. [`case`]: per instruction, the case type and case shape (unknown ops listed as
//!    unmapped, never fatal);
//! 4. [`convert`]: the trace as a fusion op graph, which [`fusion::analyse`] groups.
//!
//! [`analyze_optrace`] runs them all and returns the [`OptraceReport`] that the command line
//! prints and the page shows.
//!
//! ```
//! use fusionscope_optrace::analyze_optrace;
//! let report = analyze_optrace(
//!     "0:0:0 %10:<1x128x2304xf16> = nova_plus.1.0.0.dot(%7:<1x128x768xf16>, %8:<768x2304xf16>, %9:<2304xf16>)\n\
//!      0:0:0 %11:<1x128x2304xf16> = nova_plus.1.0.0.gelu(%10:<1x128x2304xf16>)\n",
//! )
//! .unwrap();
//! assert_eq!(report.cases[0].case_shape.to_string(), "[1, 128, 768, 2304]");
//! assert_eq!(report.cases[0].input_addrs[0], 5 << 40);
//! assert_eq!(report.analysis.groups, [["dot %10", "gelu %11"]]);
//! ```

pub mod address;
pub mod case;
pub mod convert;
pub mod dtype;
pub mod parse;
pub mod view;

use serde::Serialize;
use thiserror::Error;

pub use address::{hex, TensorTable, Warning, BASE_ADDRESS};
pub use case::{Case, CaseShape, CaseType, CaseView, Unmapped};
pub use convert::{to_graph, Conversion, ConvertError, GraphOp, Role};
pub use dtype::Dtype;
pub use parse::{looks_like_optrace, parse_optrace, OpTrace, ParseError, Record, TensorRef, Value};

use fusion::{analyse, AnalysisReport, OpGraph};
use table::Table;

/// Why an op trace cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptraceError {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Convert(#[from] ConvertError),
}

/// Everything shown of one op trace; its JSON is the `optrace --json` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptraceReport {
    pub cases: Vec<Case>,
    /// Distinct names of the ops that have no case, in order of appearance.
    pub unmapped: Vec<String>,
    /// Lines that are not records.
    pub skipped_lines: usize,
    /// The fusion analysis of the converted op graph (the object of `docs/fusion-rules.md`).
    pub analysis: AnalysisReport,
    /// Each unmapped instruction with its line and the reason.
    pub unmapped_cases: Vec<Unmapped>,
    /// What had to be assumed (unknown dtypes, untyped tensors).
    pub warnings: Vec<Warning>,
    /// The ops of the converted graph, with the line and role each came from.
    pub graph_ops: Vec<GraphOp>,
    pub records: usize,
}

/// Parses, places, views and converts an op trace, then analyses its fusion groups.
pub fn analyze_optrace(text: &str) -> Result<OptraceReport, OptraceError> {
    analyze_optrace_with_graph(text).map(|(report, _)| report)
}

/// [`analyze_optrace`], also returning the converted op graph (which the page's fusion-group
/// view and traffic bars draw; its analysis is the report's).
pub fn analyze_optrace_with_graph(text: &str) -> Result<(OptraceReport, OpGraph), OptraceError> {
    let trace = parse_optrace(text)?;
    let (tensors, warnings) = TensorTable::build(&trace);
    let view = CaseView::build(&trace, &tensors);
    let conversion = to_graph(&trace, &tensors)?;
    let analysis = analyse(&conversion.graph).report(&conversion.graph);
    let report = OptraceReport {
        unmapped: view.unmapped_ops(),
        cases: view.cases,
        skipped_lines: trace.skipped_lines.len(),
        analysis,
        unmapped_cases: view.unmapped,
        warnings,
        graph_ops: conversion.ops,
        records: trace.records.len(),
    };
    Ok((report, conversion.graph))
}

impl OptraceReport {
    /// Nova's case view as a table: shapes per use, addresses in decimal and hex.
    pub fn case_table(&self) -> Table {
        let mut t = Table::new(&[
            ">line",
            "op",
            "case type",
            "case shape",
            "dtype",
            "inputs",
            "outputs",
            "input addresses",
            "output addresses",
        ]);
        let tensors = |ids: &[u64], shapes: &[Vec<u64>]| {
            ids.iter().zip(shapes).map(|(id, s)| format!("%{id} {}", shape_text(s))).collect::<Vec<_>>().join("; ")
        };
        let addrs = |a: &[u64]| a.iter().map(|&a| format!("{a} ({})", hex(a))).collect::<Vec<_>>().join("; ");
        for c in &self.cases {
            t.row([
                c.line.to_string(),
                c.op.clone(),
                c.case_type.as_str().to_string(),
                c.case_shape.to_string(),
                c.dtype.to_string(),
                tensors(&c.input_ids, &c.input_shapes),
                tensors(&c.output_ids, &c.output_shapes),
                addrs(&c.input_addrs),
                addrs(&c.output_addrs),
            ]);
        }
        t
    }

    /// The unmapped instructions with their reasons.
    pub fn unmapped_table(&self) -> Table {
        let mut t = Table::new(&[">line", "op", "why it has no case"]);
        for u in &self.unmapped_cases {
            t.row([u.line.to_string(), u.op.clone(), u.reason.clone()]);
        }
        t
    }
}

fn shape_text(shape: &[u64]) -> String {
    format!("[{}]", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}
