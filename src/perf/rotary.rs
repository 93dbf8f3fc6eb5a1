//! Rotary position embeddings applied in place by serving engines' kernels: vLLM's
//! `_C::rotary_embedding` and SGLang's `sgl_kernel::rotary_embedding`, both
//! `(positions [T], query, key?, head_size, cos_sin_cache [P, rot_dim], is_neox)`, the query
//! `[T, heads · head_size]` or `[T, heads, head_size]` and the key alike with its own heads.
//!
//! FLOPs: each rotated element is multiplied by a cosine and by a sine and the two products
//! added, 3 per element (one per step, as the pointwise ops count), over the first `rot_dim`
//! elements of every head. Bytes: the query and the key read and written in place, the
//! positions read, and the cache row of each distinct position read once: at most
//! `min(T, P)` rows of `rot_dim` values.

use super::args::{OpArgs, Tensor};
use super::cost::{product, sum, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// FLOPs per rotated element: two products and their sum.
const FLOPS_PER_ELEMENT: u64 = 3;

/// `rotary_embedding(positions, query, key?, head_size, cos_sin_cache, is_neox)`.
pub fn rotary_embedding(args: &OpArgs) -> Result<OpCost, NoCost> {
    let positions = args.tensor(0, "the positions")?;
    let query = args.tensor(1, "the query")?;
    let key = args.opt_tensor(2, "the key")?;
    let head_size =
        args.int(3, "head_size")?.ok_or(NoCost::Input { input: 3, expected: "head_size", found: "absent" })?;
    let cache = args.tensor(4, "the cos/sin cache")?;
    let &[rows, rot_dim] = cache.dims() else {
        return Err(NoCost::Shapes(format!(
            "the cos/sin cache (input 4) is {}, expected [positions, rot_dim]",
            cache.shape()
        )));
    };
    let head_size = u64::try_from(head_size)
        .ok()
        .filter(|&h| h > 0 && rot_dim <= h)
        .ok_or_else(|| NoCost::Shapes(format!("head_size {head_size} (input 3) is not at least rot_dim {rot_dim}")))?;
    let rotated_q = rotated(query, head_size, rot_dim)?;
    let rotated_k = key.map(|k| rotated(k, head_size, rot_dim)).transpose()?.unwrap_or(0);
    let rotated = sum(&[rotated_q, rotated_k], Quantity::Elements, query.index())?;
    let flops = product(&[rotated, FLOPS_PER_ELEMENT], Quantity::Flops, query.index())?;
    let cache_read = product(&[positions.numel()?.min(rows), rot_dim], Quantity::Elements, cache.index())?;
    let bytes =
        Traffic::new().tensor(query)?.tensor(query)?.opt_tensor(key)?.opt_tensor(key)?.tensor(positions)?.elements(
            cache_read,
            cache.dtype(),
            cache.index(),
        )?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, query.dtype(), flops, bytes.total()))
}

/// The elements of `t` that are rotated: the first `rot_dim` of each head of `head_size`.
fn rotated(t: &Tensor, head_size: u64, rot_dim: u64) -> Result<u64, NoCost> {
    let n = t.numel()?;
    if n % head_size != 0 {
        return Err(NoCost::Shapes(format!("input {} {} is not whole heads of {head_size}", t.index(), t.shape())));
    }
    product(&[n / head_size, rot_dim], Quantity::Elements, t.index())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    const TYPES: &str = r#"["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"]"#;

    #[test]
    fn sglang_qwen3_prefill() {
        // SGLang's Qwen3-8B prefill on an MI300X: 15,360 tokens, 32 query and 8 key heads of 128.
        let c = rotary_embedding(&OpArgs::of_text(
            "[[15360], [15360, 4096], [15360, 1024], [], [41216, 128], []]",
            TYPES,
            Some(r#"["", "", "", "128", "", "True"]"#),
        ))
        .unwrap();
        let (t, q, k) = (15_360u64, 15_360 * 4096u64, 15_360 * 1024u64);
        assert_eq!(c.flops, 3 * (q + k));
        assert_eq!(c.bytes, 2 * 2 * (q + k) + 8 * t + 2 * t * 128);
        assert_eq!((c.family, c.unit, c.dtype), (Family::Elementwise, Unit::Vector, DType::BF16));
    }

    #[test]
    fn partial_rotation_and_no_key() {
        // gpt-oss in vLLM: heads of 64 rotated whole; a cache shorter than the batch is read
        // once, row by row; without a key only the query moves.
        let c = rotary_embedding(&OpArgs::of_text(
            "[[32], [32, 4096], [], [], [16, 32], []]",
            r#"["long int", "c10::BFloat16", "", "Scalar", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "", "", "64", "", "True"]"#),
        ))
        .unwrap();
        assert_eq!(c.flops, 3 * 32 * 4096 / 2);
        assert_eq!(c.bytes, 2 * 2 * 32 * 4096 + 8 * 32 + 2 * 16 * 32);
    }

    #[test]
    fn shapes_that_do_not_fit_say_why() {
        let run = |dims: &str, head: &str| {
            rotary_embedding(&OpArgs::of_text(dims, TYPES, Some(&format!(r#"["", "", "", "{head}", "", "True"]"#))))
        };
        let e = run("[[32], [32, 4096], [32, 512], [], [128, 64], []]", "96").unwrap_err();
        assert_eq!(e.to_string(), "input 1 [32, 4096] is not whole heads of 96");
        let e = run("[[32], [32, 4096], [32, 512], [], [128, 128], []]", "64").unwrap_err();
        assert_eq!(e.to_string(), "head_size 64 (input 3) is not at least rot_dim 128");
        let e = run("[[32], [32, 4096], [32, 512], [], [128], []]", "64").unwrap_err();
        assert!(e.to_string().starts_with("the cos/sin cache (input 4) is [128]"), "{e}");
    }
}
