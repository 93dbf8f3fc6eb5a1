//! FBGEMM's table-batched embeddings (TBE), as TorchRec runs them: the fused lookup
//! `fbgemm::split_embedding_codegen_lookup_{optimizer}_function`, its backward (the autograd
//! node `torch::autograd::CppNode<SplitLookupFunction_{optimizer}_Op>`, which also applies the
//! optimizer to the rows it touches), and the permute of the pooled output,
//! `fbgemm::permute_pooled_embs` / `permute_pooled_embs_auto_grad` and its backward
//! `CppNode<fbgemm_gpu::PermutePooledEmbsFunction<…>>`.
//!
//! The lookup's arguments (FBGEMM's `embedding_backward_split_host_template.cpp`, the layout
//! that names the function `…_function`; the `…_function_pt2` layout is another op):
//!
//! ```text
//!  0 placeholder_autograd_tensor  1 dev_weights  2 uvm_weights  3 lxu_cache_weights
//!  4 weights_placements  5 weights_offsets  6 D_offsets[T+1]  7 total_D  8 max_D
//!  9 hash_size_cumsum  10 total_hash_size_bits  11 indices[N]  12 offsets[T·B+1]
//! 13 pooling_mode  14 indice_weights?[N]  15 feature_requires_grad?  16 lxu_cache_locations
//! 17 gradient_clipping  18 max_gradient  19 stochastic_rounding  20… the optimizer's state
//! ```
//!
//! All tables' rows live in one flat weights tensor, so its shape says nothing of one row's
//! size: the embedding dims are the scalars `total_D` (the sum over the tables) and `max_D`,
//! known only from Concrete Inputs. When `total_D = T · max_D` every table has dim `max_D` and
//! the rows an index gathers are exact; tables of different dims gather rows of a size that
//! depends on which table each index belongs to, which the trace does not say.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};

/// Which TBE op a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tbe {
    /// `fbgemm::split_embedding_codegen_lookup_{optimizer}_function`.
    Lookup,
    /// `torch::autograd::CppNode<SplitLookupFunction_{optimizer}_Op>`.
    LookupBackward,
    /// `torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction…>`.
    PermutePooledBackward,
}

const LOOKUP_PREFIX: &str = "fbgemm::split_embedding_codegen_lookup_";
const LOOKUP_BACKWARD_PREFIX: &str = "torch::autograd::CppNode<SplitLookupFunction_";
const PERMUTE_POOLED_BACKWARD_PREFIX: &str = "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction";

/// The names [`find`] knows, as patterns (`*` the optimizer), for the list of modelled ops.
pub const PATTERNS: &[&str] = &[
    "fbgemm::split_embedding_codegen_lookup_*_function",
    "torch::autograd::CppNode<SplitLookupFunction_*_Op>",
    "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction<…>>",
];

/// The TBE op `op` names, by the patterns above (the optimizer is part of the name).
pub fn find(op: &str) -> Option<Tbe> {
    if op.strip_prefix(LOOKUP_PREFIX).is_some_and(|rest| rest.ends_with("_function")) {
        Some(Tbe::Lookup)
    } else if op.strip_prefix(LOOKUP_BACKWARD_PREFIX).is_some_and(|rest| rest.ends_with("_Op>")) {
        Some(Tbe::LookupBackward)
    } else if op.starts_with(PERMUTE_POOLED_BACKWARD_PREFIX) {
        Some(Tbe::PermutePooledBackward)
    } else {
        None
    }
}

/// The cost of one call of the TBE op `kind`.
pub fn cost(kind: Tbe, args: &OpArgs) -> Result<OpCost, NoCost> {
    match kind {
        Tbe::Lookup => lookup(args),
        Tbe::LookupBackward => lookup_backward(args),
        Tbe::PermutePooledBackward => permute_pooled_backward(args),
    }
}

