//! Fused attention: `aten::scaled_dot_product_attention` and the kernels it dispatches to
//! (`_scaled_dot_product_flash_attention`, `_efficient_attention`, `_cudnn_attention`,
//! `_flash_attention_forward`, `_efficient_attention_forward`), and AMD aiter's paged prefill
//! (`mha_batch_prefill`) where its recorded bounds fix every sequence's length.
//!
//! For `Bq` query heads (batch × heads), `Nq` queries, `Nkv` keys and head sizes `d` (Q·Kᵀ) and
//! `dv` (P·V): FLOPs `2·Bq·pairs·(d + dv)`, where `pairs` is the number of (query, key) scores,
//! `Nq·Nkv` without a mask. A causal mask removes a triangle of side `min(Nq, Nkv)`, counted as
//! area (`min²/2`, so `Nq·Nkv/2` when square, the FlashAttention convention): the masked
//! half is not computed. PyTorch's `is_causal` aligns the triangle at the top-left corner;
//! FlashAttention's own entry point and the efficient kernel's mask type 2 at the bottom-right
//! (the last query sees every key), which differs when `Nq ≠ Nkv`. The softmax's few FLOPs per
//! score are left out (`d` times fewer than the products).
//!
//! Bytes: Q, K, V read once, the output (`Bq·Nq·dv` of Q's type) written once, plus a mask or
//! bias tensor when given. The softmax statistics (`Bq·Nq` floats) are left out.
//!
//! Grouped-query attention (fewer K/V heads than Q heads) is read from the shapes: FLOPs count
//! query heads, bytes the K/V tensors as they are.

use super::args::{OpArgs, Tensor};
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};
use units::group_digits;

/// Where the causal triangle sits when `Nq ≠ Nkv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mask {
    None,
    /// PyTorch's `is_causal`: query i sees keys 0..=i.
    CausalTopLeft,
    /// FlashAttention's `causal`: query i sees keys 0..=i + Nkv − Nq.
    CausalBottomRight,
}

/// How an op lays out Q, K, V.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `[…, N, d]`: every leading dimension is batch or head (the SDPA ops: `[B, H, N, d]`).
    HeadsFirst,
    /// `[B, N, H, d]` (FlashAttention's and xFormers' own entry points).
    SeqFirst,
}

/// One attention call's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    /// Query heads in all (batch × heads).
    heads: u64,
    nq: u64,
    nkv: u64,
    d: u64,
    dv: u64,
}

/// `aten::scaled_dot_product_attention(q, k, v, attn_mask?, dropout_p, is_causal, scale?,
/// enable_gqa)`.
pub fn sdpa(args: &OpArgs) -> Result<OpCost, NoCost> {
    let mask = causal(args, 5)?;
    cost(args, Layout::HeadsFirst, mask, args.opt_tensor(3, "the attention mask")?)
}

/// `aten::_scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask,
/// scale?)` (and its `_for_cpu` twin, same leading arguments).
pub fn sdpa_flash(args: &OpArgs) -> Result<OpCost, NoCost> {
    cost(args, Layout::HeadsFirst, causal(args, 4)?, None)
}

/// `aten::_scaled_dot_product_efficient_attention(q, k, v, attn_bias?, compute_log_sumexp,
/// dropout_p, is_causal, scale?)` and `_scaled_dot_product_cudnn_attention(q, k, v,
/// attn_bias?, compute_log_sumexp, dropout_p, is_causal, return_debug_mask, scale?)`.
pub fn sdpa_efficient_or_cudnn(args: &OpArgs) -> Result<OpCost, NoCost> {
    cost(args, Layout::HeadsFirst, causal(args, 6)?, args.opt_tensor(3, "the attention bias")?)
}

/// `aten::_flash_attention_forward(q, k, v, cum_seq_q?, cum_seq_k?, max_q, max_k, dropout_p,
/// is_causal, return_debug_mask, scale?, window_size_left?, window_size_right?, seqused_k?,
/// alibi_slopes?)`, Q/K/V as `[B, N, H, d]`. Packed variable-length batches (cumulative
/// sequence lengths given) and sliding windows are not modelled: the lengths and the window's
/// effect are not in the recorded shapes.
pub fn flash_forward(args: &OpArgs) -> Result<OpCost, NoCost> {
    refuse_varlen(args, 3, 4)?;
    for (i, what) in [(11, "window_size_left"), (12, "window_size_right")] {
        if args.int(i, what)?.is_some_and(|w| w >= 0) {
            return Err(NoCost::Unsupported(format!("sliding-window attention ({what}, input {i}) is not modelled")));
        }
    }
    let mask = if args.flag(8, "is_causal", false)? { Mask::CausalBottomRight } else { Mask::None };
    cost(args, Layout::SeqFirst, mask, None)
}

