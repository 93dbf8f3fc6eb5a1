//! Data movement: `aten::copy_`, `aten::_to_copy`, `aten::to`, `aten::clone`,
//! `aten::contiguous`, `aten::fill_`, `aten::zero_`, `aten::cat`, `aten::stack`,
//! `aten::constant_pad_nd`.
//!
//! No FLOPs (a type conversion is counted as movement, not arithmetic). Bytes: the source read
//! once at its own size and type, the destination written once at its own: `copy_` reads `src`
//! and writes `self`; a conversion writes the new type; `fill_`/`zero_` only write; `cat` and
//! `stack` read every listed tensor and write their sum; padding reads the input and writes the
//! padded output.

use super::args::{Input, List, OpArgs, Tensor};
use super::cost::{sum, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};
use super::shape::Shape;

/// `copy_(self, src, non_blocking)`: `src` read, `self` written.
pub fn copy(args: &OpArgs) -> Result<OpCost, NoCost> {
    let dst = args.tensor(0, "the destination")?;
    let src = args.tensor(1, "the source")?;
    let bytes = Traffic::new().tensor(src)?.tensor(dst)?;
    Ok(moved(dst.dtype(), bytes))
}

/// `clone(self, memory_format?)` and `contiguous(self, memory_format)`.
pub fn clone(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    Ok(moved(x.dtype(), Traffic::new().tensor(x)?.tensor(x)?))
}

/// `fill_(self, value)` and `zero_(self)`: `self` written.
pub fn fill(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the tensor filled")?;
    Ok(moved(x.dtype(), Traffic::new().tensor(x)?))
}

/// `_to_copy(self, dtype?, layout?, device?, pin_memory?, non_blocking, memory_format?)`.
pub fn to_copy(args: &OpArgs) -> Result<OpCost, NoCost> {
    convert(args, 1)
}

/// `to`: its overloads differ by arity: `to.dtype_layout(self, dtype?, layout?, device?, …)`
/// has 8 inputs, `to.device(self, device, dtype, …)` 6, and with 5 `to.other(self, other, …)`
/// takes the type of the tensor `other`, `to.dtype(self, dtype, …)` the type given.
pub fn to(args: &OpArgs) -> Result<OpCost, NoCost> {
    match (args.len(), args.input(1)) {
        (6, _) => convert(args, 2),
        (_, Some(Input::Tensor(other))) => {
            let x = args.tensor(0, "the input")?;
            converted(x, other.dtype())
        }
        _ => convert(args, 1),
    }
}

/// A copy of input 0 into the type given by input `dtype_at` (its own when absent).
fn convert(args: &OpArgs, dtype_at: usize) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let out = match args.int(dtype_at, "dtype")? {
        None => x.dtype(),
        Some(code) => DType::from_scalar_type_code(code).ok_or_else(|| {
            NoCost::Unsupported(format!("dtype {code} (input {dtype_at}) is not a type with a known size"))
        })?,
    };
    converted(x, out)
}

fn converted(x: &Tensor, out: DType) -> Result<OpCost, NoCost> {
    let bytes = Traffic::new().tensor(x)?.elements(x.numel()?, out, x.index())?;
    Ok(moved(x.dtype(), bytes))
}

/// `cat(tensors, dim)` and `stack(tensors, dim)`, with an optional `out=` tensor after them.
/// The profiler records a tensor list's shapes but not its element type, so the type comes from
/// the `out=` tensor, and without one there is no model here ([`cat_of_element_bytes`] takes
/// the size from the op's kernel).
pub fn cat(args: &OpArgs) -> Result<OpCost, NoCost> {
    let elements = list_elements(args)?;
    let Some(out) = args.tensors().find(|t| t.index() >= 2) else {
        return Err(NoCost::ListDType { input: 0 });
    };
    let bytes = Traffic::new().elements(elements, out.dtype(), 0)?.elements(elements, out.dtype(), 0)?;
    Ok(moved(out.dtype(), bytes))
}

/// `cat`/`stack` with elements of `size` bytes, as its kernel's name gives them
/// ([`opaque_element_bytes`]): every input read and the output written once. The type is
/// the unsigned integer of that size: a copy does no arithmetic, so it only picks the peak.
pub fn cat_of_element_bytes(args: &OpArgs, size: u64) -> Result<OpCost, NoCost> {
    let dtype = match size {
        1 => DType::U8,
        2 => DType::U16,
        4 => DType::U32,
        8 => DType::U64,
        _ => return Err(NoCost::Unsupported(format!("a list copy of {size}-byte elements"))),
    };
    let elements = list_elements(args)?;
    let bytes = Traffic::new().elements(elements, dtype, 0)?.elements(elements, dtype, 0)?;
    Ok(moved(dtype, bytes))
}

