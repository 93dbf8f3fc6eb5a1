//! Scatters: `aten::scatter_add(self, dim, index, src)` and `aten::scatter(self, dim, index,
//! src | value, reduce?)`, and their in-place forms `scatter_add_`, `scatter_`: the adjoint of a
//! gather (`embedding.rs`), `self[index[i]] = src[i]` (`+=` for `scatter_add` or a `reduce`)
//! along `dim`, one element of `src` per element of `index`.
//!
//! FLOPs: one per index element when it accumulates (`scatter_add`, `scatter` with `reduce`),
//! none for a plain overwrite. Bytes: the index read, and the part of `src` it covers (`|index|`
//! elements, `src` may be larger; a `value` overload reads no `src`) read once. The
//! out-of-place form first copies `self` into its output: `self` read and the output written,
//! `|self|` each. The in-place form touches only the elements of `self` the index hits,
//! written, and read first when it accumulates; which ones is not recorded, so they are counted
//! as `min(|self|, |index|)`, the most there can be: exact when the index hits distinct
//! elements or covers all of `self`, and an over-count (at most that bound) when indices repeat
//! within part of `self`.

use super::args::{Input, OpArgs};
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// One call of `scatter_add` (`inplace: false`) or `scatter_add_`.
pub fn scatter_add(args: &OpArgs, inplace: bool) -> Result<OpCost, NoCost> {
    cost(args, inplace, true)
}

/// One call of `scatter` (`inplace: false`) or `scatter_`: its `.src` and `.value` overloads
/// have 4 inputs; `.reduce` and `.value_reduce` a fifth, the `reduce` string (which the
/// profiler does not record: its arity tells them apart), and accumulate as `scatter_add` does.
pub fn scatter(args: &OpArgs, inplace: bool) -> Result<OpCost, NoCost> {
    cost(args, inplace, args.len() >= 5)
}

fn cost(args: &OpArgs, inplace: bool, accumulates: bool) -> Result<OpCost, NoCost> {
    let target = args.tensor(0, "the tensor scattered into")?;
    let index = args.tensor(2, "the index")?;
    let src = match args.input(3) {
        Some(Input::Scalar(_)) => None,
        _ => Some(args.tensor(3, "the source")?),
    };
    if let Some(src) = src {
        if index.shape().rank() != src.shape().rank() || index.dims().iter().zip(src.dims()).any(|(i, s)| i > s) {
            return Err(NoCost::Shapes(format!(
                "the index (input 2) {} is larger than the source (input 3) {}",
                index.shape(),
                src.shape()
            )));
        }
    }
    let n = index.numel()?;
    // The elements of `self` (or of its copy, the output) that are moved, and how often each.
    let (target_elements, passes) = match (inplace, accumulates) {
        (true, true) => (target.numel()?.min(n), 2),
        (true, false) => (target.numel()?.min(n), 1),
        (false, _) => (target.numel()?, 2),
    };
    let mut traffic = Traffic::new().tensor(index)?;
    if let Some(src) = src {
        traffic = traffic.elements(n, src.dtype(), src.index())?;
    }
    let traffic = traffic.elements(
        product(&[target_elements, passes], Quantity::Elements, target.index())?,
        target.dtype(),
        target.index(),
    )?;
    let flops = if accumulates { n } else { 0 };
    Ok(OpCost::exact(Family::Embedding, Unit::Vector, target.dtype(), flops, traffic.total()))
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

    /// `tests/data/multirank/hta_sampled_128rank_rank0.json.gz`: `scatter_(self[2, 2048, 1],
    /// 0, index[1, 2048, 1], src[1, 2048, 1])`, an overwrite of 2,048 of its 4,096 floats.
    #[test]
    fn multirank_scatter_overwrites() {
        let args = OpArgs::of_text(
            "[[2, 2048, 1], [], [1, 2048, 1], [1, 2048, 1]]",
            r#"["float", "Scalar", "long", "float"]"#,
            None,
        );
        let c = scatter(&args, true).unwrap();
        assert_eq!((c.flops, c.bytes), (0, 2048 * 8 + 2048 * 4 + 2048 * 4));
        let c = scatter(&args, false).unwrap();
        assert_eq!(c.bytes, 2048 * 8 + 2048 * 4 + 2 * 4096 * 4);
        // `scatter_.value(self, dim, index, value)` reads no source; with a `reduce` it adds.
        let value = OpArgs::of_text(
            "[[2, 2048, 1], [], [1, 2048, 1], []]",
            r#"["float", "Scalar", "long", "Scalar"]"#,
            Some(r#"["", "0", "", "1."]"#),
        );
        assert_eq!(scatter(&value, true).unwrap().bytes, 2048 * 8 + 2048 * 4);
        let reduce = OpArgs::of_text(
            "[[2, 2048, 1], [], [1, 2048, 1], [1, 2048, 1], []]",
            r#"["float", "Scalar", "long", "float", ""]"#,
            Some(r#"["", "0", "", "", ""]"#),
        );
        let c = scatter(&reduce, true).unwrap();
        assert_eq!((c.flops, c.bytes), (2048, 2048 * 8 + 2048 * 4 + 2 * 2048 * 4));
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
