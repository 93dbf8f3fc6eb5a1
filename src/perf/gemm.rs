//! Matrix multiplications: `aten::mm`, `addmm`, `bmm`, `baddbmm`, `_scaled_mm`, `linear`,
//! `matmul`.
//!
//! For `batch` products of an M×K and a K×N matrix: FLOPs `2·batch·M·N·K` (a multiply and an
//! add per term), plus `batch·M·N` when a bias is added; bytes: each operand read once and the
//! M×N output written once, `(batch·M·K + batch·K·N + batch·M·N)·size` plus the bias. A tensor
//! after the op's own arguments is an `out=` tensor (`mm.out`: Inductor's traces record
//! `aten::mm` with three tensors); it gives the output's type and is not counted as read.
//!
//! `linear` and `matmul` usually only dispatch to `mm`/`addmm`/`bmm`, which launch the kernels
//! and get the cost; theirs is for traces where they own the kernels themselves.

use super::args::{OpArgs, Tensor};
use super::cost::{product, sum, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};
use super::shape::{broadcast, Shape};

/// The sizes of one (batched) matrix product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Product {
    batch: u64,
    m: u64,
    n: u64,
    k: u64,
}

/// `aten::mm(self[M,K], mat2[K,N])`.
pub fn mm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let (a, b) = (args.tensor(0, "the first matrix")?, args.tensor(1, "the second matrix")?);
    let p = matrices(a, b)?;
    cost(p, a, b, None, out_dtype(args, 2, a.dtype()))
}

/// `aten::addmm(bias, mat1[M,K], mat2[K,N], beta, alpha)`: `mm` plus the bias added to each
/// output (`+M·N` FLOPs, the bias read once).
pub fn addmm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let bias = args.tensor(0, "the bias")?;
    let (a, b) = (args.tensor(1, "the first matrix")?, args.tensor(2, "the second matrix")?);
    let p = matrices(a, b)?;
    cost(p, a, b, Some(bias), out_dtype(args, 5, a.dtype()))
}

/// `aten::bmm(self[B,M,K], mat2[B,K,N])`.
pub fn bmm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let (a, b) = (args.tensor(0, "the first batch")?, args.tensor(1, "the second batch")?);
    let p = batches(a, b)?;
    cost(p, a, b, None, out_dtype(args, 2, a.dtype()))
}

/// `aten::baddbmm(bias, batch1[B,M,K], batch2[B,K,N], beta, alpha)`.
pub fn baddbmm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let bias = args.tensor(0, "the bias")?;
    let (a, b) = (args.tensor(1, "the first batch")?, args.tensor(2, "the second batch")?);
    let p = batches(a, b)?;
    cost(p, a, b, Some(bias), out_dtype(args, 5, a.dtype()))
}

/// `aten::_scaled_mm(self[M,K], mat2[K,N], scale_a, scale_b, bias?, scale_result?, out_dtype?,
/// use_fast_accum)` (the signature since PyTorch 2.4): an fp8 `mm` whose scales are read too
/// and whose output type is `out_dtype` (the input's when absent).
pub fn scaled_mm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let (a, b) = (args.tensor(0, "the first matrix")?, args.tensor(1, "the second matrix")?);
    let p = matrices(a, b)?;
    let out = match args.int(6, "out_dtype")? {
        None => out_dtype(args, 8, a.dtype()),
        Some(code) => DType::from_scalar_type_code(code).ok_or_else(|| {
            NoCost::Unsupported(format!("out_dtype {code} (input 6) is not a type with a known size"))
        })?,
    };
    let bias = args.opt_tensor(4, "the bias")?;
    let mut c = cost(p, a, b, bias, out)?;
    let scales = Traffic::new()
        .opt_tensor(args.opt_tensor(2, "scale_a")?)?
        .opt_tensor(args.opt_tensor(3, "scale_b")?)?
        .opt_tensor(args.opt_tensor(5, "scale_result")?)?;
    c.bytes = sum(&[c.bytes, scales.total()], Quantity::Bytes, 2)?;
    Ok(c)
}

