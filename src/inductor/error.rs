//! What can go wrong reading a compile log, in words a user can act on. The caller names the
//! file; these name the artifact and the line.

use thiserror::Error;

/// A compile log that cannot be read at all.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LogError {
    #[error("not a torch.compile structured log: no line has the `...] {{` header TORCH_TRACE writes")]
    NotALog,
    #[error("the log is {bytes} bytes, more than the {limit} bytes a compile log may have")]
    TooLarge { bytes: usize, limit: usize },
    #[error("the log records no Inductor provenance: no post-grad graph (`inductor_post_grad_graph`, `after_post_grad_graph`) with a kernel-to-node artifact (`inductor_provenance_tracking_node_mappings`, `inductor_generated_kernel_to_post_grad_nodes` or `inductor_triton_kernel_to_post_grad_nodes`); TORCH_TRACE records them from PyTorch 2.7 on, and since 2.9 only with INDUCTOR_PROVENANCE=1")]
    NoProvenance,
    #[error("more than {limit} compiled graphs")]
    TooManyGraphs { limit: usize },
}

/// A graph's text that cannot be parsed: the line inside the artifact's payload, and why.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line} of the graph: {message}")]
pub struct GraphError {
    pub line: usize,
    pub message: String,
}
