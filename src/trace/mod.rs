//! PyTorch-profiler (Kineto) trace analysis. Filled in by the trace work (issue 3).