/// `aten::linear(input[…, K], weight[N, K], bias?[N])`: every row of the input (all dimensions
/// but the last, M of them) times the transposed weight.
pub fn linear(args: &OpArgs) -> Result<OpCost, NoCost> {
    let (x, w) = (args.tensor(0, "the input")?, args.tensor(1, "the weight")?);
    let bias = args.opt_tensor(2, "the bias")?;
    let (xd, wd) = (x.dims(), w.dims());
    let (Some((&k, rows)), 1..=2) = (xd.split_last(), wd.len()) else {
        return Err(NoCost::Shapes(format!(
            "linear needs an input of 1 or more dimensions and a 1- or 2-D weight: input 0 is {}, input 1 is {}",
            x.shape(),
            w.shape()
        )));
    };
    let (n, wk) = if wd.len() == 2 { (wd[0], wd[1]) } else { (1, wd[0]) };
    if wk != k {
        return Err(inner_mismatch(x, w));
    }
    let m = product(rows, Quantity::Elements, x.index())?;
    cost(Product { batch: 1, m, n, k }, x, w, bias, out_dtype(args, 3, x.dtype()))
}

/// `aten::matmul(a, b)` with NumPy semantics: a 1-D operand is a row (first) or a column
/// (second) vector, the last two dimensions multiply, and the leading ones broadcast into the
/// batch. Each operand is read once however often broadcasting reuses it.
pub fn matmul(args: &OpArgs) -> Result<OpCost, NoCost> {
    let (a, b) = (args.tensor(0, "the first operand")?, args.tensor(1, "the second operand")?);
    let (ad, bd) = (a.dims(), b.dims());
    if ad.is_empty() || bd.is_empty() {
        return Err(NoCost::Shapes(format!(
            "matmul needs operands of 1 or more dimensions: input 0 is {}, input 1 is {}",
            a.shape(),
            b.shape()
        )));
    }
    // a: [lead…, M, K] or [K]; b: [lead…, K, N] or [K].
    let (a_lead, m, k) = match ad {
        [k] => (&[][..], 1, *k),
        [lead @ .., m, k] => (lead, *m, *k),
        [] => unreachable!("checked above"),
    };
    let (b_lead, kb, n) = match bd {
        [k] => (&[][..], *k, 1),
        [lead @ .., k, n] => (lead, *k, *n),
        [] => unreachable!("checked above"),
    };
    if k != kb {
        return Err(inner_mismatch(a, b));
    }
    let lead = broadcast([&Shape::new(a_lead.to_vec()), &Shape::new(b_lead.to_vec())]).ok_or_else(|| {
        NoCost::Shapes(format!("batch dimensions do not broadcast: input 0 {} and input 1 {}", a.shape(), b.shape()))
    })?;
    let batch = lead.numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: a.index() })?;
    cost(Product { batch, m, n, k }, a, b, None, out_dtype(args, 2, a.dtype()))
}

/// FLOPs and bytes of a product; `bias`, when given, is added to every output element.
fn cost(p: Product, a: &Tensor, b: &Tensor, bias: Option<&Tensor>, out: DType) -> Result<OpCost, NoCost> {
    let at = a.index();
    let outputs = product(&[p.batch, p.m, p.n], Quantity::Elements, at)?;
    let mut flops = product(&[2, p.batch, p.m, p.n, p.k], Quantity::Flops, at)?;
    if bias.is_some() {
        flops = sum(&[flops, outputs], Quantity::Flops, at)?;
    }
    let bytes = Traffic::new().tensor(a)?.tensor(b)?.opt_tensor(bias)?.elements(outputs, out, at)?;
    Ok(OpCost::exact(Family::Gemm, Unit::Matrix, a.dtype(), flops, bytes.total()))
}

