//! Nova's case view: per instruction, the case type and case shape its `fusion_utils` derives.
//!
//! "Operand i" is the i-th positional argument (keywords left out). The rules, as
//! `docs/optrace.md` ("The case view") states them:
//!
//! | op | case type | case shape |
//! |---|---|---|
//! | `dot` | gemm | operand 0 shape + operand 2 shape (`[b, m, k] + [n]`) |
//! | `embedding`, `mbedding` | gather | operand 0 shape + operand 1 shape |
//! | `flash_attention_fusion` | sdpa | `[q shape, kv shape, true]` (operands 0 and 1) |
//! | `layer_norm` | layernorm | operand 0 shape without its first dim |
//! | `add`, `gelu` | same name | `[1, s, 1, h]` from operand 0 dims 1 and 2 |
//! | `transpose` | transpose | `[input shape, dim map]`, the two scalars swapped in the identity |
//! | `allreduce` | allreduce | operand 0 shape |
//! | `allgather` | allgather | `[[b, s × 32, …], input shape]` (Nova's group of 32) |
//! | `allgather_gemm` | allgather_gemm | operand 0 shape + operand 2 shape |
//!
//! Where Nova would raise (an unknown op, an operand missing or of too low a rank), the
//! instruction is listed as unmapped with the reason instead. One addition: a `dot` or
//! `allgather_gemm` written without its bias operand takes `n` from the last dim of operand 1
//! (the weight), so the gemm still has its four numbers.
//!
//! The case's dtype is its first result's, or operand 0's when no result has a type.

use std::collections::HashSet;

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

use super::address::TensorTable;
use super::dtype::Dtype;
use super::parse::{OpTrace, Record, TensorRef, Value};

/// Nova hard-codes the all-gather group size in the case shape.
pub const NOVA_ALLGATHER_GROUP: u64 = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseType {
    Gemm,
    Gather,
    Sdpa,
    Layernorm,
    Add,
    Gelu,
    Transpose,
    Allreduce,
    Allgather,
    AllgatherGemm,
}

impl CaseType {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseType::Gemm => "gemm",
            CaseType::Gather => "gather",
            CaseType::Sdpa => "sdpa",
            CaseType::Layernorm => "layernorm",
            CaseType::Add => "add",
            CaseType::Gelu => "gelu",
            CaseType::Transpose => "transpose",
            CaseType::Allreduce => "allreduce",
            CaseType::Allgather => "allgather",
            CaseType::AllgatherGemm => "allgather_gemm",
        }
    }
}

/// A case shape; serialized as Nova writes it (a flat list, or the nested forms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseShape {
    Dims(Vec<u64>),
    /// `[q, kv, true]`.
    Sdpa {
        q: Vec<u64>,
        kv: Vec<u64>,
    },
    /// `[input, dim_map]`.
    Transpose {
        input: Vec<u64>,
        dim_map: Vec<u64>,
    },
    /// `[gathered, input]`.
    Allgather {
        gathered: Vec<u64>,
        input: Vec<u64>,
    },
}

impl Serialize for CaseShape {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CaseShape::Dims(d) => d.serialize(s),
            CaseShape::Sdpa { q, kv } => {
                let mut seq = s.serialize_seq(Some(3))?;
                seq.serialize_element(q)?;
                seq.serialize_element(kv)?;
                seq.serialize_element(&true)?;
                seq.end()
            }
            CaseShape::Transpose { input: a, dim_map: b } | CaseShape::Allgather { gathered: a, input: b } => {
                (a, b).serialize(s)
            }
        }
    }
}

impl std::fmt::Display for CaseShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text.replace(',', ", "))
    }
}

