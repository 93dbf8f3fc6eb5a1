//! Chips and the roofline time model.
//!
//! [`chip`] holds the presets (TPU v2–v6p from the NeuSim configs, GPUs from vendor
//! datasheets) and reads a user's chip JSON; [`roofline`] turns an analysed op graph into
//! per-op and per-group times, unfused and fused; [`calibrated`] replaces the fused estimate
//! of groups that match a measured fusion pattern of a calibration profile. The closed forms and the comparison with the
//! NeuSim simulator are in `docs/time-model.md`.

pub mod calibrated;
pub mod chip;
pub mod detect;
pub mod peaks;
pub mod roofline;
pub mod time_view;

pub use calibrated::{apply_calibration, CalibratedGroup, CalibrationSummary};
pub use chip::{gpu_preset_names, parse_chip, preset, preset_names, Chip, ChipError};
pub use detect::{detect_chip, DetectedChip};
pub use peaks::{PeakKey, PeakUsed, Peaks, Precision, Unit};
pub use roofline::{
    estimate, estimate_repeated, roofline_chart, Bound, GroupTime, OpTime, RooflineChart, TimeError, TimeReport,
};
pub use time_view::{group_time_table, ChipChoice};