/// The output type: that of an `out=` tensor at or after input `from`, else `default`.
fn out_dtype(args: &OpArgs, from: usize, default: DType) -> DType {
    args.tensors().find(|t| t.index() >= from).map_or(default, Tensor::dtype)
}

/// `[M,K]` × `[K,N]`.
fn matrices(a: &Tensor, b: &Tensor) -> Result<Product, NoCost> {
    match (a.dims(), b.dims()) {
        (&[m, k], &[kb, n]) if k == kb => Ok(Product { batch: 1, m, n, k }),
        (&[_, _], &[_, _]) => Err(inner_mismatch(a, b)),
        _ => Err(NoCost::Shapes(format!(
            "needs two 2-D matrices: input {} is {}, input {} is {}",
            a.index(),
            a.shape(),
            b.index(),
            b.shape()
        ))),
    }
}

/// `[B,M,K]` × `[B,K,N]`.
fn batches(a: &Tensor, b: &Tensor) -> Result<Product, NoCost> {
    match (a.dims(), b.dims()) {
        (&[batch, m, k], &[bb, kb, n]) if k == kb && batch == bb => Ok(Product { batch, m, n, k }),
        (&[_, _, _], &[_, _, _]) => Err(NoCost::Shapes(format!(
            "batch or inner dimensions differ: input {} {} and input {} {}",
            a.index(),
            a.shape(),
            b.index(),
            b.shape()
        ))),
        _ => Err(NoCost::Shapes(format!(
            "needs two 3-D batches: input {} is {}, input {} is {}",
            a.index(),
            a.shape(),
            b.index(),
            b.shape()
        ))),
    }
}

