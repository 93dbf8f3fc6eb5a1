//! Seeded random op graphs, for benchmarks and property tests.
//!
//! The shape of the graphs is meant to look like real models rather than like uniform random
//! DAGs: most inputs come from the last few ops (layers feed the next layer), some from further
//! back (residual connections), and matmuls read a weight that no op produces.

use super::graph::{GraphBuilder, OpGraph, OpSpec, OpType};

/// splitmix64: small, fast, good enough for test data, and identical on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// A random graph of `n` ops in a topological file order.
pub fn random_graph(n: usize, seed: u64) -> OpGraph {
    let mut rng = SplitMix64::new(seed);
    let mut b = GraphBuilder::with_capacity(n);
    let dims = [64u64, 128, 256, 512, 1024];
    for i in 0..n {
        let op_type = match rng.below(100) {
            0..=19 => OpType::Matmul,
            20..=64 => OpType::Elementwise,
            65..=79 => OpType::Reduction,
            _ => OpType::Reshape,
        };
        let mut inputs: Vec<String> = Vec::with_capacity(3);
        let n_inputs = if i == 0 { 0 } else { 1 + rng.below(if op_type == OpType::Matmul { 1 } else { 2 }) as usize };
        for _ in 0..n_inputs {
            let back =
                if rng.below(10) == 0 { 1 + rng.below(i.min(1000) as u64) } else { 1 + rng.below(i.min(4) as u64) };
            inputs.push(format!("t{}", i as u64 - back));
        }
        if op_type == OpType::Matmul || i == 0 {
            inputs.push(format!("w{i}"));
        }
        let shape = [dims[rng.below(5) as usize], dims[rng.below(5) as usize]];
        let spec = OpSpec {
            name: format!("op{i}"),
            op_type,
            inputs,
            output: format!("t{i}"),
            shape: shape.to_vec(),
            bytes_per_element: 2,
        };
        b.add_op(spec).expect("generated names are unique");
    }
    b.build().expect("generated graphs are acyclic")
}