/// The lookup: per bag (feature and sample) the rows its indices pick, summed (pooling SUM or
/// MEAN) or, with pooling NONE, each row copied out.
///
/// FLOPs: one add per gathered element (`N · D`; with per-sample weights a multiply-add, 2).
/// Bytes: the indices, the offsets and the per-sample weights read; `N` rows of `D` elements
/// gathered from the weights (each index's row read once, at the weights' type); the output
/// written: `B · total_D` pooled (with `B = (|offsets| − 1) / T` and `T = |D_offsets| − 1`) or
/// `N · D` unpooled, in `fp32`, FBGEMM's default output type (the `output_dtype` argument sits
/// after the optimizer's own, at a position that varies with the optimizer, and is not read: a
/// half-precision output is counted at twice its size). Needs `total_D`, `max_D` and
/// `pooling_mode` from Concrete Inputs and tables of one dim.
fn lookup(args: &OpArgs) -> Result<OpCost, NoCost> {
    let dev = args.tensor(1, "the device weights")?;
    let uvm = args.tensor(2, "the UVM weights")?;
    let d_offsets = args.tensor(6, "D_offsets")?;
    let indices = args.tensor(11, "the indices")?;
    let offsets = args.tensor(12, "the offsets")?;
    let per_sample = args.opt_tensor(14, "the per-sample weights")?;
    let total_d = concrete_size(args, 7, "total_D")?;
    let max_d = concrete_size(args, 8, "max_D")?;
    let pooling = args.int(13, "pooling_mode")?.ok_or(NoCost::MissingConcrete { input: 13, what: "pooling_mode" })?;
    let tables = match d_offsets.dims() {
        [n] if *n >= 1 => n - 1,
        _ => return Err(NoCost::Shapes(format!("D_offsets (input 6) {} is not [T + 1]", d_offsets.shape()))),
    };
    if Some(total_d) != tables.checked_mul(max_d) {
        return Err(NoCost::NotRecorded(format!(
            "tables of different embedding dims (total_D {total_d} over {tables} tables, max_D {max_d}): the \
             size of the row each index gathers depends on its table, which the trace does not record"
        )));
    }
    let bags = match (offsets.dims(), tables) {
        ([n], t) if t > 0 && *n >= 1 && (n - 1) % t == 0 => (n - 1) / t,
        _ => {
            return Err(NoCost::Shapes(format!(
                "offsets (input 12) {} is not [T · B + 1] for T = {tables} tables",
                offsets.shape()
            )))
        }
    };
    // The rows are read from wherever the tables are placed, device or UVM memory.
    let weights_type = if dev.numel()? > 0 { dev.dtype() } else { uvm.dtype() };
    let n = indices.numel()?;
    let gathered = product(&[n, max_d], Quantity::Elements, indices.index())?;
    let outputs = match pooling {
        0 | 1 => product(&[bags, total_d], Quantity::Elements, offsets.index())?,
        2 => gathered,
        other => return Err(NoCost::BadConcrete { input: 13, what: "pooling_mode", text: other.to_string() }),
    };
    let traffic = Traffic::new()
        .tensor(indices)?
        .tensor(offsets)?
        .opt_tensor(per_sample)?
        .elements(gathered, weights_type, indices.index())?
        .elements(outputs, DType::F32, offsets.index())?;
    let flops = product(&[gathered, if per_sample.is_some() { 2 } else { 1 }], Quantity::Flops, indices.index())?;
    Ok(OpCost::exact(Family::Embedding, Unit::Vector, weights_type, flops, traffic.total()))
}

/// The backward with the fused optimizer reads the output's gradient and, for every distinct
/// row the forward's indices touched, reads and writes the row and its optimizer state. Its
/// recorded input is the gradient alone (`[B, total_D]`): the indices are saved from the
/// forward, not recorded, so the rows it updates are not in the trace.
fn lookup_backward(args: &OpArgs) -> Result<OpCost, NoCost> {
    let grad = args.tensor(0, "the output's gradient")?;
    Err(NoCost::NotRecorded(format!(
        "the embedding backward updates the rows its forward's indices picked, and its recorded inputs (the \
         gradient {}) do not include them",
        grad.shape()
    )))
}

/// `permute_pooled_embs(pooled_embs[B, total_D], offset_dim_list[T+1], permute_list[T],
/// inv_offset_dim_list[T+1], inv_permute_list[T])` and `permute_pooled_embs_auto_grad`:
/// moves each table's column block of the pooled output to its permuted place. Bytes: the
/// pooled tensor read and the output (its shape and type) written, the four lists read.
pub fn permute_pooled(args: &OpArgs) -> Result<OpCost, NoCost> {
    let pooled = args.tensor(0, "the pooled embeddings")?;
    let mut traffic = Traffic::new().tensor(pooled)?.tensor(pooled)?;
    for i in 1..5 {
        traffic = traffic.tensor(args.tensor(i, "an offset or permute list")?)?;
    }
    Ok(OpCost::exact(Family::Copy, Unit::Vector, pooled.dtype(), 0, traffic.total()))
}

/// The backward of `permute_pooled_embs_auto_grad`: the gradient permuted back. Its recorded
/// input is the gradient; the offset and permute lists it also reads were saved from the
/// forward and are not recorded (`T + 1` integers each, a few KiB beside a gradient of MiBs),
/// so they are left out.
fn permute_pooled_backward(args: &OpArgs) -> Result<OpCost, NoCost> {
    let grad = args.tensor(0, "the gradient")?;
    let traffic = Traffic::new().tensor(grad)?.tensor(grad)?;
    Ok(OpCost::exact(Family::Copy, Unit::Vector, grad.dtype(), 0, traffic.total()))
}

