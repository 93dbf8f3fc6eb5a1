//! Reductions over dimensions: `sum`, `mean`, `amax`, `max`, `prod`, `all`, `argmax`,
//! `logsumexp`, `norm`, `var`, `std`, … and the scans `cumsum`, `cumprod`.
//!
//! FLOPs: a fixed count per input element (1 for `sum`, `mean`, `max` and the like; 2 for a
//! vector norm, the square and the add; 4 for `var`/`std` and `logsumexp`, which make a second
//! pass). Bytes: the input read once and the output written once, its shape the input's with
//! the reduced dimensions removed (kept as 1 with `keepdim`; no dimensions, or an empty list,
//! reduce everything), its type the input's, `int64` for indices and for integer sums, `bool`
//! for `all`/`any`. `max.dim`/`min.dim` also write their indices; a scan writes as many
//! elements as it reads. A `dim` the trace did not record is needed, except for a vector,
//! which every valid `dim` reduces to one element.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::{DType, Kind};
use super::error::{NoCost, Quantity};

/// What a reduction writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Values of the input's type.
    Same,
    /// Values of the input's type, `int64` for integer and bool inputs (`sum`, `prod`).
    Accumulated,
    Bool,
    /// `int64` indices (`argmax`, `count_nonzero`).
    Indices,
    /// Values and `int64` indices (`max.dim`).
    ValuesAndIndices,
    /// Two value tensors (`var_mean`).
    Two,
    /// A scan: one output per input element, accumulated type.
    Scan,
}

/// A reduction op: its name without `aten::`, where its `dim` argument is, how many inputs its
/// overload with a `dim` has at least (`sum(self, dtype)` has 2 and reduces everything;
/// `sum.dim_IntList(self, dim, keepdim, dtype)` has 4), FLOPs per input element and what it
/// writes. `keepdim` is not read: it leaves a 1 where a reduced dimension was, which does not
/// change the element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduction {
    pub name: &'static str,
    dim_at: usize,
    dim_overload_inputs: usize,
    pub flops_per_element: u64,
    pub writes: Writes,
}

const fn red(name: &'static str, dim_at: usize, min: usize, flops: u64, writes: Writes) -> Reduction {
    Reduction { name, dim_at, dim_overload_inputs: min, flops_per_element: flops, writes }
}

use Writes::*;

pub const OPS: &[Reduction] = &[
    red("sum", 1, 3, 1, Accumulated),
    red("nansum", 1, 2, 1, Accumulated),
    red("mean", 1, 3, 1, Same),
    red("nanmean", 1, 2, 1, Same),
    red("prod", 1, 3, 1, Accumulated),
    red("amax", 1, 2, 1, Same),
    red("amin", 1, 2, 1, Same),
    red("max", 1, 2, 1, ValuesAndIndices),
    red("min", 1, 2, 1, ValuesAndIndices),
    red("all", 1, 2, 1, Bool),
    red("any", 1, 2, 1, Bool),
    red("argmax", 1, 2, 1, Indices),
    red("argmin", 1, 2, 1, Indices),
    red("count_nonzero", 1, 2, 1, Indices),
    red("logsumexp", 1, 2, 4, Same),
    red("norm", 2, 4, 2, Same),
    red("linalg_vector_norm", 2, 4, 2, Same),
    red("var", 1, 3, 4, Same),
    red("std", 1, 3, 4, Same),
    red("var_mean", 1, 3, 4, Two),
    red("std_mean", 1, 3, 4, Two),
    red("cumsum", 1, 2, 1, Scan),
    red("cumprod", 1, 2, 1, Scan),
];

/// The reduction an ATen name denotes (`aten::sum`).
pub fn find(op: &str) -> Option<&'static Reduction> {
    let base = op.strip_prefix("aten::")?;
    OPS.iter().find(|r| r.name == base)
}

/// The cost of one call of `r`.
pub fn cost(r: &Reduction, args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let at = x.index();
    let inputs = x.numel()?;
    let outputs = if r.writes == Scan { inputs } else { reduced_elements(r, args)? };
    let dtype = x.dtype();
    let accumulated = if dtype.kind() == Kind::Float { dtype } else { DType::I64 };
    let traffic = Traffic::new().tensor(x)?;
    let traffic = match r.writes {
        Same => traffic.elements(outputs, dtype, at)?,
        Accumulated | Scan => traffic.elements(outputs, accumulated, at)?,
        Bool => traffic.elements(outputs, DType::Bool, at)?,
        Indices => traffic.elements(outputs, DType::I64, at)?,
        ValuesAndIndices if args.len() >= r.dim_overload_inputs => {
            traffic.elements(outputs, dtype, at)?.elements(outputs, DType::I64, at)?
        }
        // `max(self)` with no dim returns the value only.
        ValuesAndIndices => traffic.elements(outputs, dtype, at)?,
        Two => traffic.elements(outputs, dtype, at)?.elements(outputs, dtype, at)?,
    };
    let flops = product(&[inputs, r.flops_per_element], Quantity::Flops, at)?;
    Ok(OpCost::exact(Family::Reduce, Unit::Vector, dtype, flops, traffic.total()))
}