/// `aten::_efficient_attention_forward(q, k, v, bias?, cu_seqlens_q?, cu_seqlens_k?,
/// max_seqlen_q?, max_seqlen_k?, dropout_p, custom_mask_type, …)`, Q/K/V as `[B, N, H, d]`;
/// `custom_mask_type` 0 is no mask, 1 causal from the top-left, 2 from the bottom-right.
pub fn efficient_forward(args: &OpArgs) -> Result<OpCost, NoCost> {
    refuse_varlen(args, 4, 5)?;
    let mask = match args.int(9, "custom_mask_type")? {
        None | Some(0) => Mask::None,
        Some(1) => Mask::CausalTopLeft,
        Some(2) => Mask::CausalBottomRight,
        Some(other) => return Err(NoCost::Unsupported(format!("custom_mask_type {other} (input 9) is not modelled"))),
    };
    cost(args, Layout::SeqFirst, mask, args.opt_tensor(3, "the attention bias")?)
}

/// The mask of an SDPA op whose `is_causal` flag is input `at`.
fn causal(args: &OpArgs, at: usize) -> Result<Mask, NoCost> {
    Ok(if args.flag(at, "is_causal", false)? { Mask::CausalTopLeft } else { Mask::None })
}

/// AMD aiter's `mha_batch_prefill(q [T, Hq, d], k_cache, v_cache, cu_seqlens_q [B+1],
/// kv_indptr [B+1], kv_page_indices [P], max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale,
/// logits_soft_cap, zero_tensors, is_causal, window_size_left, window_size_right, …)`: SGLang's
/// prefill of `B` sequences packed into `T` query rows, over a paged cache of `[pages, Hkv, d]`
/// (one token a page) or `[pages, S, Hkv, d]` (S tokens a page).
///
/// The trace records no sequence's length, only `B`, `T` and the two bounds. They fix every
/// length in one case: with `T = B · max_seqlen_q` every sequence has exactly `max_seqlen_q`
/// queries (none has more), and since a prefill's keys include its own queries (its new tokens
/// are written to the cache before attention reads it), `max_seqlen_k = max_seqlen_q` leaves
/// every sequence exactly as many keys. Then the call is `B` causal attentions of
/// `max_seqlen_q` queries over as many keys (the mask at the bottom-right, as FlashAttention
/// aligns it; square, so either corner). Otherwise the lengths are not recorded: no cost.
///
/// Bytes: Q read and the output (Q's rows, V's head size) written; each sequence's K and V rows
/// read once; `cu_seqlens_q` and `kv_indptr` read, and the page indices the sequences use.
pub fn paged_prefill(args: &OpArgs) -> Result<OpCost, NoCost> {
    fixed_prefill(args)?.cost()
}

/// A paged prefill whose recorded bounds fix every length ([`paged_prefill`]): `sequences`
/// of `n` queries over `n` keys each, with `query_heads` heads.
pub struct FixedPrefill<'a> {
    pub sequences: u64,
    pub n: u64,
    pub query_heads: u64,
    /// K/V heads, the head sizes of Q·Kᵀ and of ·V, and the tokens a cache page holds.
    kv_heads: u64,
    d: u64,
    dv: u64,
    page: u64,
    /// The query, the two caches, `cu_seqlens_q`, `kv_indptr` and the page indices.
    tensors: [&'a Tensor; 6],
}