/// A non-negative size scalar that must come from Concrete Inputs.
fn concrete_size(args: &OpArgs, i: usize, what: &'static str) -> Result<u64, NoCost> {
    let v = args.int(i, what)?.ok_or(NoCost::MissingConcrete { input: i, what })?;
    u64::try_from(v).map_err(|_| NoCost::BadConcrete { input: i, what, text: v.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lookup as `tests/data/traces/nvidia/hta_a100_compiled_rank0.json.gz` records it
    /// (6 tables, 34,174 indices, 65,536 samples; no Concrete Inputs).
    const A100_DIMS: &str = "[[0], [25657792], [0], [0, 0], [6], [6], [7], [], [], [7], [], [34174], [393217], [], \
                             [], [], [0], [], [], [], [400903], [0], [6], [6], [], [], [], [], []]";
    const A100_TYPES: &str = r#"["float", "float", "float", "float", "int", "long", "int", "Scalar", "Scalar", "long", "Scalar", "long", "long", "Scalar", "", "", "int", "Scalar", "Scalar", "Scalar", "float", "float", "int", "long", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#;

    fn concrete(total_d: &str, max_d: &str, pooling: &str) -> String {
        let mut c = vec![String::new(); 29];
        c[7] = total_d.to_string();
        c[8] = max_d.to_string();
        c[13] = pooling.to_string();
        serde_json::to_string(&c).unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(find("fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function"), Some(Tbe::Lookup));
        assert_eq!(find("fbgemm::split_embedding_codegen_lookup_sgd_function"), Some(Tbe::Lookup));
        assert_eq!(find("fbgemm::split_embedding_codegen_lookup_sgd_function_pt2"), None);
        assert_eq!(find("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>"), Some(Tbe::LookupBackward));
        assert_eq!(
            find("torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction<&fbgemm_gpu::permute_pooled_embs_gpu> >"),
            Some(Tbe::PermutePooledBackward)
        );
        assert_eq!(find("fbgemm::permute_pooled_embs_auto_grad"), None);
    }

    #[test]
    fn lookup_needs_the_dims() {
        let e = lookup(&OpArgs::of_text(A100_DIMS, A100_TYPES, None)).unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: total_D (input 7) is needed");
        // The same call with the scalars recorded: 6 tables of dim 64 (the backward's gradient
        // in that trace is [65536, 384] = 6 · 64), sum pooling.
        let c = lookup(&OpArgs::of_text(A100_DIMS, A100_TYPES, Some(&concrete("384", "64", "0")))).unwrap();
        let (n, bags) = (34_174u64, 65_536u64);
        assert_eq!(c.bytes, n * 8 + 393_217 * 8 + n * 64 * 4 + bags * 384 * 4);
        assert_eq!((c.flops, c.family, c.dtype), (n * 64, Family::Embedding, DType::F32));
        // Unpooled: each gathered row is written out.
        let c = lookup(&OpArgs::of_text(A100_DIMS, A100_TYPES, Some(&concrete("384", "64", "2")))).unwrap();
        assert_eq!(c.bytes, n * 8 + 393_217 * 8 + 2 * n * 64 * 4);
        let e = lookup(&OpArgs::of_text(A100_DIMS, A100_TYPES, Some(&concrete("320", "64", "0")))).unwrap_err();
        assert!(e.to_string().starts_with("tables of different embedding dims (total_D 320 over 6 tables, max_D 64)"));
    }

    #[test]
    fn backward_lacks_the_indices() {
        let args = OpArgs::of_text("[[65536, 384]]", r#"["float"]"#, None);
        let e = cost(Tbe::LookupBackward, &args).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the embedding backward updates the rows its forward's indices picked, and its recorded inputs (the \
             gradient [65536, 384]) do not include them"
        );
    }

    #[test]
    fn permute_pooled_both_ways() {
        // hta_a100_compiled_rank0: 4,096 samples × 768 pooled floats, 12 tables.
        let c = permute_pooled(&OpArgs::of_text(
            "[[4096, 768], [13], [12], [13], [12]]",
            r#"["float", "long", "long", "long", "long"]"#,
            None,
        ))
        .unwrap();
        assert_eq!((c.bytes, c.flops), (2 * 4096 * 768 * 4 + (13 + 12 + 13 + 12) * 8, 0));
        let c = cost(Tbe::PermutePooledBackward, &OpArgs::of_text("[[4096, 768]]", r#"["float"]"#, None)).unwrap();
        assert_eq!(c.bytes, 2 * 4096 * 768 * 4);
    }
}