/// One instruction in Nova's case view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    pub line: usize,
    pub op: String,
    pub case_type: CaseType,
    pub case_shape: CaseShape,
    pub dtype: Dtype,
    pub input_ids: Vec<u64>,
    pub output_ids: Vec<u64>,
    pub input_addrs: Vec<u64>,
    pub output_addrs: Vec<u64>,
    /// Shapes as written at this use (they may differ from the definition's).
    pub input_shapes: Vec<Vec<u64>>,
    /// Shapes of the results; an untyped result shows its first typed use, or `[]`.
    pub output_shapes: Vec<Vec<u64>>,
}

/// An instruction with no case: Nova would raise; we list it and go on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmapped {
    pub line: usize,
    pub op: String,
    pub reason: String,
}

/// The case view of a whole trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CaseView {
    pub cases: Vec<Case>,
    pub unmapped: Vec<Unmapped>,
}

impl CaseView {
    pub fn build(trace: &OpTrace, tensors: &TensorTable) -> CaseView {
        let mut view = CaseView::default();
        for record in &trace.records {
            match case_of(record) {
                Ok((case_type, case_shape)) => view.cases.push(make_case(record, tensors, case_type, case_shape)),
                Err(reason) => view.unmapped.push(Unmapped { line: record.line, op: record.op.clone(), reason }),
            }
        }
        view
    }

    /// The distinct unmapped op names, in order of first appearance. (A set, not a search of
    /// the names so far: a crafted trace may have as many op names as records.)
    pub fn unmapped_ops(&self) -> Vec<String> {
        let mut seen: HashSet<&str> = HashSet::new();
        self.unmapped.iter().filter(|u| seen.insert(&u.op)).map(|u| u.op.clone()).collect()
    }
}

fn make_case(record: &Record, tensors: &TensorTable, case_type: CaseType, case_shape: CaseShape) -> Case {
    let operands = record.operand_tensors();
    let shape_of = |t: &TensorRef| {
        t.ty.as_ref()
            .or_else(|| tensors.get(t.id).and_then(|i| i.ty.as_ref()))
            .map(|ty| ty.shape.clone())
            .unwrap_or_default()
    };
    let dtype = record
        .results
        .iter()
        .find_map(|t| t.ty.as_ref())
        .or_else(|| operands.first().and_then(|t| t.ty.as_ref()))
        .map_or_else(|| Dtype::Unknown("unknown".into()), |ty| ty.dtype.clone());
    Case {
        line: record.line,
        op: record.op.clone(),
        case_type,
        case_shape,
        dtype,
        input_ids: operands.iter().map(|t| t.id).collect(),
        output_ids: record.results.iter().map(|t| t.id).collect(),
        input_addrs: operands.iter().map(|t| tensors.address(t.id)).collect(),
        output_addrs: record.results.iter().map(|t| tensors.address(t.id)).collect(),
        input_shapes: operands.iter().map(|t| shape_of(t)).collect(),
        output_shapes: record.results.iter().map(shape_of).collect(),
    }
}