/// The sizes of a paged prefill's call, where its recorded bounds fix every sequence's
/// length; otherwise why not ([`paged_prefill`]).
pub fn fixed_prefill(args: &OpArgs) -> Result<FixedPrefill<'_>, NoCost> {
    let q = args.tensor(0, "the query")?;
    let (kc, vc) = (args.tensor(1, "the key cache")?, args.tensor(2, "the value cache")?);
    let (cu_q, indptr) = (args.tensor(3, "cu_seqlens_q")?, args.tensor(4, "kv_indptr")?);
    let pages = args.tensor(5, "kv_page_indices")?;
    let max = |i: usize, what: &'static str| -> Result<u64, NoCost> {
        let text = args.concrete(i, what)?.filter(|t| !t.trim().is_empty());
        let text = text.ok_or(NoCost::MissingConcrete { input: i, what })?;
        text.trim().parse::<u64>().map_err(|_| NoCost::BadConcrete { input: i, what, text: text.to_string() })
    };
    let (max_q, max_k) = (max(6, "max_seqlen_q")?, max(7, "max_seqlen_k")?);
    if !args.flag(12, "is_causal", false)? {
        return Err(NoCost::Unsupported("a prefill without the causal mask is not modelled".to_string()));
    }
    for (i, what) in [(13, "window_size_left"), (14, "window_size_right")] {
        if args.int(i, what)?.is_some_and(|w| w >= 0) {
            return Err(NoCost::Unsupported(format!("sliding-window attention ({what}, input {i}) is not modelled")));
        }
    }
    let shapes = || format!("input 0 {}, input 1 {}, input 2 {}", q.shape(), kc.shape(), vc.shape());
    let &[t, hq, d] = q.dims() else {
        return Err(NoCost::Shapes(format!("needs the query as [tokens, heads, head size]: {}", shapes())));
    };
    // (tokens a page, heads, head size) of a cache.
    let split = |c: &Tensor| match *c.dims() {
        [_, h, e] => Ok((1, h, e)),
        [_, s, h, e] => Ok((s, h, e)),
        _ => Err(NoCost::Shapes(format!("needs caches of [pages, (tokens,) heads, head size]: {}", shapes()))),
    };
    let ((page, hkv, dk), (page_v, hv, dv)) = (split(kc)?, split(vc)?);
    if page != page_v || hv != hkv || dk != d || page == 0 || hkv == 0 || hq % hkv != 0 {
        return Err(NoCost::Shapes(format!("query and caches do not fit together: {}", shapes())));
    }
    let b = cu_q.numel()?.saturating_sub(1);
    if b == 0 {
        return Err(NoCost::Shapes(format!("cu_seqlens_q {} holds no sequence", cu_q.shape())));
    }
    if Some(t) != b.checked_mul(max_q) || max_k != max_q {
        return Err(NoCost::NotRecorded(format!(
            "the {} sequences' lengths are not recorded: {} queries of at most {} a sequence, and keys of at most {}, do not fix them",
            group_digits(b),
            group_digits(t),
            group_digits(max_q),
            group_digits(max_k)
        )));
    }
    Ok(FixedPrefill {
        sequences: b,
        n: max_q,
        query_heads: hq,
        kv_heads: hkv,
        d,
        dv,
        page,
        tensors: [q, kc, vc, cu_q, indptr, pages],
    })
}

impl FixedPrefill<'_> {
    /// The call's cost ([`paged_prefill`]).
    pub fn cost(&self) -> Result<OpCost, NoCost> {
        let [q, kc, vc, cu_q, indptr, pages] = self.tensors;
        let (b, n, hq, hkv) = (self.sequences, self.n, self.query_heads, self.kv_heads);
        let pairs2 = doubled_pairs(Mask::CausalBottomRight, n, n, 0)?;
        let dsum = self.d.checked_add(self.dv).ok_or(NoCost::Overflow { what: Quantity::Flops, input: 0 })?;
        let flops = product(&[b, hq, pairs2, dsum], Quantity::Flops, 0)?;
        let rows = product(&[b, n], Quantity::Elements, 1)?;
        let pages_used = product(&[b, n.div_ceil(self.page)], Quantity::Elements, 5)?;
        let bytes = Traffic::new()
            .tensor(q)?
            .elements(product(&[rows, hq, self.dv], Quantity::Elements, 0)?, q.dtype(), 0)?
            .elements(product(&[rows, hkv, self.d], Quantity::Elements, 1)?, kc.dtype(), 1)?
            .elements(product(&[rows, hkv, self.dv], Quantity::Elements, 2)?, vc.dtype(), 2)?
            .tensor(cu_q)?
            .tensor(indptr)?
            .elements(pages_used, pages.dtype(), 5)?;
        Ok(OpCost::exact(Family::Attention, Unit::Matrix, q.dtype(), flops, bytes.total()))
    }
}

fn refuse_varlen(args: &OpArgs, q: usize, k: usize) -> Result<(), NoCost> {
    if args.opt_tensor(q, "cumulative query lengths")?.is_some()
        || args.opt_tensor(k, "cumulative key lengths")?.is_some()
    {
        return Err(NoCost::Unsupported(
            "variable-length batch: the sequence lengths are not recorded, only their sum".to_string(),
        ));
    }
    Ok(())
}

