//! Bytes of the fused custom ops serving engines call (SGLang's `sgl_kernel`, AMD's `aiter`,
//! vLLM's `_C`), which the per-op performance models do not know: each is a library fusion whose
//! parts are known (`docs/trace-fusion.md`, "Serving engines' fused ops"). Each input read once,
//! each output written once, at the recorded shapes and types; an output buffer passed in is
//! written, not read.

use super::kind::Kind;
use crate::trace::time::perf::{OpArgs, Tensor};

/// What a serving op's model says: fused and unfused bytes, kind, parts and data flow.
pub(crate) struct ServingCost {
    pub fused: u64,
    pub unfused: u64,
    pub kind: Kind,
    pub parts: &'static [&'static str],
    /// The data flow: its output's bytes, its tensor inputs' bytes, its iteration space.
    pub out_bytes: u64,
    pub in_bytes: Vec<u64>,
    pub space: Option<u64>,
}

/// The model of `op`, `None` when `op` is not one of these; `Some(Err)` names what is wrong.
pub(crate) fn serving_cost(op: &str, args: &OpArgs) -> Option<Result<ServingCost, String>> {
    let model: fn(&OpArgs) -> Result<ServingCost, String> = match op {
        "sgl_kernel::silu_and_mul" | "_C::silu_and_mul" => silu_and_mul,
        "aiter::rmsnorm" => rmsnorm,
        "aiter::add_rmsnorm" | "aiter::rmsnorm2d_fwd_with_add_ck" => add_rmsnorm,
        "sgl_kernel::rotary_embedding" | "_C::rotary_embedding" => rotary,
        _ => return None,
    };
    Some(model(args))
}

fn tensor<'a>(args: &'a OpArgs, i: usize, role: &str) -> Result<&'a Tensor, String> {
    args.tensor(i, "a tensor").map_err(|_| format!("input {i} ({role}) is not a recorded tensor"))
}

fn bytes(t: &Tensor) -> Result<u64, String> {
    t.bytes().map_err(|e| e.to_string())
}

fn sum(terms: &[u64]) -> Result<u64, String> {
    terms.iter().try_fold(0u64, |s, &t| s.checked_add(t)).ok_or_else(|| "its bytes do not fit in 64 bits".to_string())
}

/// `silu_and_mul(out [T, H], input [T, 2H])`: `out = silu(input[:, :H]) · input[:, H:]`.
/// Unfused, SiLU writes `[T, H]` and the multiply reads it back: 2 × the output more.
fn silu_and_mul(args: &OpArgs) -> Result<ServingCost, String> {
    let (out, x) = (tensor(args, 0, "the output")?, tensor(args, 1, "the input")?);
    let (o, i) = (bytes(out)?, bytes(x)?);
    let fused = sum(&[i, o])?;
    Ok(ServingCost {
        fused,
        unfused: sum(&[fused, o, o])?,
        kind: Kind::Elementwise,
        parts: &["silu", "mul"],
        out_bytes: o,
        in_bytes: vec![i],
        space: x.numel().ok(),
    })
}

/// `aiter::rmsnorm(out, input, weight, eps)`: one op.
fn rmsnorm(args: &OpArgs) -> Result<ServingCost, String> {
    let (out, x, w) = (tensor(args, 0, "the output")?, tensor(args, 1, "the input")?, tensor(args, 2, "the weight")?);
    let (o, i, wb) = (bytes(out)?, bytes(x)?, bytes(w)?);
    let fused = sum(&[i, wb, o])?;
    Ok(ServingCost {
        fused,
        unfused: fused,
        kind: Kind::Norm,
        parts: &["rms_norm"],
        out_bytes: o,
        in_bytes: vec![i, wb],
        space: x.numel().ok(),
    })
}

