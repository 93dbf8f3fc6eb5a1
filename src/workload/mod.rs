//! Model workload generators (LLM, MoE, DiT, DLRM) producing op graphs. Filled in by the inputs work (issue 5).
