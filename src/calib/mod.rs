//! Hardware calibration profiles (measured fusion speedups). Filled in by the inputs work (issue 5).