/// The element size PyTorch's CUDA and HIP cat kernel is instantiated on, from its name
/// (`CatArrayBatchedCopy<…OpaqueType<2u>…>`: the kernel copies elements as an opaque type of
/// their size); `None` for any other kernel.
pub fn opaque_element_bytes(kernel: &str) -> Option<u64> {
    if !kernel.contains("CatArrayBatchedCopy") {
        return None;
    }
    let rest = &kernel[kernel.find("OpaqueType<")? + "OpaqueType<".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&n| (1..=16).contains(&n))
}

/// The elements of a list copy's tensors (input 0), all of them.
fn list_elements(args: &OpArgs) -> Result<u64, NoCost> {
    let shapes = match args.input(0) {
        Some(Input::List(List::Tensors(shapes))) => shapes,
        other => {
            return Err(NoCost::Input {
                input: 0,
                expected: "a tensor list",
                found: other.map_or("absent", Input::kind_name),
            })
        }
    };
    if shapes.is_empty() {
        return Err(NoCost::ListShapes { input: 0 });
    }
    let counts = shapes
        .iter()
        .map(|s| s.numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: 0 }))
        .collect::<Result<Vec<u64>, _>>()?;
    sum(&counts, Quantity::Elements, 0)
}

/// `constant_pad_nd(self, pad, value)`: `pad` holds (before, after) pairs from the last
/// dimension backwards; negative pads crop.
pub fn constant_pad(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let pad = args.int_list(1, "pad")?.ok_or(NoCost::Input { input: 1, expected: "pad", found: "absent" })?;
    let rank = x.shape().rank();
    if pad.len() % 2 != 0 || pad.len() / 2 > rank {
        return Err(NoCost::Shapes(format!("pad {pad:?} (input 1) does not fit input 0 {}", x.shape())));
    }
    let mut out = x.dims().to_vec();
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = &mut out[rank - 1 - k];
        let size = i128::from(*d) + i128::from(pair[0]) + i128::from(pair[1]);
        *d = u64::try_from(size).map_err(|_| {
            NoCost::Shapes(format!("pad {pad:?} (input 1) leaves a negative size of input 0 {}", x.shape()))
        })?;
    }
    let outputs = Shape::new(out).numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: 0 })?;
    let bytes = Traffic::new().tensor(x)?.elements(outputs, x.dtype(), x.index())?;
    Ok(moved(x.dtype(), bytes))
}

/// `upsample_nearest{1,2,3}d(input, output_size, scales…)`: each output element is a copy of
/// one input element, so it reads the input once and writes the output; no arithmetic. The
/// output's last `spatial` sizes are `output_size` (the `.vec` overload called with scale
/// factors only records none, and has no model).
pub fn upsample_nearest(args: &OpArgs, spatial: usize) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let size = args.int_list(1, "output_size")?.ok_or(NoCost::Input {
        input: 1,
        expected: "output_size",
        found: "absent (scale factors only)",
    })?;
    let rank = x.shape().rank();
    if size.len() != spatial || rank < spatial {
        return Err(NoCost::Shapes(format!("output_size {size:?} (input 1) does not fit input 0 {}", x.shape())));
    }
    let mut out = x.dims().to_vec();
    for (d, s) in out[rank - spatial..].iter_mut().zip(&size) {
        *d = u64::try_from(*s)
            .map_err(|_| NoCost::Shapes(format!("output_size {size:?} (input 1) has a negative size")))?;
    }
    let outputs = Shape::new(out).numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: 0 })?;
    let bytes = Traffic::new().tensor(x)?.elements(outputs, x.dtype(), x.index())?;
    Ok(moved(x.dtype(), bytes))
}