/// The case type and shape of one instruction, or why it has none.
pub fn case_of(record: &Record) -> Result<(CaseType, CaseShape), String> {
    let positional: Vec<&Value> = record.positional().collect();
    let op = record.op.as_str();
    let shape = |i: usize| -> Result<Vec<u64>, String> {
        match positional.get(i) {
            Some(Value::Tensor(t)) => Ok(t.ty.as_ref().map(|ty| ty.shape.clone()).unwrap_or_default()),
            Some(_) => Err(format!("{op}: operand {i} is not a tensor")),
            None => Err(format!("{op}: operand {i} is missing")),
        }
    };
    let rank_at_least = |s: &[u64], r: usize, i: usize| -> Result<(), String> {
        if s.len() < r {
            Err(format!("{op}: operand {i} has rank {}, the case shape needs at least {r}", s.len()))
        } else {
            Ok(())
        }
    };
    // dot and allgather_gemm: [b, m, k] + [n]; n from the weight when there is no bias.
    let gemm = |t: CaseType| -> Result<(CaseType, CaseShape), String> {
        let mut s = shape(0)?;
        let n = match positional.get(2) {
            Some(Value::Tensor(_)) => shape(2)?,
            _ => vec![*shape(1)?.last().ok_or_else(|| format!("{op}: operand 1 is 0-d, no n to take"))?],
        };
        s.extend(n);
        Ok((t, CaseShape::Dims(s)))
    };
    match op {
        "dot" => gemm(CaseType::Gemm),
        "allgather_gemm" => gemm(CaseType::AllgatherGemm),
        "embedding" | "mbedding" => {
            let mut s = shape(0)?;
            s.extend(shape(1)?);
            Ok((CaseType::Gather, CaseShape::Dims(s)))
        }
        "flash_attention_fusion" => Ok((CaseType::Sdpa, CaseShape::Sdpa { q: shape(0)?, kv: shape(1)? })),
        "layer_norm" => {
            let s = shape(0)?;
            rank_at_least(&s, 1, 0)?;
            Ok((CaseType::Layernorm, CaseShape::Dims(s[1..].to_vec())))
        }
        "add" | "gelu" => {
            let s = shape(0)?;
            rank_at_least(&s, 3, 0)?;
            let t = if op == "add" { CaseType::Add } else { CaseType::Gelu };
            Ok((t, CaseShape::Dims(vec![1, s[1], 1, s[2]])))
        }
        "transpose" => {
            let input = shape(0)?;
            let dims: Vec<&str> = positional
                .iter()
                .filter_map(|v| match v {
                    Value::Scalar { value, .. } => Some(value.as_str()),
                    _ => None,
                })
                .collect();
            let [d0, d1] = dims[..] else {
                return Err(format!("transpose: expected two dim scalars, found {}", dims.len()));
            };
            let rank = input.len();
            let axis = |text: &str| -> Result<usize, String> {
                let d: i64 = text.parse().map_err(|_| format!("transpose: dim `{text}` is not a whole number"))?;
                let a = if d < 0 { d + rank as i64 } else { d };
                usize::try_from(a)
                    .ok()
                    .filter(|&a| a < rank)
                    .ok_or_else(|| format!("transpose: dim {d} is out of range for rank {rank}"))
            };
            let (a, b) = (axis(d0)?, axis(d1)?);
            let mut dim_map: Vec<u64> = (0..rank as u64).collect();
            dim_map.swap(a, b);
            Ok((CaseType::Transpose, CaseShape::Transpose { input, dim_map }))
        }
        "allreduce" => Ok((CaseType::Allreduce, CaseShape::Dims(shape(0)?))),
        "allgather" => {
            let input = shape(0)?;
            rank_at_least(&input, 2, 0)?;
            let mut gathered = input.clone();
            gathered[1] = gathered[1].checked_mul(NOVA_ALLGATHER_GROUP).ok_or_else(|| {
                format!(
                    "allgather: operand 0's dimension 1 ({}) × {NOVA_ALLGATHER_GROUP} does not fit in 64 bits",
                    input[1]
                )
            })?;
            Ok((CaseType::Allgather, CaseShape::Allgather { gathered, input }))
        }
        other => Err(format!("no case type for op \"{other}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_line;

    fn case(line: &str) -> Result<(CaseType, String), String> {
        let r = parse_line(line, 1).unwrap().unwrap();
        case_of(&r).map(|(t, s)| (t, serde_json::to_string(&s).unwrap()))
    }

    #[test]
    fn every_rule_of_the_table() {
        let ok = |line: &str, t: CaseType, shape: &str| assert_eq!(case(line), Ok((t, shape.to_string())), "{line}");
        ok(
            "0:0:0 %10:<1x128x2304xf16> = n.1.dot(%7:<1x128x768xf16>, %8:<768x2304xf16>, %9:<2304xf16>)",
            CaseType::Gemm,
            "[1,128,768,2304]",
        );
        ok(
            "0:0:0 %10:<1x128x2304xf16> = n.1.dot(%7:<1x128x768xf16>, %8:<768x2304xf16>)",
            CaseType::Gemm,
            "[1,128,768,2304]",
        );
        ok(
            "0:0:0 %2:<1x128x768xf16> = n.1.mbedding(%0:<1x128xi32>, %1:<30522x768xf16>)",
            CaseType::Gather,
            "[1,128,30522,768]",
        );
        ok(
            "0:0:0 %14:<1x12x128x64xf16> = n.1.flash_attention_fusion(%11:<1x12x128x64xf16>, %12:<1x12x256x64xf16>, %13:<1x12x256x64xf16>)",
            CaseType::Sdpa,
            "[[1,12,128,64],[1,12,256,64],true]",
        );
        ok(
            "0:0:0 %7:<1x128x768xf16> = n.1.layer_norm(%5:<1x128x768xf16>, %6:<768xf16>)",
            CaseType::Layernorm,
            "[128,768]",
        );
        ok(
            "0:0:0 %5:<1x128x768xf16> = n.1.add(%2:<1x128x768xf16>, %4:<1x128x768xf16>)",
            CaseType::Add,
            "[1,128,1,768]",
        );
        ok("0:0:0 %5:<2x128x3072xf16> = n.1.gelu(%2:<2x128x3072xf16>)", CaseType::Gelu, "[1,128,1,3072]");
        ok(
            "0:0:0 %15:<1x128x12x64xf16> = n.1.transpose(%14:<1x12x128x64xf16>, 1:i32, 2:i32)",
            CaseType::Transpose,
            "[[1,12,128,64],[0,2,1,3]]",
        );
        ok(
            "0:0:0 %15:<1x128x12x64xf16> = n.1.transpose(%14:<1x12x128x64xf16>, 0:i32, 1:i32)",
            CaseType::Transpose,
            "[[1,12,128,64],[1,0,2,3]]",
        );
        ok(
            "0:0:0 %15:<1x12x64x128xf16> = n.1.transpose(%14:<1x12x128x64xf16>, -1:i64, -2:i64)",
            CaseType::Transpose,
            "[[1,12,128,64],[0,1,3,2]]",
        );
        ok("0:0:0 %17:<1x128x768xf16> = n.1.allreduce(%16:<1x128x768xf16>)", CaseType::Allreduce, "[1,128,768]");
        ok(
            "0:0:0 %17:<1x4096x768xf16> = n.1.allgather(%16:<1x128x768xf16>)",
            CaseType::Allgather,
            "[[1,4096,768],[1,128,768]]",
        );
        ok(
            "0:0:0 %17:<1x4096x2304xf16> = n.1.allgather_gemm(%7:<1x128x768xf16>, %8:<768x2304xf16>, %9:<2304xf16>)",
            CaseType::AllgatherGemm,
            "[1,128,768,2304]",
        );
    }

    #[test]
    fn where_nova_would_raise_we_give_a_reason() {
        let err = |line: &str| case(line).unwrap_err();
        assert_eq!(err("0:0:0 %1:<2xf16> = n.1.softmax(%0:<2xf16>)"), "no case type for op \"softmax\"");
        assert!(err("0:0:0 %1:<2xf16> = n.1.add(%0:<2xf16>, %3:<2xf16>)").contains("rank 1"));
        assert!(err("0:0:0 %1:<2xf16> = n.1.transpose(%0:<2xf16>, 0:i32)").contains("two dim scalars"));
        assert!(err("0:0:0 %1:<2xf16> = n.1.transpose(%0:<2xf16>, 0:i32, 5:i32)").contains("out of range"));
        assert!(err("0:0:0 %1:<2xf16> = n.1.layer_norm(1:i32)").contains("not a tensor"));
        assert!(err("0:0:0 %1:<2xf16> = n.1.allreduce()").contains("missing"));
    }
}
