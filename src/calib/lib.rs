//! Hardware calibration profiles: measured fusion speedups and the hardware they were measured on.
//!
//! * [`parse_calibration`] reads either file shape (a hardware profile with or without
//!   `fusion_profiles`, or a measured-subgraph file) into a [`CalibrationFile`].
//! * [`Verdict`] grades a measured speedup: strong ≥ 1.5×, moderate ≥ 1.1×, minimal ≥ 0.95×,
//!   else "fusion is slower".
//! * [`matching_pattern`] says which measured pattern a fusion group is an instance of, for the
//!   calibrated time model; [`pattern_mappings`] lists that mapping for display. The rules are
//!   in [`pattern`]: operators map to op types by [`OPERATOR_OP_TYPES`], a group matches a
//!   pattern when its op types (reshapes left out) equal the pattern's exactly, and when several
//!   patterns share a sequence the one with the lowest measured speedup is used.
//! * [`CalibReport`] is what the command line and the page show.
//!
//! ```
//! use fusionscope_calib::{matching_pattern, parse_calibration, CalibrationFile, Verdict};
//! use fusion::OpType;
//! let file = parse_calibration(r#"{"metadata": {"hardware_name": "X"},
//!     "fusion_profiles": {"Linear_Bias_ReLU": {"operators": ["Linear", "Bias", "ReLU"], "speedup_factor": 1.2}}}"#)
//!     .unwrap();
//! let CalibrationFile::Profile(profile) = file else { panic!("expected a hardware profile") };
//! let group = [OpType::Matmul, OpType::Elementwise, OpType::Elementwise];
//! let pattern = matching_pattern(&profile, &group).unwrap();
//! assert_eq!(pattern.name, "Linear_Bias_ReLU");
//! assert_eq!(Verdict::of_speedup(pattern.speedup_factor), Verdict::Moderate);
//! ```

pub mod pattern;
pub mod profile;
pub mod report;
pub mod verdict;

pub use pattern::{
    matching_pattern, operator_op_type, pattern_mappings, pattern_op_types, PatternMapping, UnmappedOperator,
    OPERATOR_OP_TYPES,
};
pub use profile::{
    parse_calibration, CalibError, CalibrationFile, CalibrationProfile, FusionPattern, MeasuredSubgraph,
    MeasuredSubgraphs,
};
pub use report::{CalibReport, PatternRow};
pub use verdict::Verdict;