fn inner_mismatch(a: &Tensor, b: &Tensor) -> NoCost {
    NoCost::Shapes(format!(
        "inner dimensions differ: input {} {} and input {} {}",
        a.index(),
        a.shape(),
        b.index(),
        b.shape()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Input;

    fn args(dims: &str, types: &str, concrete: &str) -> OpArgs {
        OpArgs::of_text(dims, types, Some(concrete))
    }

    #[test]
    fn mm_worked_example() {
        // 2·8944·2816·1024 FLOPs; (8944·1024 + 1024·2816 + 8944·2816)·2 bytes = 71.0078 MiB.
        let c =
            mm(&args("[[8944, 1024], [1024, 2816]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, r#"["", ""]"#)).unwrap();
        assert_eq!(c.flops, 51_581_550_592);
        assert_eq!(c.bytes, (8944 * 1024 + 1024 * 2816 + 8944 * 2816) * 2);
        assert_eq!(c.bytes as f64 / 1024.0 / 1024.0, 71.0078125);
        assert_eq!((c.family, c.unit, c.dtype, c.estimate), (Family::Gemm, Unit::Matrix, DType::BF16, false));
    }

    #[test]
    fn mm_with_out_tensor_counts_the_output_once() {
        let c = mm(&args(
            "[[32768, 2048], [2048, 2048], [32768, 2048]]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
            r#"["", "", ""]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, 2 * 32768 * 2048 * 2048);
        assert_eq!(c.bytes, (32768 * 2048 * 2 + 2048 * 2048) * 2);
    }

    #[test]
    fn addmm_adds_the_bias() {
        let c = addmm(&args(
            "[[1024], [8944, 1024], [1024, 1024], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"["", "", "", "1", "1"]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, 2 * 8944 * 1024 * 1024 + 8944 * 1024);
        assert_eq!(c.bytes, (8944 * 1024 + 1024 * 1024 + 8944 * 1024 + 1024) * 2);
    }

    #[test]
    fn bmm_and_baddbmm() {
        let c = bmm(&args("[[1, 32, 1], [1, 1, 559]]", r#"["float", "float"]"#, r#"["", ""]"#)).unwrap();
        assert_eq!((c.flops, c.bytes, c.dtype), (2 * 32 * 559, (32 + 559 + 32 * 559) * 4, DType::F32));
        let c = baddbmm(&args(
            "[[4, 8, 16], [4, 8, 32], [4, 32, 16], [], []]",
            r#"["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"]"#,
            r#"["", "", "", "1", "1"]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, 2 * 4 * 8 * 16 * 32 + 4 * 8 * 16);
        assert_eq!(c.bytes, (4 * 8 * 16 + 4 * 8 * 32 + 4 * 32 * 16 + 4 * 8 * 16) * 2);
        assert!(bmm(&args("[[2, 3, 4], [3, 4, 5]]", r#"["float", "float"]"#, r#"["", ""]"#)).is_err());
    }

    #[test]
    fn scaled_mm_fp8_with_bf16_output() {
        let c = scaled_mm(&args(
            "[[128, 256], [256, 512], [], [], [], [], [], []]",
            r#"["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "", "15", "False"]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, 2 * 128 * 512 * 256);
        assert_eq!(c.bytes, 128 * 256 + 256 * 512 + 4 + 4 + 128 * 512 * 2);
        assert_eq!(c.dtype, DType::F8E4M3FN);
    }

    #[test]
    fn linear_folds_leading_dimensions() {
        let c = linear(&args(
            "[[16, 559, 1024], [2816, 1024], [2816]]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
            r#"["", "", ""]"#,
        ))
        .unwrap();
        let m = 16 * 559;
        assert_eq!(c.flops, 2 * m * 2816 * 1024 + m * 2816);
        assert_eq!(c.bytes, (m * 1024 + 2816 * 1024 + 2816 + m * 2816) * 2);
        let no_bias = linear(&args("[[8, 4], [2, 4], []]", r#"["float", "float", ""]"#, r#"["", "", ""]"#)).unwrap();
        assert_eq!((no_bias.flops, no_bias.bytes), (2 * 8 * 2 * 4, (32 + 8 + 16) * 4));
    }

    #[test]
    fn matmul_cases() {
        let f = |a: &str, b: &str| {
            matmul(&args(&format!("[{a}, {b}]"), r#"["float", "float"]"#, r#"["", ""]"#))
                .map(|c| (c.flops, c.bytes / 4))
        };
        assert_eq!(f("[5]", "[5]"), Ok((10, 5 + 5 + 1)));
        assert_eq!(f("[3, 5]", "[5]"), Ok((30, 15 + 5 + 3)));
        assert_eq!(f("[5]", "[5, 7]"), Ok((70, 5 + 35 + 7)));
        assert_eq!(
            f("[16, 559, 1024]", "[1024, 1024]"),
            Ok((2 * 16 * 559 * 1024 * 1024, 16 * 559 * 1024 * 2 + 1024 * 1024))
        );
        assert_eq!(f("[1, 32, 1]", "[1, 1, 559]"), Ok((2 * 32 * 559, 32 + 559 + 32 * 559)));
        assert_eq!(f("[2, 1, 3, 4]", "[5, 4, 6]"), Ok((2 * 10 * 3 * 6 * 4, 24 + 120 + 10 * 18)));
        assert!(f("[2, 3, 4]", "[3, 5, 6]").is_err());
        assert!(f("[3, 4]", "[5, 6]").is_err());
    }

    #[test]
    fn errors_name_the_inputs() {
        let e = mm(&args("[[8944, 1024], [1000, 2816]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, r#"["", ""]"#))
            .unwrap_err();
        assert_eq!(e.to_string(), "inner dimensions differ: input 0 [8944, 1024] and input 1 [1000, 2816]");
        let e =
            mm(&args("[[4294967296, 4294967296], [4294967296, 4294967296]]", r#"["float", "float"]"#, r#"["", ""]"#))
                .unwrap_err();
        assert_eq!(e.to_string(), "overflow computing the element count of input 0");
        let e = mm(&OpArgs::new(vec![Input::Absent], true)).unwrap_err();
        assert_eq!(e.to_string(), "input 0 is absent, expected the first matrix");
    }
}