/// The output's element count: the input's with the reduced dimensions taken out.
fn reduced_elements(r: &Reduction, args: &OpArgs) -> Result<u64, NoCost> {
    let x = args.tensor(0, "the input")?;
    let shape = x.shape();
    let dims = if args.len() < r.dim_overload_inputs {
        None
    } else {
        match args.int_list(r.dim_at, "dim") {
            // A vector (or a 0-dim tensor) reduces to one element whatever its valid `dim`
            // (0, -1, or the empty list for all), so an unrecorded `dim` does not matter.
            Err(NoCost::MissingConcrete { .. }) if shape.rank() <= 1 => None,
            other => other?,
        }
    };
    let reduced: Vec<usize> = match dims {
        // No dim, or an empty list: everything.
        None => (0..shape.rank()).collect(),
        Some(d) if d.is_empty() => (0..shape.rank()).collect(),
        Some(d) if shape.rank() == 0 => {
            // A 0-dim tensor reduces over dim 0 or -1 to itself.
            if d.iter().all(|&v| v == 0 || v == -1) {
                vec![]
            } else {
                return Err(NoCost::Shapes(format!("dim {d:?} (input {}) is out of range for input 0 []", r.dim_at)));
            }
        }
        Some(d) => d
            .iter()
            .map(|&v| {
                shape.axis(v).ok_or_else(|| {
                    NoCost::Shapes(format!("dim {v} (input {}) is out of range for input 0 {shape}", r.dim_at))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    // keepdim leaves a 1 where the reduced dimension was: the count is the same either way.
    let kept: Vec<u64> =
        shape.dims().iter().enumerate().filter(|(i, _)| !reduced.contains(i)).map(|(_, &d)| d).collect();
    product(&kept, Quantity::Elements, x.index())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, dims: &str, types: &str, concrete: Option<&str>) -> Result<OpCost, NoCost> {
        let args = OpArgs::of_text(dims, types, concrete);
        cost(find(name).unwrap(), &args)
    }

    #[test]
    fn mean_over_the_last_dim() {
        let c = run(
            "aten::mean",
            "[[16, 559, 1024], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            Some(r#"["", "[-1]", "True", ""]"#),
        )
        .unwrap();
        assert_eq!((c.flops, c.bytes), (9_158_656, (9_158_656 + 8944) * 4));
        assert_eq!((c.family, c.unit, c.dtype), (Family::Reduce, Unit::Vector, DType::F32));
    }

    #[test]
    fn full_reductions() {
        let c = run("aten::all", "[[16, 559]]", r#"["bool"]"#, Some(r#"[""]"#)).unwrap();
        assert_eq!((c.flops, c.bytes), (8944, 8944 + 1));
        let c = run(
            "aten::mean",
            "[[5, 128], [], [], [], []]",
            r#"["float", "ScalarList", "Scalar", "", "float"]"#,
            Some(r#"["", "[]", "False", "", ""]"#),
        )
        .unwrap();
        assert_eq!(c.bytes, (640 + 1) * 4);
        // sum(self, dtype): two inputs, the second is a dtype, not a dim.
        let c = run("aten::sum", "[[4, 8], []]", r#"["int", "Scalar"]"#, Some(r#"["", "4"]"#)).unwrap();
        assert_eq!(c.bytes, 32 * 4 + 8);
        let c = run("aten::max", "[[32]]", r#"["int"]"#, Some(r#"[""]"#)).unwrap();
        assert_eq!(c.bytes, 32 * 4 + 4);
    }

    #[test]
    fn indices_and_scans() {
        let c = run(
            "aten::argmax",
            "[[32, 151936], [], []]",
            r#"["float", "Scalar", "Scalar"]"#,
            Some(r#"["", "-1", "False"]"#),
        )
        .unwrap();
        assert_eq!(c.bytes, 32 * 151_936 * 4 + 32 * 8);
        let c = run(
            "aten::max",
            "[[32, 100], [], []]",
            r#"["c10::BFloat16", "Scalar", "Scalar"]"#,
            Some(r#"["", "1", "False"]"#),
        )
        .unwrap();
        assert_eq!(c.bytes, 3200 * 2 + 32 * 2 + 32 * 8);
        let c = run("aten::cumsum", "[[32], [], []]", r#"["int", "Scalar", ""]"#, Some(r#"["", "0", ""]"#)).unwrap();
        assert_eq!(c.bytes, 32 * 4 + 32 * 8);
        let c = run(
            "aten::var",
            "[[8, 64], [], [], []]",
            r#"["float", "ScalarList", "Scalar", "Scalar"]"#,
            Some(r#"["", "[1]", "1", "True"]"#),
        )
        .unwrap();
        assert_eq!((c.flops, c.bytes), (4 * 512, (512 + 8) * 4));
    }

    #[test]
    fn dims_must_be_known_and_in_range() {
        let e = run("aten::sum", "[[6, 65536], [], [], []]", r#"["int", "", "Scalar", ""]"#, None).unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: dim (input 1) is needed");
        // `tests/data/traces/nvidia/hta_a100_compiled_rank0.json.gz` (no Concrete Inputs): the
        // mean of a vector of 4,096 needs no dim.
        let c = run("aten::mean", "[[4096], [], [], []]", r#"["float", "", "Scalar", ""]"#, None).unwrap();
        assert_eq!((c.flops, c.bytes), (4096, (4096 + 1) * 4));
        let e = run("aten::sum", "[[1, 4096], [], [], []]", r#"["float", "", "Scalar", ""]"#, None).unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: dim (input 1) is needed");
        let e = run(
            "aten::sum",
            "[[6, 8], [], [], []]",
            r#"["int", "ScalarList", "Scalar", ""]"#,
            Some(r#"["", "[2]", "False", ""]"#),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "dim 2 (input 1) is out of range for input 0 [6, 8]");
    }
}