fn moved(dtype: DType, bytes: Traffic) -> OpCost {
    OpCost::exact(Family::Copy, Unit::Vector, dtype, 0, bytes.total())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_copy_takes_its_element_size_from_its_kernel() {
        let kernel = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(…)";
        assert_eq!(opaque_element_bytes(kernel), Some(2));
        assert_eq!(opaque_element_bytes("CatArrayBatchedCopy<float>"), None);
        assert_eq!(opaque_element_bytes("elementwise_kernel<OpaqueType<2u>>"), None);
        let args = OpArgs::of_text(
            "[[[16, 16, 559, 32], [16, 16, 559, 32]], []]",
            r#"["TensorList", "Scalar"]"#,
            Some(r#"["", "-1"]"#),
        );
        assert_eq!(cat(&args).unwrap_err(), NoCost::ListDType { input: 0 });
        let c = cat_of_element_bytes(&args, 2).unwrap();
        let n = 2 * 16 * 16 * 559 * 32;
        assert_eq!((c.flops, c.bytes, c.family), (0, 2 * 2 * n, Family::Copy));
        assert!(cat_of_element_bytes(&args, 3).is_err());
    }

    fn args(dims: &str, types: &str, concrete: Option<&str>) -> OpArgs {
        OpArgs::of_text(dims, types, concrete)
    }

    #[test]
    fn copies_read_and_write_at_their_own_types() {
        let n = 16 * 559 * 1024;
        let c = copy(&args(
            "[[16, 559, 1024], [16, 559, 1024], []]",
            r#"["float", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "", "False"]"#),
        ))
        .unwrap();
        assert_eq!((c.flops, c.bytes, c.dtype, c.family), (0, n * 6, DType::F32, Family::Copy));
        let c = to_copy(&args(
            "[[1, 559, 64], [], [], [], [], [], []]",
            r#"["float", "Scalar", "", "", "", "Scalar", ""]"#,
            Some(r#"["", "15", "", "", "", "False", ""]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 559 * 64 * 6);
        let c = to(&args(
            "[[1, 32, 1], [], [], [], []]",
            r#"["float", "Scalar", "Scalar", "Scalar", ""]"#,
            Some(r#"["", "6", "False", "False", ""]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 32 * 8);
        let c = to(&args(
            "[[2], [], [], [], [], [], [], []]",
            r#"["int", "Scalar", "Scalar", "", "", "Scalar", "Scalar", ""]"#,
            Some(r#"["", "4", "0", "", "", "True", "False", ""]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 2 * 4 + 2 * 8);
        let c =
            clone(&args("[[16, 16, 559, 64], []]", r#"["c10::BFloat16", "Scalar"]"#, Some(r#"["", "0"]"#))).unwrap();
        assert_eq!(c.bytes, 16 * 16 * 559 * 64 * 4);
        let c = fill(&args("[[1], []]", r#"["int", "Scalar"]"#, Some(r#"["", "0"]"#))).unwrap();
        assert_eq!(c.bytes, 4);
    }

    #[test]
    fn cat_needs_a_type() {
        let e = cat(&args(
            "[[[16, 16, 559, 32], [16, 16, 559, 32]], []]",
            r#"["TensorList", "Scalar"]"#,
            Some(r#"["", "-1"]"#),
        ))
        .unwrap_err();
        assert_eq!(e.to_string(), "the trace does not record the element type of the tensors in list input 0");
        let c = cat(&args(
            "[[[2, 3], [4, 3]], [], [6, 3]]",
            r#"["TensorList", "Scalar", "c10::Half"]"#,
            Some(r#"["", "0", ""]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 18 * 2 * 2);
        let e = cat(&args("[[], []]", r#"["TensorList", "Scalar"]"#, None)).unwrap_err();
        assert_eq!(e.to_string(), "the trace records no shapes for tensor list input 0");
    }

    #[test]
    fn nearest_upsampling_reads_the_input_and_writes_the_output() {
        let c = upsample_nearest(
            &args(
                "[[2, 3, 8, 8], [], [], []]",
                r#"["float", "ScalarList", "Scalar", "Scalar"]"#,
                Some(r#"["", "[16, 16]", "", ""]"#),
            ),
            2,
        )
        .unwrap();
        assert_eq!((c.flops, c.bytes), (0, 2 * 3 * 8 * 8 * 4 + 2 * 3 * 16 * 16 * 4));
        let c = upsample_nearest(
            &args("[[4, 5, 10], [], []]", r#"["c10::Half", "ScalarList", "Scalar"]"#, Some(r#"["", "[30]", ""]"#)),
            1,
        )
        .unwrap();
        assert_eq!(c.bytes, 4 * 5 * 10 * 2 + 4 * 5 * 30 * 2);
        let e = upsample_nearest(
            &args("[[2, 3, 8, 8], [], []]", r#"["float", "", "GenericList"]"#, Some(r#"["", "", "[2., 2.]"]"#)),
            2,
        )
        .unwrap_err();
        assert!(e.to_string().contains("output_size"), "{e}");
    }

    #[test]
    fn padding() {
        let c = constant_pad(&args(
            "[[888, 2880], [], []]",
            r#"["c10::BFloat16", "ScalarList", "Scalar"]"#,
            Some(r#"["", "[0, 192]", "0."]"#),
        ))
        .unwrap();
        assert_eq!(c.bytes, 888 * 2880 * 2 + 888 * 3072 * 2);
        assert!(constant_pad(&args(
            "[[4], [], []]",
            r#"["float", "ScalarList", "Scalar"]"#,
            Some(r#"["", "[-3, -2]", "0."]"#)
        ))
        .is_err());
    }
}
