//! Scatters: `aten::scatter_add(self, dim, index, src)` and its in-place form
//! `aten::scatter_add_`, the adjoint of a gather (`embedding.rs`): `self[index[i]] += src[i]`
//! along `dim`, one element of `src` per element of `index`.
//!
//! FLOPs: one add per index element. Bytes: the index read, and the part of `src` it covers
//! (`|index|` elements, `src` may be larger) read once. The out-of-place form first copies
//! `self` into its output: `self` read and the output written, `|self|` each. The in-place
//! form touches only the elements of `self` the index hits, each read and written; which ones
//! is not recorded, so they are counted as `min(|self|, |index|)`, the most there can be:
//! exact when the index hits distinct elements or covers all of `self`, and an over-count
//! (at most that bound) when indices repeat within part of `self`.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::error::{NoModel, Quantity};

/// One call of `scatter_add` (`inplace: false`) or `scatter_add_`.
pub fn scatter_add(args: &OpArgs, inplace: bool) -> Result<OpCost, NoModel> {
    let target = args.tensor(0, "the tensor scattered into")?;
    let index = args.tensor(2, "the index")?;
    let src = args.tensor(3, "the source")?;
    if index.shape().rank() != src.shape().rank() || index.dims().iter().zip(src.dims()).any(|(i, s)| i > s) {
        return Err(NoModel::Shapes(format!(
            "the index (input 2) {} is larger than the source (input 3) {}",
            index.shape(),
            src.shape()
        )));
    }
    let n = index.numel()?;
    let target_elements = if inplace { target.numel()?.min(n) } else { target.numel()? };
    let traffic = Traffic::new().tensor(index)?.elements(n, src.dtype(), src.index())?.elements(
        product(&[target_elements, 2], Quantity::Elements, target.index())?,
        target.dtype(),
        target.index(),
    )?;
    Ok(OpCost::exact(Family::Embedding, Unit::Vector, target.dtype(), n, traffic.total()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tests/data/multirank/hta_sampled_128rank_rank0.json.gz` (TorchRec, no Concrete
    /// Inputs): 8,856,548 per-sample weights summed into 50 floats.
    #[test]
    fn multirank_scatter_add_into_a_small_tensor() {
        let args = OpArgs::of_text("[[50], [], [8856548], [8856548]]", r#"["float", "Scalar", "long", "float"]"#, None);
        let n = 8_856_548u64;
        let c = scatter_add(&args, true).unwrap();
        assert_eq!((c.flops, c.bytes), (n, n * 8 + n * 4 + 2 * 50 * 4));
        let c = scatter_add(&args, false).unwrap();
        assert_eq!(c.bytes, n * 8 + n * 4 + 2 * 50 * 4);
    }

    #[test]
    fn few_indices_into_a_large_tensor() {
        let args = OpArgs::of_text(
            "[[1000, 64], [], [10, 64], [20, 64]]",
            r#"["c10::BFloat16", "Scalar", "long int", "c10::BFloat16"]"#,
            Some(r#"["", "0", "", ""]"#),
        );
        let c = scatter_add(&args, true).unwrap();
        assert_eq!(c.bytes, 640 * 8 + 640 * 2 + 2 * 640 * 2);
        let c = scatter_add(&args, false).unwrap();
        assert_eq!(c.bytes, 640 * 8 + 640 * 2 + 2 * 64_000 * 2);
        let bad = OpArgs::of_text(
            "[[1000, 64], [], [30, 64], [20, 64]]",
            r#"["c10::BFloat16", "Scalar", "long int", "c10::BFloat16"]"#,
            None,
        );
        assert_eq!(
            scatter_add(&bad, true).unwrap_err().to_string(),
            "the index (input 2) [30, 64] is larger than the source (input 3) [20, 64]"
        );
    }
}
