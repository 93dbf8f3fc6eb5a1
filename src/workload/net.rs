//! A thin layer over [`GraphBuilder`] for generators: ops named `prefix.op`, each op's output
//! tensor named after the op, weights declared with the model's element size.

use fusion::{GraphBuilder, OpGraph, OpSpec, OpType};

use super::WorkloadError;

pub(crate) struct Net {
    builder: GraphBuilder,
    bpe: u64,
    /// Repeat count given to each op added, in op order.
    pub(crate) op_repeat: Vec<u64>,
    /// The repeat the next ops get.
    pub(crate) repeat: u64,
}

/// A shape as the graph builder takes it; a dimension above `i64::MAX` is an error naming the
/// tensor.
fn dims(tensor: &str, shape: &[u64]) -> Result<Vec<i64>, WorkloadError> {
    let too_large = || WorkloadError::TooLarge(format!("tensor \"{tensor}\" has a dimension above 2^63 - 1"));
    shape.iter().map(|&d| i64::try_from(d).map_err(|_| too_large())).collect()
}

impl Net {
    pub(crate) fn new(bpe: u64) -> Self {
        Net { builder: GraphBuilder::new(), bpe, op_repeat: Vec::new(), repeat: 1 }
    }

    /// Declares a tensor no op produces (input, weight, cache) and returns its name.
    pub(crate) fn input(&mut self, name: &str, shape: &[u64]) -> Result<String, WorkloadError> {
        let bpe = i64::try_from(self.bpe).map_err(|_| WorkloadError::Internal(format!("element size {}", self.bpe)))?;
        self.builder
            .declare_tensor(name, &dims(name, shape)?, Some(bpe))
            .map_err(|e| WorkloadError::Internal(e.to_string()))?;
        Ok(name.to_string())
    }

    /// Adds op `name` whose output tensor is also called `name`; returns that name.
    pub(crate) fn op(
        &mut self,
        name: &str,
        op_type: OpType,
        inputs: &[&str],
        shape: &[u64],
    ) -> Result<String, WorkloadError> {
        dims(name, shape)?;
        self.builder
            .add_op(OpSpec::new(name, op_type, inputs, name, shape, self.bpe))
            .map_err(|e| WorkloadError::Internal(e.to_string()))?;
        self.op_repeat.push(self.repeat);
        Ok(name.to_string())
    }

    pub(crate) fn len(&self) -> usize {
        self.op_repeat.len()
    }

    pub(crate) fn build(self) -> Result<(OpGraph, Vec<u64>), WorkloadError> {
        use fusion::GraphError;
        let graph = self.builder.build().map_err(|e| match e {
            GraphError::SizeOverflow { .. } | GraphError::TrafficOverflow { .. } => {
                WorkloadError::TooLarge(e.to_string())
            }
            other => WorkloadError::Internal(other.to_string()),
        })?;
        Ok((graph, self.op_repeat))
    }
}
