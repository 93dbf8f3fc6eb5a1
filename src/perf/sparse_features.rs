//! FBGEMM's operators on sparse features in the jagged layout TorchRec uses (a `lengths` tensor
//! of segment sizes, one per feature and sample, and a flat `values`/`indices` tensor holding
//! the segments one after another): `fbgemm::permute_2D_sparse_data`,
//! `fbgemm::permute_1D_sparse_data`, `fbgemm::permute_sparse_features`,
//! `fbgemm::block_bucketize_sparse_features`, `fbgemm::bounds_check_indices` and
//! `fbgemm::asynchronous_complete_cumsum` (with its exclusive and inclusive forms).
//!
//! No FLOPs but the cumsums' adds: these ops move and check integers. Bytes: each input read
//! once, each output written once, as everywhere in these models; the offsets the kernels
//! compute from the lengths (a cumsum into a scratch tensor) are intermediate and not counted.
//! Where an output's size depends on values the trace does not record (how many indices the
//! permuted features hold when features are repeated or dropped, how many buckets a bucketize
//! splits into), the model says which value is missing instead of guessing it.

use super::args::{OpArgs, Tensor};
use super::cost::{product, sum, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// `permute_2D_sparse_data(permute[T'], lengths[T, B], values[N], weights?[N],
/// permuted_lengths_sum?)` and `permute_1D_sparse_data` (the same with `lengths[T]`, one
/// segment per feature): the features' segments in the order `permute` lists them.
///
/// Outputs: the permuted lengths `[T', B]` (`[T']`), the permuted values and weights, `N'`
/// each. `N'` is `permuted_lengths_sum` when Concrete Inputs record it; otherwise a `permute`
/// with one entry per feature (`T' = T`) is read as a permutation, each feature once, so
/// `N' = N` (what the op's name and its TorchRec callers mean); a `permute` that repeats or
/// drops features gives no `N'` in the shapes, and the model says so. The values and weights
/// read are the `N'` gathered ones, the lengths read the `T'` permuted rows.
pub fn permute_sparse_data(args: &OpArgs) -> Result<OpCost, NoCost> {
    permuted(args, Some(4))
}

/// `permute_sparse_features(permute, lengths, indices, weights?)`: `permute_2D_sparse_data`
/// without the `permuted_lengths_sum` argument.
pub fn permute_sparse_features(args: &OpArgs) -> Result<OpCost, NoCost> {
    permuted(args, None)
}

/// `sum_at`: where the op takes `permuted_lengths_sum`, if it does.
fn permuted(args: &OpArgs, sum_at: Option<usize>) -> Result<OpCost, NoCost> {
    let permute = args.tensor(0, "the permute list")?;
    let lengths = args.tensor(1, "the lengths")?;
    let values = args.tensor(2, "the values")?;
    let weights = args.opt_tensor(3, "the weights")?;
    let t_out = one_dim(permute, "the permute list")?;
    let (t_in, batch) = match lengths.dims() {
        [t] => (*t, 1),
        [t, b] => (*t, *b),
        _ => return Err(shapes(format!("lengths (input 1) must have 1 or 2 dimensions: it is {}", lengths.shape()))),
    };
    let n_in = one_dim(values, "the values")?;
    if let Some(w) = weights {
        if w.numel()? != n_in {
            return Err(shapes(format!(
                "weights (input 3) {} and values (input 2) {} differ",
                w.shape(),
                values.shape()
            )));
        }
    }
    const SUM: &str = "permuted_lengths_sum";
    let recorded_sum = match sum_at.map(|i| args.int(i, SUM)) {
        None | Some(Err(NoCost::MissingConcrete { .. })) => None,
        Some(other) => other?,
    };
    let n_out = match (recorded_sum, sum_at) {
        (Some(s), _) => u64::try_from(s).map_err(|_| shapes(format!("{SUM} (input 4) is {s}")))?,
        (None, _) if t_out == t_in => n_in,
        (None, Some(i)) if !args.concrete_recorded() => return Err(NoCost::MissingConcrete { input: i, what: SUM }),
        (None, _) => {
            return Err(NoCost::NotRecorded(format!(
                "the permute list (input 0) has {t_out} entries for {t_in} features (input 1 {}): with features \
                 repeated or dropped, the number of permuted values is not in the recorded shapes",
                lengths.shape()
            )))
        }
    };
    let lengths_out = product(&[t_out, batch], Quantity::Elements, lengths.index())?;
    let mut traffic = Traffic::new()
        .tensor(permute)?
        .elements(lengths_out, lengths.dtype(), lengths.index())?
        .elements(lengths_out, lengths.dtype(), lengths.index())?
        .elements(n_out, values.dtype(), values.index())?
        .elements(n_out, values.dtype(), values.index())?;
    if let Some(w) = weights {
        traffic = traffic.elements(n_out, w.dtype(), w.index())?.elements(n_out, w.dtype(), w.index())?;
    }
    Ok(OpCost::exact(Family::Copy, Unit::Vector, values.dtype(), 0, traffic.total()))
}

/// `block_bucketize_sparse_features(lengths[T·B], indices[N], bucketize_pos, sequence,
/// block_sizes[T], my_size, weights?[N], …)`: splits each feature's indices into `my_size`
/// buckets by block. Reads the lengths, indices, block sizes and weights; writes the new
/// lengths (`my_size · T·B`, the lengths' type), the new indices (`N`), and, `N` each, the new
/// weights (when given), the positions (with `bucketize_pos`, the indices' type) and the
/// unbucketize permutation (with `sequence`, the indices' type). So it needs `my_size` and the
/// two flags from Concrete Inputs.
pub fn block_bucketize_sparse_features(args: &OpArgs) -> Result<OpCost, NoCost> {
    let lengths = args.tensor(0, "the lengths")?;
    let indices = args.tensor(1, "the indices")?;
    let block_sizes = args.tensor(4, "the block sizes")?;
    let weights = args.opt_tensor(6, "the weights")?;
    let my_size = args.int(5, "my_size")?.ok_or(NoCost::MissingConcrete { input: 5, what: "my_size" })?;
    let my_size = u64::try_from(my_size).map_err(|_| shapes(format!("my_size (input 5) is {my_size}")))?;
    let bucketize_pos = required_flag(args, 2, "bucketize_pos")?;
    let sequence = required_flag(args, 3, "sequence")?;
    let n = indices.numel()?;
    let new_lengths = product(&[lengths.numel()?, my_size], Quantity::Elements, lengths.index())?;
    let mut traffic = Traffic::new()
        .tensor(lengths)?
        .tensor(indices)?
        .tensor(block_sizes)?
        .opt_tensor(weights)?
        .elements(new_lengths, lengths.dtype(), lengths.index())?
        .tensor(indices)?
        .opt_tensor(weights)?;
    for extra in [bucketize_pos, sequence] {
        if extra {
            traffic = traffic.elements(n, indices.dtype(), indices.index())?;
        }
    }
    Ok(OpCost::exact(Family::Copy, Unit::Vector, indices.dtype(), 0, traffic.total()))
}

/// `bounds_check_indices(rows_per_table[T], indices[N], offsets[T·B+1], bounds_check_mode,
/// warning, weights?, …)`: checks every index against its table's row count. Reads the row
/// counts, the indices and the offsets; the weights' values are not read (only their length
/// is checked). It writes only to repair an index out of range (and the one-element warning
/// counter), which a correct input never needs: nothing written is counted.
pub fn bounds_check_indices(args: &OpArgs) -> Result<OpCost, NoCost> {
    let rows = args.tensor(0, "the rows per table")?;
    let indices = args.tensor(1, "the indices")?;
    let offsets = args.tensor(2, "the offsets")?;
    let traffic = Traffic::new().tensor(rows)?.tensor(indices)?.tensor(offsets)?;
    Ok(OpCost::exact(Family::Copy, Unit::Vector, indices.dtype(), 0, traffic.total()))
}

/// Which cumsum: the complete one writes a leading zero, one more element per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cumsum {
    /// `asynchronous_complete_cumsum(t[N])` → `[N + 1]` (`[R, N]` → `[R, N + 1]`).
    Complete,
    /// `asynchronous_exclusive_cumsum` and `asynchronous_inclusive_cumsum`: `[N]` → `[N]`.
    SameSize,
}

