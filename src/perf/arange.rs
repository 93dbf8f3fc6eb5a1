//! `aten::arange`: a tensor of `⌈(end − start) / step⌉` evenly spaced values.
//!
//! It only writes (`elements · size` bytes) and, as for the fills in `copy.rs`, the index
//! arithmetic that makes each value is not counted as FLOPs. The count comes from the
//! `start`, `end` and `step` values in Concrete Inputs. Its overloads differ by arity:
//!
//! | inputs | overload |
//! |---|---|
//! | 2 | `arange.out(end, out)` |
//! | 4 | `arange.start_out(start, end, step, out)` |
//! | 5 | `arange(end, dtype?, layout?, device?, pin_memory?)` |
//! | 6 | `arange.start(start, end, dtype?, layout?, device?, pin_memory?)` |
//! | 7 | `arange.start_step(start, end, step, dtype?, layout?, device?, pin_memory?)` |
//!
//! The element type is the `out` tensor's (recorded with its shape before it is resized, often
//! `[0]`), else the `dtype` given, else PyTorch's inference: `int64` when `start`, `end` and
//! `step` are whole numbers, the default float type (`fp32`) otherwise.

use super::args::OpArgs;
use super::cost::{Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::NoCost;

/// Where an overload's arguments are.
struct Layout {
    start: Option<usize>,
    end: usize,
    step: Option<usize>,
    type_from: TypeFrom,
}

/// Where the element type is given.
enum TypeFrom {
    /// The `out` tensor at this input.
    Out(usize),
    /// The `dtype` argument at this input (absent: inferred).
    Dtype(usize),
}

/// One call of `arange`.
pub fn arange(args: &OpArgs) -> Result<OpCost, NoCost> {
    let layout = match args.len() {
        2 => Layout { start: None, end: 0, step: None, type_from: TypeFrom::Out(1) },
        4 => Layout { start: Some(0), end: 1, step: Some(2), type_from: TypeFrom::Out(3) },
        5 => Layout { start: None, end: 0, step: None, type_from: TypeFrom::Dtype(1) },
        6 => Layout { start: Some(0), end: 1, step: None, type_from: TypeFrom::Dtype(2) },
        7 => Layout { start: Some(0), end: 1, step: Some(2), type_from: TypeFrom::Dtype(3) },
        n => return Err(NoCost::Unsupported(format!("an arange overload of {n} inputs"))),
    };
    let start = layout.start.map(|i| number(args, i, "start")).transpose()?.unwrap_or(Number::Int(0));
    let end = number(args, layout.end, "end")?;
    let step = layout.step.map(|i| number(args, i, "step")).transpose()?.unwrap_or(Number::Int(1));
    let elements = count(start, end, step)?;
    let whole = [start, end, step].iter().all(|n| matches!(n, Number::Int(_)));
    let dtype = match layout.type_from {
        TypeFrom::Out(i) => args.tensor(i, "the out tensor")?.dtype(),
        TypeFrom::Dtype(i) => match args.int(i, "dtype")? {
            Some(code) => DType::from_scalar_type_code(code).ok_or_else(|| {
                NoCost::Unsupported(format!("dtype {code} (input {i}) is not a type with a known size"))
            })?,
            None if whole => DType::I64,
            None => DType::F32,
        },
    };
    let traffic = Traffic::new().elements(elements, dtype, layout.end)?;
    Ok(OpCost::exact(Family::Copy, Unit::Vector, dtype, 0, traffic.total()))
}

/// A `start`, `end` or `step` value: whole numbers are kept exact.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int(i64),
    Float(f64),
}

fn number(args: &OpArgs, i: usize, what: &'static str) -> Result<Number, NoCost> {
    let text = args.concrete(i, what)?.ok_or(NoCost::Input { input: i, expected: what, found: "absent" })?;
    let t = text.trim();
    if let Ok(v) = t.parse::<i64>() {
        return Ok(Number::Int(v));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Number::Float(v)),
        _ => Err(NoCost::BadConcrete { input: i, what, text: t.chars().take(40).collect() }),
    }
}

