//! Gathers: `aten::embedding`, `aten::index_select`, `aten::gather`.
//!
//! No FLOPs. Bytes: the indices read once, and each gathered element read once from the table
//! and written once to the output (`2 · outputs · size`); the rest of the table is not touched,
//! so its size does not count.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// `embedding(weight[V, D…], indices, padding_idx, scale_grad_by_freq, sparse)`: one row of
/// the table per index.
pub fn embedding(args: &OpArgs) -> Result<OpCost, NoCost> {
    let table = args.tensor(0, "the table")?;
    let indices = args.tensor(1, "the indices")?;
    let row = match table.dims() {
        [_, rest @ ..] => product(rest, Quantity::Elements, table.index())?,
        [] => return Err(NoCost::Shapes("embedding needs a table of 1 or more dimensions: input 0 is []".to_string())),
    };
    let outputs = product(&[indices.numel()?, row], Quantity::Elements, indices.index())?;
    gathered(args, 0, 1, outputs)
}

/// `index_select(self, dim, index)`: the input with dimension `dim` cut down to the indexed
/// entries.
pub fn index_select(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let index = args.tensor(2, "the index")?;
    let dim = args.int(1, "dim")?.ok_or(NoCost::Input { input: 1, expected: "dim", found: "absent" })?;
    let axis = x.shape().axis(dim).or((x.shape().rank() == 0).then_some(0));
    let Some(axis) = axis else {
        return Err(NoCost::Shapes(format!("dim {dim} (input 1) is out of range for input 0 {}", x.shape())));
    };
    let mut out = x.dims().to_vec();
    if let Some(d) = out.get_mut(axis) {
        *d = index.numel()?;
    }
    let outputs = product(&out, Quantity::Elements, x.index())?;
    gathered(args, 0, 2, outputs)
}

/// `gather(self, dim, index, sparse_grad)`: one element per index.
pub fn gather(args: &OpArgs) -> Result<OpCost, NoCost> {
    let index = args.tensor(2, "the index")?;
    gathered(args, 0, 2, index.numel()?)
}

fn gathered(args: &OpArgs, source: usize, indices: usize, outputs: u64) -> Result<OpCost, NoCost> {
    let src = args.tensor(source, "the source")?;
    let idx = args.tensor(indices, "the indices")?;
    let moved = product(&[outputs, 2], Quantity::Elements, src.index())?;
    let bytes = Traffic::new().tensor(idx)?.elements(moved, src.dtype(), src.index())?;
    Ok(OpCost::exact(Family::Embedding, Unit::Vector, src.dtype(), 0, bytes.total()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::RawArgs;

    fn args(dims: &str, types: &str, concrete: &str) -> OpArgs {
        OpArgs::of_text(dims, types, Some(concrete))
    }

    #[test]
    fn an_expanded_index_is_read_at_the_indices_it_holds() {
        // SGLang's embedding as a gather: the 15,360 token ids expanded to [15360, 4096].
        let raw = |strides| RawArgs {
            input_dims: Some("[[151936, 4096], [], [15360, 4096], [], [15360, 4096]]"),
            input_type: Some(r#"["c10::BFloat16", "Scalar", "long int", "Scalar", "c10::BFloat16"]"#),
            concrete_inputs: Some(r#"["", "0", "", "False", ""]"#),
            input_strides: strides,
        };
        let gathered = 2 * 15_360 * 4096 * 2;
        let expanded = gather(&OpArgs::parse(raw(Some("[[4096, 1], [], [1, 0], [], [4096, 1]]"))).unwrap()).unwrap();
        assert_eq!(expanded.bytes, gathered + 15_360 * 8);
        // Without strides, or with strides that do not fit, the index is read at its shape.
        for strides in [None, Some("[[4096, 1], [], [1, 0, 0], [], [4096, 1]]"), Some("[[1]]"), Some("not json")] {
            let c = gather(&OpArgs::parse(raw(strides)).unwrap()).unwrap();
            assert_eq!(c.bytes, gathered + 15_360 * 4096 * 8, "{strides:?}");
        }
    }

    #[test]
    fn qwen_embedding_and_its_index_select() {
        let rows = 16 * 559;
        let e = embedding(&args(
            "[[151936, 1024], [16, 559], [], [], []]",
            r#"["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "-1", "False", "False"]"#,
        ))
        .unwrap();
        assert_eq!((e.flops, e.bytes, e.family), (0, rows * 8 + 2 * rows * 1024 * 2, Family::Embedding));
        let s = index_select(&args(
            "[[151936, 1024], [], [8944]]",
            r#"["c10::BFloat16", "Scalar", "long int"]"#,
            r#"["", "0", ""]"#,
        ))
        .unwrap();
        assert_eq!(s, e);
    }

    #[test]
    fn gather_one_element_per_index() {
        let g = gather(&args(
            "[[25136, 2880], [], [888, 2880], [], [888, 2880]]",
            r#"["c10::BFloat16", "Scalar", "long int", "Scalar", "c10::BFloat16"]"#,
            r#"["", "0", "", "False", ""]"#,
        ))
        .unwrap();
        let n = 888 * 2880;
        assert_eq!(g.bytes, n * 8 + 2 * n * 2);
    }
}