/// FBGEMM's cumsums of a 1-D tensor (the complete one also of each row of a 2-D one): one add
/// per element; the input read once and the output written once, in the input's type.
pub fn cumsum(args: &OpArgs, kind: Cumsum) -> Result<OpCost, NoCost> {
    let t = args.tensor(0, "the input")?;
    let n = t.numel()?;
    let rows = match t.dims() {
        [_] => 1,
        [r, _] if kind == Cumsum::Complete => *r,
        _ => return Err(shapes(format!("the cumsum's input (input 0) {} is not a vector", t.shape()))),
    };
    let out = match kind {
        Cumsum::Complete => sum(&[n, rows], Quantity::Elements, t.index())?,
        Cumsum::SameSize => n,
    };
    let traffic = Traffic::new().tensor(t)?.elements(out, t.dtype(), t.index())?;
    Ok(OpCost::exact(Family::Reduce, Unit::Vector, t.dtype(), n, traffic.total()))
}

/// The length of a 1-D tensor; `what` names it in the error.
fn one_dim(t: &Tensor, what: &str) -> Result<u64, NoCost> {
    match t.dims() {
        [n] => Ok(*n),
        _ => Err(shapes(format!("{what} (input {}) must be 1-D: it is {}", t.index(), t.shape()))),
    }
}

