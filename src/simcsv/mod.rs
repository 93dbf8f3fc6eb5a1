//! NPU simulator op tables (CSV). Filled in by the inputs work (issue 5).
