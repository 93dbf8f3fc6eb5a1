//! Op-graph fusion: groups and global-memory traffic, exactly as `docs/fusion-rules.md` states.
//!
//! ```
//! use fusionscope_fusion::{analyse, parse_graph};
//! let graph = parse_graph(r#"[
//!   {"name": "mm", "op_type": "matmul", "inputs": ["x", "w"], "output": "y", "shape": [4, 4], "bytes_per_element": 2},
//!   {"name": "relu", "op_type": "elementwise", "inputs": ["y"], "output": "z", "shape": [4, 4], "bytes_per_element": 2}
//! ]"#).unwrap();
//! let analysis = analyse(&graph);
//! assert_eq!(analysis.grouping.groups.len(), 1);
//! assert!(analysis.traffic.fused.total() < analysis.traffic.unfused.total());
//! ```

pub mod analysis;
pub mod error;
pub mod graph;
pub mod group;
pub mod json;
mod order;
pub mod random;
pub mod summary;
pub mod tables;
pub mod traffic;
pub mod transformer;

pub use analysis::{analyse, Analysis, AnalysisReport};
pub use error::{GraphError, Location};
pub use graph::{GraphBuilder, Op, OpGraph, OpId, OpSpec, OpType, TensorId};
pub use group::{GroupId, Grouping};
pub use json::parse_graph;
pub use traffic::Traffic;
