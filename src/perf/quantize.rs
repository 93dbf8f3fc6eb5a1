//! Quantization to and from 8-bit floats: FBGEMM's rowwise FP8 (`fbgemm::FloatToFP8RowwiseQuantized`,
//! `fbgemm::FP8RowwiseQuantizedToFloat`) and HFP8 (`fbgemm::FloatToHFP8Quantized`,
//! `fbgemm::HFP8QuantizedToFloat`), which TorchRec uses to compress the embeddings it sends
//! between ranks, and vLLM's `_C::static_scaled_fp8_quant`.
//!
//! FLOPs, counted as the pointwise ops count them (one per element per step): a quantization
//! with a given scale or format is 1 per element (the scaling; the rounding and clamping into
//! the 8-bit format are conversions); FBGEMM's rowwise quantization also finds each row's
//! largest magnitude first, 2 per element. Bytes: the input read once, the output written
//! once, at the sizes FBGEMM's kernels allocate (`quantize_fp8_rowwise.cu`,
//! `quantize_hfp8.cu`): a rowwise-quantized row is its `n` values as bytes, padded to a
//! multiple of 4, then two `fp32` row parameters (the scale and a pad), `⌈n/4⌉·4 + 8` bytes.

use super::args::{OpArgs, Tensor};
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};

/// The bytes a rowwise-quantized row keeps after its values: its scale and a pad, `fp32` each.
const ROW_PARAMS_BYTES: u64 = 8;

/// `FloatToFP8RowwiseQuantized(t[…, n], forward)`: each row of the last dimension scaled by its
/// own factor into one byte per value; output `uint8 [… , ⌈n/4⌉·4 + 8]`.
pub fn float_to_fp8_rowwise(args: &OpArgs) -> Result<OpCost, NoCost> {
    let t = args.tensor(0, "the input")?;
    let (rows, n) = rows_and_columns(t)?;
    let columns = n.div_ceil(4).checked_mul(4).and_then(|c| c.checked_add(ROW_PARAMS_BYTES));
    let columns = columns.ok_or(NoCost::Overflow { what: Quantity::Size, input: t.index() })?;
    let out = product(&[rows, columns], Quantity::Bytes, t.index())?;
    let traffic = Traffic::new().tensor(t)?.elements(out, DType::U8, t.index())?;
    let flops = product(&[t.numel()?, 2], Quantity::Flops, t.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, t.dtype(), flops, traffic.total()))
}

/// `FP8RowwiseQuantizedToFloat(input uint8[…, m], forward, output_dtype = FP32)`: each row's
/// `m − 8` values scaled back; the output type is FBGEMM's `SparseType` code (0 `fp32`,
/// 1 `fp16`, 5 `bf16`), `fp32` when the argument is absent (older FBGEMM has none).
pub fn fp8_rowwise_to_float(args: &OpArgs) -> Result<OpCost, NoCost> {
    let t = args.tensor(0, "the quantized input")?;
    let (rows, m) = rows_and_columns(t)?;
    let Some(n) = m.checked_sub(ROW_PARAMS_BYTES) else {
        return Err(NoCost::Shapes(format!(
            "a rowwise-quantized row holds at least its {ROW_PARAMS_BYTES} bytes of parameters: input 0 is {}",
            t.shape()
        )));
    };
    let out_type = match args.int(2, "output_dtype")? {
        None | Some(0) => DType::F32,
        Some(1) => DType::F16,
        Some(5) => DType::BF16,
        Some(other) => return Err(NoCost::BadConcrete { input: 2, what: "output_dtype", text: other.to_string() }),
    };
    let out = product(&[rows, n], Quantity::Elements, t.index())?;
    let traffic = Traffic::new().tensor(t)?.elements(out, out_type, t.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, out_type, out, traffic.total()))
}

/// `FloatToHFP8Quantized(input, ebits, exponent_bias, max_pos)`: one byte per value.
pub fn float_to_hfp8(args: &OpArgs) -> Result<OpCost, NoCost> {
    let t = args.tensor(0, "the input")?;
    let n = t.numel()?;
    let traffic = Traffic::new().tensor(t)?.elements(n, DType::U8, t.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, t.dtype(), n, traffic.total()))
}

/// `HFP8QuantizedToFloat(input uint8, ebits, exponent_bias)`: one `fp32` per byte.
pub fn hfp8_to_float(args: &OpArgs) -> Result<OpCost, NoCost> {
    let t = args.tensor(0, "the quantized input")?;
    let n = t.numel()?;
    let traffic = Traffic::new().tensor(t)?.elements(n, DType::F32, t.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, DType::F32, n, traffic.total()))
}

