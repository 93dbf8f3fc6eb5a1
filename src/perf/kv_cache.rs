//! New keys and values written into a serving engine's paged KV cache: vLLM's
//! `_C_cache_ops::reshape_and_cache_flash` and `_C_cache_ops::reshape_and_cache`, and SGLang's
//! `sglang::store_cache`, all `(key [T, …], value [T, …], key_cache, value_cache, slots [N], …)`:
//! each of the N tokens of `slots` has its key and value rows written to its slot of the caches
//! (vLLM's key may hold more rows than there are slots: a padded batch).
//!
//! FLOPs: none when the caches hold the keys' and values' types; one per element written (the
//! scaling) when they hold another, an 8-bit cache. Bytes: the N slots (`int64`) and the N
//! key and value rows read, and as many elements of the caches' types written; the rest of the
//! caches is not touched. A padded token (slot −1) moves nothing, and the trace does not record
//! which are padded: every slot is counted, an upper bound for a padded graph batch.

use super::args::{OpArgs, Tensor};
use super::cost::{product, sum, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// `(key, value, key_cache, value_cache, slots, …)`.
pub fn store(args: &OpArgs) -> Result<OpCost, NoCost> {
    let key = args.tensor(0, "the keys")?;
    let value = args.tensor(1, "the values")?;
    let key_cache = args.tensor(2, "the key cache")?;
    let value_cache = args.tensor(3, "the value cache")?;
    let slots = args.tensor(4, "the slots")?;
    let n = slots.numel()?;
    let k = product(&[n, row(key, "keys")?], Quantity::Elements, key.index())?;
    let v = product(&[n, row(value, "values")?], Quantity::Elements, value.index())?;
    let bytes = Traffic::new()
        .tensor(slots)?
        .elements(k, key.dtype(), key.index())?
        .elements(v, value.dtype(), value.index())?
        .elements(k, key_cache.dtype(), key_cache.index())?
        .elements(v, value_cache.dtype(), value_cache.index())?;
    let flops = if key_cache.dtype() == key.dtype() && value_cache.dtype() == value.dtype() {
        0
    } else {
        sum(&[k, v], Quantity::Flops, value.index())?
    };
    Ok(OpCost::exact(Family::Copy, Unit::Vector, key.dtype(), flops, bytes.total()))
}

/// The elements of one token's row of `t` (`[T, …]`): all of them over its first dimension.
pub fn row(t: &Tensor, what: &str) -> Result<u64, NoCost> {
    match t.dims().first() {
        Some(&tokens) if tokens > 0 => Ok(t.numel()? / tokens),
        _ => Err(NoCost::Shapes(format!("the {what} (input {}) {} have no tokens", t.index(), t.shape()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_flash_layout() {
        // vLLM's decode of 32 tokens, 8 KV heads of 64, into a bf16 cache of 224,304 blocks.
        let c = store(&OpArgs::of_text(
            "[[32, 8, 64], [32, 8, 64], [224304, 32, 8, 64], [224304, 32, 8, 64], [32], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "long int", "", "float", "float"]"#,
            Some(r#"["", "", "", "", "", "", "", ""]"#),
        ))
        .unwrap();
        let kv = 32 * 8 * 64 * 2;
        assert_eq!((c.flops, c.bytes), (0, 2 * kv + 32 * 8 + 2 * kv));
        assert_eq!(c.family, Family::Copy);
        // A padded batch: 40 rows of keys, 32 slots; only the slots' rows move.
        let c = store(&OpArgs::of_text(
            "[[40, 8, 64], [40, 8, 64], [224304, 32, 8, 64], [224304, 32, 8, 64], [32], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "long int", "", "float", "float"]"#,
            Some(r#"["", "", "", "", "", "", "", ""]"#),
        ))
        .unwrap();
        assert_eq!((c.flops, c.bytes), (0, 2 * kv + 32 * 8 + 2 * kv));
        let e = store(&OpArgs::of_text(
            "[[0, 8, 64], [0, 8, 64], [16, 32, 8, 64], [16, 32, 8, 64], [0], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "long int", "", "float", "float"]"#,
            None,
        ))
        .unwrap_err();
        assert_eq!(e.to_string(), "the keys (input 0) [0, 8, 64] have no tokens");
    }

    #[test]
    fn sglang_and_an_8_bit_cache() {
        let types = |cache: &str| {
            format!(r#"["c10::BFloat16", "c10::BFloat16", "{cache}", "{cache}", "long int", "Scalar", "Scalar"]"#)
        };
        let dims = "[[15360, 1024], [15360, 1024], [835874, 1024], [835874, 1024], [15360], [], []]";
        let concrete = Some(r#"["", "", "", "", "", "2048", "0"]"#);
        let n = 15_360 * 1024;
        let c = store(&OpArgs::of_text(dims, &types("c10::BFloat16"), concrete)).unwrap();
        assert_eq!((c.flops, c.bytes), (0, 2 * 2 * n + 8 * 15_360 + 2 * 2 * n));
        // An fp8 cache: the new values scaled into one byte each.
        let c = store(&OpArgs::of_text(dims, &types("c10::Float8_e4m3fn"), concrete)).unwrap();
        assert_eq!((c.flops, c.bytes), (2 * n, 2 * 2 * n + 8 * 15_360 + 2 * n));
    }
}