fn cost(args: &OpArgs, layout: Layout, mask: Mask, bias: Option<&Tensor>) -> Result<OpCost, NoCost> {
    let q = args.tensor(0, "the query")?;
    let k = args.tensor(1, "the key")?;
    let v = args.tensor(2, "the value")?;
    let s = sizes(layout, q, k, v)?;
    let at = q.index();
    let pairs2 = doubled_pairs(mask, s.nq, s.nkv, at)?;
    let dsum = s.d.checked_add(s.dv).ok_or(NoCost::Overflow { what: Quantity::Flops, input: at })?;
    let flops = product(&[s.heads, pairs2, dsum], Quantity::Flops, at)?;
    let out = product(&[s.heads, s.nq, s.dv], Quantity::Elements, at)?;
    let bytes = Traffic::new().tensor(q)?.tensor(k)?.tensor(v)?.opt_tensor(bias)?.elements(out, q.dtype(), at)?;
    Ok(OpCost::exact(Family::Attention, Unit::Matrix, q.dtype(), flops, bytes.total()))
}

/// Twice the number of computed (query, key) scores (twice, so that the half triangles stay
/// whole numbers).
fn doubled_pairs(mask: Mask, nq: u64, nkv: u64, at: usize) -> Result<u64, NoCost> {
    let overflow = NoCost::Overflow { what: Quantity::Flops, input: at };
    let full = product(&[2, nq, nkv], Quantity::Flops, at)?;
    let side = nq.min(nkv);
    let triangle = product(&[side, side], Quantity::Flops, at)?;
    Ok(match mask {
        Mask::None => full,
        // Top-left: with Nq ≤ Nkv the visible part is the triangle itself (Nq²/2); with
        // Nq > Nkv, all but the masked triangle Nkv²/2.
        Mask::CausalTopLeft if nq <= nkv => triangle,
        Mask::CausalTopLeft => full.checked_sub(triangle).ok_or(overflow)?,
        // Bottom-right: the masked triangle has side Nq when Nq ≤ Nkv; with Nq > Nkv only a
        // triangle of side Nkv is visible.
        Mask::CausalBottomRight if nq <= nkv => full.checked_sub(triangle).ok_or(overflow)?,
        Mask::CausalBottomRight => triangle,
    })
}