/// vLLM `_C::static_scaled_fp8_quant(result!, input, scale)`: `result = fp8(input / scale)`
/// with a scale given as a tensor. Reads the input and the scale, writes the result (at its own
/// type; it is not read).
pub fn static_scaled_fp8_quant(args: &OpArgs) -> Result<OpCost, NoCost> {
    let result = args.tensor(0, "the result")?;
    let input = args.tensor(1, "the input")?;
    let scale = args.tensor(2, "the scale")?;
    if result.numel()? != input.numel()? {
        return Err(NoCost::Shapes(format!(
            "the result (input 0) {} and the input (input 1) {} differ in size",
            result.shape(),
            input.shape()
        )));
    }
    let traffic = Traffic::new().tensor(input)?.tensor(scale)?.tensor(result)?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, input.dtype(), input.numel()?, traffic.total()))
}

/// Rows (the product of all dimensions but the last) and columns (the last; a 0-dim tensor is
/// one row of one) of `t`.
fn rows_and_columns(t: &Tensor) -> Result<(u64, u64), NoCost> {
    match t.dims().split_last() {
        Some((&last, rest)) => Ok((product(rest, Quantity::Elements, t.index())?, last)),
        None => Ok((1, 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &str, types: &str) -> OpArgs {
        OpArgs::of_text(dims, types, None)
    }

    /// `tests/data/multirank/hta_sampled_128rank_rank0.json.gz` (TorchRec, 128 ranks; no
    /// Concrete Inputs): the embeddings quantized before the all-to-all and after.
    #[test]
    fn fbgemm_rowwise_fp8() {
        let c = float_to_fp8_rowwise(&args("[[1492704, 256], []]", r#"["float", "Scalar"]"#)).unwrap();
        let rows = 1_492_704u64;
        assert_eq!(c.bytes, rows * 256 * 4 + rows * 264);
        assert_eq!((c.flops, c.dtype), (rows * 256 * 2, DType::F32));
        let c = fp8_rowwise_to_float(&args("[[1638400, 264], []]", r#"["unsigned char", "Scalar"]"#)).unwrap();
        let rows = 1_638_400u64;
        assert_eq!((c.bytes, c.flops, c.dtype), (rows * 264 + rows * 256 * 4, rows * 256, DType::F32));
        // A row of 10 values pads to 12 bytes, then 8 of parameters.
        let c = float_to_fp8_rowwise(&args("[[3, 10], []]", r#"["c10::Half", "Scalar"]"#)).unwrap();
        assert_eq!(c.bytes, 30 * 2 + 3 * 20);
        let c = fp8_rowwise_to_float(&OpArgs::of_text(
            "[[2, 24], [], []]",
            r#"["unsigned char", "Scalar", "Scalar"]"#,
            Some(r#"["", "True", "5"]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 48 + 2 * 16 * 2);
        assert!(fp8_rowwise_to_float(&args("[[2, 7], []]", r#"["unsigned char", "Scalar"]"#)).is_err());
    }

    #[test]
    fn fbgemm_hfp8() {
        // hta_sampled_128rank_rank0.
        let n = 419_430_400u64;
        let c =
            float_to_hfp8(&args("[[419430400], [], [], []]", r#"["float", "Scalar", "Scalar", "Scalar"]"#)).unwrap();
        assert_eq!((c.bytes, c.flops), (n * 5, n));
        let n = 382_132_224u64;
        let c = hfp8_to_float(&args("[[382132224], [], []]", r#"["unsigned char", "Scalar", "Scalar"]"#)).unwrap();
        assert_eq!(c.bytes, n * 5);
    }

    #[test]
    fn vllm_static_fp8() {
        // `tests/data/traces/nvidia/tracelens_eager_b200.json.gz` (vLLM gpt-oss on a B200).
        let c = static_scaled_fp8_quant(&OpArgs::of_text(
            "[[888, 512], [888, 512], []]",
            r#"["c10::Float8_e4m3fn", "c10::BFloat16", "float"]"#,
            Some(r#"["", "", ""]"#),
        ))
        .unwrap();
        let n = 888 * 512;
        assert_eq!((c.bytes, c.flops, c.dtype), (n * 2 + 4 + n, n, DType::BF16));
    }
}