/// `⌈(end − start) / step⌉`, as PyTorch computes the size; a zero step, or a step whose sign
/// goes away from `end`, is an error (PyTorch raises for both).
fn count(start: Number, end: Number, step: Number) -> Result<u64, NoCost> {
    let bad = |reason: &str| NoCost::Shapes(format!("arange from {start:?} to {end:?} by {step:?}: {reason}"));
    let size = match (start, end, step) {
        (Number::Int(a), Number::Int(b), Number::Int(s)) => {
            let (a, b, s) = (i128::from(a), i128::from(b), i128::from(s));
            if s == 0 {
                return Err(bad("the step is zero"));
            }
            let span = b - a;
            // Ceiling division for either sign of the step.
            let q = span / s;
            let q = if span % s != 0 && (span < 0) == (s < 0) { q + 1 } else { q };
            if q < 0 {
                return Err(bad("the step goes away from the end"));
            }
            u64::try_from(q).map_err(|_| bad("too many elements"))?
        }
        _ => {
            let f = |n: Number| match n {
                Number::Int(v) => v as f64,
                Number::Float(v) => v,
            };
            if f(step) == 0.0 {
                return Err(bad("the step is zero"));
            }
            let q = ((f(end) - f(start)) / f(step)).ceil();
            // 2⁵³: beyond it an f64 no longer holds every whole number.
            if !(0.0..=9_007_199_254_740_992.0).contains(&q) {
                return Err(bad("the step goes away from the end, or too many elements"));
            }
            q as u64
        }
    };
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dims: &str, types: &str, concrete: &str) -> Result<OpCost, NoCost> {
        arange(&OpArgs::of_text(dims, types, Some(concrete)))
    }

    /// `tests/data/traces/amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz`: positions 238 to
    /// 270 as `int64` (dtype code 4), and the `out` overload it calls.
    #[test]
    fn sglang_positions() {
        let c = run(
            "[[], [], [], [], [], []]",
            r#"["Scalar", "Scalar", "Scalar", "", "", "Scalar"]"#,
            r#"["238", "270", "4", "", "", "False"]"#,
        )
        .unwrap();
        assert_eq!((c.bytes, c.flops, c.dtype, c.family), (32 * 8, 0, DType::I64, Family::Copy));
        let c = run("[[], [], [], [0]]", r#"["Scalar", "Scalar", "Scalar", "long int"]"#, r#"["238", "270", "1", ""]"#)
            .unwrap();
        assert_eq!(c.bytes, 32 * 8);
    }

    /// `tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz`-style call with no dtype:
    /// whole numbers make `int64`.
    #[test]
    fn inferred_type_and_steps() {
        let c = run(
            "[[], [], [], [], [], []]",
            r#"["Scalar", "Scalar", "", "", "", "Scalar"]"#,
            r#"["0", "559", "", "", "", "False"]"#,
        )
        .unwrap();
        assert_eq!((c.bytes, c.dtype), (559 * 8, DType::I64));
        let seven = r#"["Scalar", "Scalar", "Scalar", "", "", "", ""]"#;
        let dims7 = "[[], [], [], [], [], [], []]";
        assert_eq!(run(dims7, seven, r#"["0", "10", "3", "", "", "", ""]"#).unwrap().bytes, 4 * 8);
        assert_eq!(run(dims7, seven, r#"["10", "0", "-3", "", "", "", ""]"#).unwrap().bytes, 4 * 8);
        let c = run(dims7, seven, r#"["0", "1", "0.25", "", "", "", ""]"#).unwrap();
        assert_eq!((c.bytes, c.dtype), (4 * 4, DType::F32));
        assert_eq!(
            run(dims7, seven, r#"["0", "10", "0", "", "", "", ""]"#).unwrap_err().to_string(),
            "arange from Int(0) to Int(10) by Int(0): the step is zero"
        );
        assert!(run(dims7, seven, r#"["0", "10", "-1", "", "", "", ""]"#).is_err());
        assert_eq!(run("[[], []]", r#"["Scalar", "int"]"#, r#"["5", ""]"#).unwrap().bytes, 5 * 4);
        assert_eq!(
            arange(&OpArgs::of_text("[[], []]", r#"["Scalar", "int"]"#, None)).unwrap_err().to_string(),
            "Concrete Inputs missing: end (input 0) is needed"
        );
    }
}