fn sizes(layout: Layout, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Sizes, NoCost> {
    let shapes = || format!("input 0 {}, input 1 {}, input 2 {}", q.shape(), k.shape(), v.shape());
    let bad = |why: &str| NoCost::Shapes(format!("{why}: {}", shapes()));
    // (heads in all, sequence length, head size) of one tensor.
    let split = |t: &Tensor| -> Result<(u64, u64, u64), NoCost> {
        match (layout, t.dims()) {
            (Layout::HeadsFirst, [lead @ .., n, d]) => Ok((product(lead, Quantity::Elements, t.index())?, *n, *d)),
            (Layout::SeqFirst, &[b, n, h, d]) => Ok((product(&[b, h], Quantity::Elements, t.index())?, n, d)),
            (Layout::SeqFirst, &[_, _, _]) => Err(NoCost::Unsupported(
                "variable-length batch ([tokens, heads, d]): the sequence lengths are not recorded".to_string(),
            )),
            (Layout::HeadsFirst, _) => Err(bad("needs query, key and value of 2 or more dimensions")),
            (Layout::SeqFirst, _) => Err(bad("needs 4-D query, key and value [batch, sequence, heads, head size]")),
        }
    };
    let (hq, nq, d) = split(q)?;
    let (hk, nkv, dk) = split(k)?;
    let (hv, nv, dv) = split(v)?;
    if dk != d || nv != nkv || hv != hk {
        return Err(bad("query, key and value do not fit together"));
    }
    // Grouped-query attention: each K/V head serves a whole group of query heads.
    if hk == 0 || hq % hk != 0 {
        if hq == 0 && hk == 0 {
            return Ok(Sizes { heads: 0, nq, nkv, d, dv });
        }
        return Err(bad("query heads are not a multiple of key/value heads"));
    }
    Ok(Sizes { heads: hq, nq, nkv, d, dv })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn args(dims: &str, types: &str, concrete: &str) -> OpArgs {
        OpArgs::of_text(dims, types, Some(concrete))
    }

    const QWEN: &str = "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], []]";
    const QWEN_TYPES: &str =
        r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"]"#;

    #[test]
    fn flash_causal_worked_example() {
        // 4·B·H·N²·d / 2 with B = H = 16, N = 559, d = 64; bytes (Q + K + V + O)·2.
        let c = sdpa_flash(&args(QWEN, QWEN_TYPES, r#"["", "", "", "0.", "True", "False", "0.125"]"#)).unwrap();
        assert_eq!(c.flops, 10_239_377_408);
        assert_eq!(c.bytes, 4 * 16 * 16 * 559 * 64 * 2);
        assert_eq!(c.bytes as f64 / 1024.0 / 1024.0, 69.875);
        assert_eq!((c.family, c.unit, c.dtype), (Family::Attention, Unit::Matrix, DType::BF16));
        let full = sdpa_flash(&args(QWEN, QWEN_TYPES, r#"["", "", "", "0.", "False", "False", "0.125"]"#)).unwrap();
        assert_eq!(full.flops, 2 * c.flops);
    }

    #[test]
    fn flash_forward_reads_the_seq_first_layout() {
        let dims =
            "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], [], [], [], [], [], [], [], [], [], [], [], []]";
        let types = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "", ""]"#;
        let c = flash_forward(&args(
            dims,
            types,
            r#"["", "", "", "", "", "559", "559", "0.", "True", "False", "0.125", "", "", "", ""]"#,
        ))
        .unwrap();
        assert_eq!((c.flops, c.bytes), (10_239_377_408, 4 * 16 * 16 * 559 * 64 * 2));
    }

    #[test]
    fn sdpa_reads_is_causal_at_its_position() {
        let dims = "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], [], []]";
        let types = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Scalar", "Scalar", "", "Scalar"]"#;
        let c = sdpa(&args(dims, types, r#"["", "", "", "", "0.", "False", "", "False"]"#)).unwrap();
        assert_eq!(c.flops, 4 * 8 * 141 * 141 * 64);
        let c = sdpa(&args(dims, types, r#"["", "", "", "", "0.", "True", "", "False"]"#)).unwrap();
        assert_eq!(c.flops, 2 * 8 * 141 * 141 * 64);
    }

    #[test]
    fn grouped_query_attention() {
        // 32 query heads share 8 K/V heads; d = dv = 128, N = 1024, not causal.
        let dims = "[[2, 32, 1024, 128], [2, 8, 1024, 128], [2, 8, 1024, 128], [], [], [], [], []]";
        let types = r#"["c10::Half", "c10::Half", "c10::Half", "", "Scalar", "Scalar", "", "Scalar"]"#;
        let c = sdpa(&args(dims, types, r#"["", "", "", "", "0.", "False", "", "True"]"#)).unwrap();
        assert_eq!(c.flops, 2 * 2 * 32 * 1024 * 1024 * (128 + 128));
        assert_eq!(c.bytes, (2 * 32 * 1024 * 128 * 2 + 2 * 2 * 8 * 1024 * 128) * 2);
        let bad = "[[2, 6, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8], [], [], [], [], []]";
        assert!(sdpa(&args(bad, types, r#"["", "", "", "", "0.", "False", "", "True"]"#)).is_err());
    }

    #[test]
    fn causal_alignment_when_lengths_differ() {
        // Nq = 4, Nkv = 10: top-left sees 1+2+3+4 ≈ 4²/2; bottom-right sees 7+8+9+10 ≈ 40 − 4²/2.
        assert_eq!(doubled_pairs(Mask::CausalTopLeft, 4, 10, 0), Ok(16));
        assert_eq!(doubled_pairs(Mask::CausalBottomRight, 4, 10, 0), Ok(80 - 16));
        assert_eq!(doubled_pairs(Mask::CausalTopLeft, 10, 4, 0), Ok(80 - 16));
        assert_eq!(doubled_pairs(Mask::CausalBottomRight, 10, 4, 0), Ok(16));
        assert_eq!(doubled_pairs(Mask::None, 10, 4, 0), Ok(80));
        // Decode with the flash entry point: one query sees all keys (minus half a score).
        assert_eq!(doubled_pairs(Mask::CausalBottomRight, 1, 4096, 0), Ok(2 * 4096 - 1));
    }

    #[test]
    fn efficient_forward_and_mask_types() {
        let dims = "[[1, 128, 4, 64], [1, 128, 4, 64], [1, 128, 4, 32], [], [], [], [], [], [], []]";
        let types = r#"["float", "float", "float", "", "", "", "Scalar", "Scalar", "Scalar", "Scalar"]"#;
        let c = efficient_forward(&args(dims, types, r#"["", "", "", "", "", "", "128", "128", "0.", "1"]"#)).unwrap();
        assert_eq!(c.flops, 4 * 128 * 128 * (64 + 32));
        // Q and K 128·4·64 each, V and the output 128·4·32 each, fp32.
        assert_eq!(c.bytes, (32768 + 32768 + 16384 + 16384) * 4);
    }

    /// SGLang's Qwen3-8B prefill on MI300X as recorded: 15 sequences packed into 15,360 queries,
    /// 32 query heads over 8 K/V heads of 128, a cache of one token a page.
    const PREFILL: &str = "[[15360, 32, 128], [835874, 8, 128], [835874, 8, 128], [16], [16], [15616], [], [], [], [], [], [], [], [], [], [], [], []]";
    const PREFILL_TYPES: &str = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#;

    fn prefill(max_q: &str, max_k: &str, causal: &str, left: &str) -> Result<OpCost, NoCost> {
        let concrete = format!(
            r#"["", "", "", "", "", "", "{max_q}", "{max_k}", "0.", "0.088", "0.", "False", "{causal}", "{left}", "-1", "0", "False", "False"]"#
        );
        paged_prefill(&args(PREFILL, PREFILL_TYPES, &concrete))
    }

    #[test]
    fn a_paged_prefill_whose_bounds_fix_every_length_is_b_causal_attentions() {
        // 15,360 = 15 × 1,024 queries: every sequence has 1,024 queries and, its keys including
        // them and bounded by 1,024, as many keys. 4·Hq·d·N²/2 per sequence.
        let c = prefill("1024", "1024", "True", "-1").unwrap();
        assert_eq!(c.flops, 15 * 4 * 32 * 128 * 1024 * 1024 / 2);
        // Q read and O written (15,360 × 32 × 128), K and V rows read (15,360 × 8 × 128), bf16;
        // cu_seqlens_q and kv_indptr (16 ints each) and the 15,360 page indices used, not all
        // 15,616 recorded.
        let qo = 2 * 15_360 * 32 * 128 * 2;
        let kv = 2 * 15_360 * 8 * 128 * 2;
        assert_eq!(c.bytes, qo + kv + 2 * 16 * 4 + 15_360 * 4);
        assert_eq!((c.family, c.unit, c.dtype), (Family::Attention, Unit::Matrix, DType::BF16));
    }

    #[test]
    fn a_paged_prefill_says_why_when_its_lengths_are_not_fixed() {
        // Queries fewer than 15 × 2,048: some sequences are shorter, by how much is not recorded.
        let e = prefill("2048", "2048", "True", "-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the 15 sequences' lengths are not recorded: 15,360 queries of at most 2,048 a sequence, and keys of at most 2,048, do not fix them"
        );
        // A cached prefix: keys may exceed queries.
        assert!(matches!(prefill("1024", "4096", "True", "-1"), Err(NoCost::NotRecorded(_))));
        assert!(matches!(prefill("1024", "1024", "False", "-1"), Err(NoCost::Unsupported(_))));
        assert!(matches!(prefill("1024", "1024", "True", "128"), Err(NoCost::Unsupported(_))));
        assert!(matches!(prefill("", "1024", "True", "-1"), Err(NoCost::MissingConcrete { input: 6, .. })));
    }

    #[test]
    fn unsupported_cases_say_why() {
        let dims =
            "[[4096, 16, 64], [4096, 16, 64], [4096, 16, 64], [17], [17], [], [], [], [], [], [], [], [], [], []]";
        let types = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "", ""]"#;
        let e = flash_forward(&args(
            dims,
            types,
            r#"["", "", "", "", "", "512", "512", "0.", "True", "False", "0.125", "", "", "", ""]"#,
        ))
        .unwrap_err();
        assert_eq!(e.to_string(), "variable-length batch: the sequence lengths are not recorded, only their sum");
        let no_concrete = OpArgs::of_text(QWEN, QWEN_TYPES, None);
        assert_eq!(
            sdpa_flash(&no_concrete).unwrap_err().to_string(),
            "Concrete Inputs missing: is_causal (input 4) is needed"
        );
    }
}