/// A flag without a default here: its value changes which outputs are written.
fn required_flag(args: &OpArgs, i: usize, what: &'static str) -> Result<bool, NoCost> {
    args.concrete(i, what)?.ok_or(NoCost::MissingConcrete { input: i, what })?;
    args.flag(i, what, false)
}

fn shapes(reason: String) -> NoCost {
    NoCost::Shapes(reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn args(dims: &str, types: &str, concrete: Option<&str>) -> OpArgs {
        OpArgs::of_text(dims, types, concrete)
    }

    /// `tests/data/traces/nvidia/hta_a100_compiled_rank0.json.gz` (TorchRec DLRM on an A100, no
    /// Concrete Inputs): the permute of 88 features × 4,096 samples and 689,849 int indices.
    #[test]
    fn a100_permute_2d_of_a_permutation() {
        let c = permute_sparse_data(&args(
            "[[88], [88, 4096], [689849], [], []]",
            r#"["int", "int", "int", "", "Scalar"]"#,
            None,
        ))
        .unwrap();
        // permute 88·4 + lengths 88·4096·4 read and written + values 689,849·4 read and written.
        assert_eq!(c.bytes, 352 + 2 * 1_441_792 + 2 * 2_759_396);
        assert_eq!((c.flops, c.family, c.dtype), (0, Family::Copy, DType::I32));
        // With the (empty) float weights of the same trace: 16 features, no values.
        let c = permute_sparse_data(&args(
            "[[16], [16, 4096], [0], [0], []]",
            r#"["int", "int", "int", "float", "Scalar"]"#,
            None,
        ))
        .unwrap();
        assert_eq!(c.bytes, 16 * 4 + 2 * 16 * 4096 * 4);
    }

    /// `tests/data/multirank/hta_sampled_128rank_rank0.json.gz`: 1,390 permute entries over
    /// 1,334 features, so features repeat and the permuted count is `permuted_lengths_sum`.
    #[test]
    fn repeated_features_need_the_permuted_sum() {
        let dims = "[[1390], [1334, 2048], [64162701], [], []]";
        let types = r#"["int", "int", "int", "", "Scalar"]"#;
        let e = permute_sparse_data(&args(dims, types, None)).unwrap_err();
        assert_eq!(e, NoCost::MissingConcrete { input: 4, what: "permuted_lengths_sum" });
        // The same call with the sum recorded (as PyTorch 2.x traces would): 1,390·2,048
        // lengths read and written, 70,000,000 values gathered and written.
        let c = permute_sparse_data(&args(dims, types, Some(r#"["", "", "", "", "70000000"]"#))).unwrap();
        assert_eq!(c.bytes, 1390 * 4 + 2 * 1390 * 2048 * 4 + 2 * 70_000_000 * 4);
        let e = permute_sparse_features(&args(
            "[[767], [623, 2048], [24694107], []]",
            r#"["int", "int", "int", ""]"#,
            None,
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the permute list (input 0) has 767 entries for 623 features (input 1 [623, 2048]): with features \
             repeated or dropped, the number of permuted values is not in the recorded shapes"
        );
        let c = permute_sparse_features(&args(
            "[[300], [300, 2048], [16334339], []]",
            r#"["int", "int", "int", ""]"#,
            None,
        ))
        .unwrap();
        assert_eq!(c.bytes, 300 * 4 + 2 * 300 * 2048 * 4 + 2 * 16_334_339 * 4);
    }

    #[test]
    fn bucketize_needs_my_size_and_its_flags() {
        // The A100 trace's call, recorded without Concrete Inputs.
        let dims = "[[45056], [689849], [], [], [11], [], []]";
        let types = r#"["int", "int", "Scalar", "Scalar", "int", "Scalar", ""]"#;
        let e = block_bucketize_sparse_features(&args(dims, types, None)).unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: my_size (input 5) is needed");
        // With them (8 ranks, as the trace's next permute of 88 = 11 · 8 features shows),
        // positions off and the unbucketize permutation on.
        let c = block_bucketize_sparse_features(&args(dims, types, Some(r#"["", "", "False", "True", "", "8", ""]"#)))
            .unwrap();
        let (lengths, n) = (45_056u64, 689_849u64);
        assert_eq!(c.bytes, lengths * 4 + n * 4 + 11 * 4 + lengths * 8 * 4 + n * 4 + n * 4);
        let e =
            block_bucketize_sparse_features(&args(dims, types, Some(r#"["", "", "", "", "", "8", ""]"#))).unwrap_err();
        assert_eq!(e.to_string(), "cannot read bucketize_pos (input 2) from \"\"");
    }

    #[test]
    fn bounds_check_reads_indices_and_offsets() {
        // hta_a100_compiled_rank0: 6 tables, 34,174 long indices, 6 · 65,536 + 1 offsets.
        let c = bounds_check_indices(&args(
            "[[6], [34174], [393217], [], [1], [], [], []]",
            r#"["long", "long", "long", "Scalar", "long", "", "", "Scalar"]"#,
            None,
        ))
        .unwrap();
        assert_eq!((c.bytes, c.flops), ((6 + 34_174 + 393_217) * 8, 0));
        // With per-sample weights (hta_sampled_128rank_rank0): their values are not read.
        let c = bounds_check_indices(&args(
            "[[1], [8856548], [262145], [], [1], [8856548], [], []]",
            r#"["long", "long", "long", "Scalar", "long", "float", "", "Scalar"]"#,
            None,
        ))
        .unwrap();
        assert_eq!(c.bytes, (1 + 8_856_548 + 262_145) * 8);
    }

    #[test]
    fn cumsums() {
        // hta_a100_compiled_rank0: `asynchronous_complete_cumsum` of 393,216 ints.
        let c = cumsum(&args("[[393216]]", r#"["int"]"#, None), Cumsum::Complete).unwrap();
        assert_eq!((c.flops, c.bytes, c.family), (393_216, (393_216 + 393_217) * 4, Family::Reduce));
        let c = cumsum(&args("[[3, 5]]", r#"["long"]"#, None), Cumsum::Complete).unwrap();
        assert_eq!(c.bytes, (15 + 18) * 8);
        let c = cumsum(&args("[[5]]", r#"["long"]"#, None), Cumsum::SameSize).unwrap();
        assert_eq!(c.bytes, 10 * 8);
        assert!(cumsum(&args("[[3, 5]]", r#"["long"]"#, None), Cumsum::SameSize).is_err());
    }
}