/// `aiter::add_rmsnorm(out, input, residual_in, residual_out, weight, eps)` (and CK's
/// `rmsnorm2d_fwd_with_add`): `residual_out = input + residual_in`, `out = rms_norm(residual_out)`.
/// The sum is an output either way (the next layer's residual); unfused, the norm reads it back:
/// 1 × the sum more.
fn add_rmsnorm(args: &OpArgs) -> Result<ServingCost, String> {
    let out = tensor(args, 0, "the output")?;
    let x = tensor(args, 1, "the input")?;
    let r_in = tensor(args, 2, "the residual")?;
    let r_out = tensor(args, 3, "the residual output")?;
    let w = tensor(args, 4, "the weight")?;
    let (o, i, ri, ro, wb) = (bytes(out)?, bytes(x)?, bytes(r_in)?, bytes(r_out)?, bytes(w)?);
    let fused = sum(&[i, ri, wb, o, ro])?;
    Ok(ServingCost {
        fused,
        unfused: sum(&[fused, ro])?,
        kind: Kind::Norm,
        parts: &["add (residual)", "rms_norm"],
        out_bytes: o,
        in_bytes: vec![i, ri, wb],
        space: x.numel().ok(),
    })
}

/// `rotary_embedding(positions [T], query, key, head_size, cos_sin_cache [P, rot], is_neox)`:
/// query and key rotated in place (read and written), one cache row read per position.
fn rotary(args: &OpArgs) -> Result<ServingCost, String> {
    let pos = tensor(args, 0, "the positions")?;
    let (q, k) = (tensor(args, 1, "the query")?, tensor(args, 2, "the key")?);
    let cache = tensor(args, 4, "the cos/sin cache")?;
    let row = cache.dims().last().copied().ok_or("the cos/sin cache has no dimensions")?;
    let rows = pos.numel().map_err(|e| e.to_string())?;
    let cache_read = rows
        .checked_mul(row)
        .and_then(|n| n.checked_mul(cache.dtype().size_bytes()))
        .ok_or("its bytes do not fit in 64 bits")?;
    let (p, qb, kb) = (bytes(pos)?, bytes(q)?, bytes(k)?);
    let fused = sum(&[p, qb, qb, kb, kb, cache_read])?;
    Ok(ServingCost {
        fused,
        unfused: fused,
        kind: Kind::Elementwise,
        parts: &["rotary"],
        out_bytes: qb,
        in_bytes: vec![p, qb, kb],
        space: q.numel().ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::time::perf::RawArgs;

    fn args(dims: &str, types: &str) -> OpArgs {
        OpArgs::parse(RawArgs { input_dims: Some(dims), input_type: Some(types), concrete_inputs: None }).unwrap()
    }

    #[test]
    fn silu_and_mul_is_two_parts() {
        let a = args("[[4, 8], [4, 16]]", r#"["c10::BFloat16", "c10::BFloat16"]"#);
        let c = serving_cost("sgl_kernel::silu_and_mul", &a).unwrap().unwrap();
        assert_eq!((c.fused, c.unfused, c.parts.len()), (64 + 128, 64 + 128 + 128, 2));
        assert_eq!(c.out_bytes, 64);
    }

    #[test]
    fn add_rmsnorm_reads_its_sum_back_once_more_unfused() {
        let a = args(
            "[[4, 8], [4, 8], [4, 8], [4, 8], [8], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
        );
        let c = serving_cost("aiter::add_rmsnorm", &a).unwrap().unwrap();
        assert_eq!((c.fused, c.unfused), (4 * 64 + 16, 5 * 64 + 16));
        assert_eq!(c.kind, Kind::Norm);
    }

    #[test]
    fn rotary_reads_one_cache_row_per_position_and_bad_args_say_which() {
        let a = args(
            "[[6], [6, 32], [6, 16], [], [100, 8], []]",
            r#"["long int", "float", "float", "Scalar", "float", "Scalar"]"#,
        );
        let c = serving_cost("_C::rotary_embedding", &a).unwrap().unwrap();
        assert_eq!(c.fused, 6 * 8 + 2 * 6 * 32 * 4 + 2 * 6 * 16 * 4 + 6 * 8 * 4);
        let bad = args("[[4, 8], []]", r#"["float", "Scalar"]"#);
        let e = serving_cost("aiter::rmsnorm", &bad).unwrap().err().unwrap();
        assert_eq!(e, "input 1 (the input) is not a recorded tensor");
        assert!(serving_cost("aten::add", &bad).is_none());
    }
}
