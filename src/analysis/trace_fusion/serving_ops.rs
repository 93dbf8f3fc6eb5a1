//! The fused custom ops serving engines call (SGLang's `sgl_kernel`, AMD's `aiter`, vLLM's
//! `_C`) as fusion groups: each is a library fusion whose parts are known (`docs/trace-fusion.md`,
//! "Serving engines' fused ops"). Where the per-op cost formulas model the op
//! (`docs/cost-formulas.md`), its fused bytes are theirs and this adds what fusion needs beyond
//! them: the parts, the unfused bytes, the tensors handed on. The rest (a paged prefill
//! attention, a multicast all-reduce) are modelled here: each input read once, each output
//! written once, at the recorded shapes and types; an output buffer passed in is written, not
//! read.

use super::call_bytes::{score_round_trips, CallBytes};
use super::kind::Kind;
use super::unknown::{of_no_cost, Unknown};
use perf::{op_cost, OpArgs, Tensor};

/// A fusion group of an op the cost formulas model, from its arguments and those formulas'
/// bytes (the fused bytes).
type FromFused = fn(&OpArgs, u64) -> Result<CallBytes, String>;

/// The model of `op`, `None` when `op` is not one of these; `Some(Err)` names what is wrong:
/// the cost formula's own reason, or that the recorded shapes do not fit the op (bad input).
pub(crate) fn serving_cost(op: &str, args: &OpArgs) -> Option<Result<CallBytes, Unknown>> {
    let from_fused: FromFused = match op {
        "sgl_kernel::silu_and_mul" | "_C::silu_and_mul" => silu_and_mul,
        "aiter::rmsnorm" => rmsnorm,
        "aiter::rms_norm" => rms_norm_returning,
        "_C_cache_ops::reshape_and_cache_flash" | "_C_cache_ops::reshape_and_cache" | "sglang::store_cache" => {
            reshape_and_cache
        }
        "aiter::add_rmsnorm" | "aiter::rmsnorm2d_fwd_with_add_ck" => add_rmsnorm,
        "sgl_kernel::rotary_embedding" | "_C::rotary_embedding" => rotary,
        "aiter::mha_batch_prefill" => return Some(paged_prefill_attention(args).map_err(Unknown::bad_input)),
        "symm_mem::multimem_all_reduce_" => {
            return Some(super::collectives::multimem_all_reduce(args).map_err(Unknown::bad_input))
        }
        _ => return None,
    };
    Some(match op_cost(op, args) {
        Ok(cost) => from_fused(args, cost.bytes).map_err(Unknown::bad_input),
        Err(e) => Err(of_no_cost(&e)),
    })
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
fn silu_and_mul(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let (out, x) = (tensor(args, 0, "the output")?, tensor(args, 1, "the input")?);
    let (o, i) = (bytes(out)?, bytes(x)?);
    Ok(CallBytes {
        fused,
        unfused: Some(sum(&[fused, o, o])?),
        unfused_unknown: None,
        kind: Kind::Elementwise,
        parts: &["silu", "mul"],
        out_bytes: Some(o),
        in_bytes: vec![i],
        space: x.numel().ok(),
    })
}

/// `aiter::rmsnorm(out, input, weight, eps)`: one op.
fn rmsnorm(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let (out, x, w) = (tensor(args, 0, "the output")?, tensor(args, 1, "the input")?, tensor(args, 2, "the weight")?);
    Ok(one_norm(fused, bytes(x)?, bytes(w)?, bytes(out)?, x.numel().ok()))
}

/// A lone RMSNorm of `fused` bytes: the input and weight read, the output written, once each
/// (`space`: the input's elements).
fn one_norm(fused: u64, input: u64, weight: u64, output: u64, space: Option<u64>) -> CallBytes {
    CallBytes {
        fused,
        unfused: Some(fused),
        unfused_unknown: None,
        kind: Kind::Norm,
        parts: &["rms_norm"],
        out_bytes: Some(output),
        in_bytes: vec![input, weight],
        space,
    }
}

/// `aiter::add_rmsnorm(out, input, residual_in, residual_out, weight, eps)` (and CK's
/// `rmsnorm2d_fwd_with_add`): `residual_out = input + residual_in`, `out = rms_norm(residual_out)`.
/// The sum is an output either way (the next layer's residual); unfused, the norm reads it back:
/// 1 × the sum more.
fn add_rmsnorm(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let out = tensor(args, 0, "the output")?;
    let x = tensor(args, 1, "the input")?;
    let r_in = tensor(args, 2, "the residual")?;
    let r_out = tensor(args, 3, "the residual output")?;
    let w = tensor(args, 4, "the weight")?;
    let (o, i, ri, ro, wb) = (bytes(out)?, bytes(x)?, bytes(r_in)?, bytes(r_out)?, bytes(w)?);
    Ok(CallBytes {
        fused,
        unfused: Some(sum(&[fused, ro])?),
        unfused_unknown: None,
        kind: Kind::Norm,
        parts: &["add (residual)", "rms_norm"],
        out_bytes: Some(o),
        in_bytes: vec![i, ri, wb],
        space: x.numel().ok(),
    })
}

/// `aiter::rms_norm(input [T, H], weight [H], eps, …)`: returns its output, a new tensor of the
/// input's shape and type (aiter allocates it `empty_like(input)`), so it is written, not read.
fn rms_norm_returning(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let (x, w) = (tensor(args, 0, "the input")?, tensor(args, 1, "the weight")?);
    let i = bytes(x)?;
    Ok(one_norm(fused, i, bytes(w)?, i, x.numel().ok()))
}

/// A KV-cache write, vLLM's `reshape_and_cache[_flash](key [T, H, D], value [T, H, D],
/// key_cache, value_cache, slot_mapping [N], …)` or SGLang's `store_cache`: the N tokens' key
/// and value rows read and written into their cache slots (the bytes: `perf::kv_cache`). No
/// rule fuses it, and it hands no tensor to the next kernel: attention reads the cache.
fn reshape_and_cache(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let (k, v) = (tensor(args, 0, "the key")?, tensor(args, 1, "the value")?);
    let n = tensor(args, 4, "the slot mapping")?.numel().map_err(|e| e.to_string())?;
    let read = |t: &Tensor, what: &str| -> Result<u64, String> {
        let row = perf::kv_cache::row(t, what).map_err(|e| e.to_string())?;
        n.checked_mul(row)
            .and_then(|e| e.checked_mul(t.dtype().size_bytes()))
            .ok_or_else(|| "its bytes do not fit in 64 bits".to_string())
    };
    Ok(CallBytes {
        fused,
        unfused: Some(fused),
        unfused_unknown: None,
        kind: Kind::Other,
        parts: &["kv-cache write"],
        out_bytes: None,
        in_bytes: vec![read(k, "keys")?, read(v, "values")?],
        space: None,
    })
}

/// AMD aiter's `mha_batch_prefill(q [T, Hq, D], k_cache, v_cache, cu_seqlens_q [B+1],
/// kv_indptr [B+1], kv_page_indices [P], max_seqlen_q, max_seqlen_k, …)` (SGLang's prefill over
/// a paged KV cache). Where the recorded bounds fix every sequence's length (`perf::attention::
/// paged_prefill`: `T = B · max_seqlen_q` and `max_seqlen_k = max_seqlen_q`), the fused bytes
/// are that formula's, and unfused the score matrix is written and read twice over: 4 × the
/// scores in the query's type, scores = Hq × B × the (query, key) pairs of one causal sequence,
/// `n² − n(n−1)/2`. Otherwise the fused bytes are bounded from the page indices: the query read
/// and an output of its shape and type written, the three index tensors read, and per page
/// index one page of K and one of V read (a cache `[pages, Hkv, D]` has one token a page,
/// `[pages, S, Hkv, D]` S tokens), and the unfused bytes are unknown. Minimal traffic, as every
/// model: each K/V row read once, though a tiled kernel may read one again per query tile.
fn paged_prefill_attention(args: &OpArgs) -> Result<CallBytes, String> {
    let q = tensor(args, 0, "the query")?;
    let (kc, vc) = (tensor(args, 1, "the key cache")?, tensor(args, 2, "the value cache")?);
    let (cu_q, indptr) = (tensor(args, 3, "cu_seqlens_q")?, tensor(args, 4, "kv_indptr")?);
    let pages = tensor(args, 5, "kv_page_indices")?;
    let n_pages = pages.numel().map_err(|e| e.to_string())?;
    // One page's bytes: the cache's elements over its first (page) dimension.
    let page = |t: &Tensor, role: &str| -> Result<u64, String> {
        if !matches!(t.dims().len(), 3 | 4) {
            return Err(format!("the {role} has {} dimensions, not [pages, (tokens,) heads, dim]", t.dims().len()));
        }
        let first = t.dims()[0];
        if first == 0 {
            return Err(format!("the {role} has no pages"));
        }
        Ok(bytes(t)? / first)
    };
    let overflow = || "its bytes do not fit in 64 bits".to_string();
    let k_read = n_pages.checked_mul(page(kc, "key cache")?).ok_or_else(overflow)?;
    let v_read = n_pages.checked_mul(page(vc, "value cache")?).ok_or_else(overflow)?;
    let qb = bytes(q)?;
    let fixed = perf::attention::fixed_prefill(args);
    let (fused, unfused, unfused_unknown) = match fixed.and_then(|p| Ok((p.cost()?, p))) {
        Ok((cost, p)) => {
            // One causal sequence of n over n computes n² − n(n−1)/2 scores a head.
            let pairs = p.n * p.n - p.n * p.n.saturating_sub(1) / 2;
            let scores = [p.query_heads, p.sequences, pairs].iter().try_fold(1u64, |s, &f| s.checked_mul(f));
            let round_trips = scores.and_then(|s| score_round_trips(s, q.dtype().size_bytes())).ok_or_else(overflow)?;
            (cost.bytes, Some(sum(&[cost.bytes, round_trips])?), None)
        }
        Err(e) => (
            sum(&[qb, qb, k_read, v_read, bytes(cu_q)?, bytes(indptr)?, bytes(pages)?])?,
            None,
            Some(Unknown::not_recorded(format!(
                "unfused, the score matrix would be written and read twice over, but its size is not known: {e}"
            ))),
        ),
    };
    Ok(CallBytes {
        fused,
        unfused,
        unfused_unknown,
        kind: Kind::Attention,
        parts: &["matmul (Q·Kᵀ)", "softmax", "matmul (·V)"],
        out_bytes: Some(qb),
        in_bytes: vec![qb, k_read, v_read],
        space: q.numel().ok(),
    })
}

/// Why the bytes of `op` cannot be known from what it recorded, for the serving and compiled
/// ops that have no model because their traffic is not among their arguments; `None` for others.
pub(crate) fn why_unknown(op: &str, args: &OpArgs) -> Option<Unknown> {
    let dims = |i: usize| args.tensor(i, "a tensor").ok().map(|t| format!("{:?}", t.dims()));
    let recorded = || args.tensors().map(|t| format!("{:?}", t.dims())).collect::<Vec<_>>().join(", ");
    let why = match op {
        "vllm::moe_forward" | "vllm::moe_forward_shared" | "vllm::fused_moe" => Some(format!(
            "{op}'s expert weights are module parameters, not among its recorded inputs ({}): they are most of its bytes, and no recorded shape gives their size or type",
            recorded()
        )),
        "vllm::unified_attention_with_output" | "vllm::unified_attention" => {
            let lower = [0usize, 3].iter().filter_map(|&i| args.tensor(i, "a tensor").ok()?.bytes().ok()).sum::<u64>();
            Some(format!(
                "it reads the paged KV cache, which is not among its recorded inputs (query {}, the new tokens' key {} and value {}, output {}), nor are the block tables and sequence lengths that say how much of the cache each sequence reads; the query read and the output written alone are {lower} B, a lower bound",
                dims(0).unwrap_or_default(),
                dims(1).unwrap_or_default(),
                dims(2).unwrap_or_default(),
                dims(3).unwrap_or_default()
            ))
        }
        "record_param_comms" if args.tensors().next().is_none() => Some(
            "record_param_comms recorded only scalars here: the trace gives no message size for the collective".to_string(),
        ),
        "record_param_comms" => Some(format!(
            "record_param_comms recorded the tensor(s) {} but not which collective ran nor its message sizes (no `In msg nelems`/`Out msg nelems`): the bytes it moves are not determined",
            recorded()
        )),
        "CompiledFunction" | "CompiledFunctionBackward" => Some(format!(
            "{op} is a whole torch.compile graph recorded as one op: its recorded inputs ({}) are the graph's, not this kernel's, and the kernels it ran recorded no shapes of their own",
            recorded()
        )),
        _ => None,
    };
    why.map(Unknown::not_recorded)
}

/// `rotary_embedding(positions [T], query, key, head_size, cos_sin_cache [P, rot], is_neox)`:
/// query and key rotated in place (the bytes: `perf::rotary`).
fn rotary(args: &OpArgs, fused: u64) -> Result<CallBytes, String> {
    let pos = tensor(args, 0, "the positions")?;
    let q = tensor(args, 1, "the query")?;
    let in_bytes = [Some(pos), Some(q), args.opt_tensor(2, "the key").ok().flatten()]
        .into_iter()
        .flatten()
        .map(bytes)
        .collect::<Result<Vec<u64>, String>>()?;
    Ok(CallBytes {
        fused,
        unfused: Some(fused),
        unfused_unknown: None,
        kind: Kind::Elementwise,
        parts: &["rotary"],
        out_bytes: Some(bytes(q)?),
        in_bytes,
        space: q.numel().ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silu_and_mul_is_two_parts() {
        let a = OpArgs::recorded("[[4, 8], [4, 16]]", r#"["c10::BFloat16", "c10::BFloat16"]"#);
        let c = serving_cost("sgl_kernel::silu_and_mul", &a).unwrap().unwrap();
        assert_eq!((c.fused, c.unfused, c.parts.len()), (64 + 128, Some(64 + 128 + 128), 2));
        assert_eq!(c.out_bytes, Some(64));
    }

    #[test]
    fn add_rmsnorm_reads_its_sum_back_once_more_unfused() {
        let a = OpArgs::recorded(
            "[[4, 8], [4, 8], [4, 8], [4, 8], [8], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
        );
        let c = serving_cost("aiter::add_rmsnorm", &a).unwrap().unwrap();
        assert_eq!((c.fused, c.unfused), (4 * 64 + 16, Some(5 * 64 + 16)));
        assert_eq!(c.kind, Kind::Norm);
    }

    #[test]
    fn rotary_reads_one_cache_row_per_position_and_bad_args_say_which() {
        let rotary = |concrete| {
            OpArgs::parse(perf::RawArgs {
                input_dims: Some("[[6], [6, 32], [6, 16], [], [100, 8], []]"),
                input_type: Some(r#"["long int", "float", "float", "Scalar", "float", "Scalar"]"#),
                concrete_inputs: concrete,
                input_strides: None,
            })
            .unwrap()
        };
        let c =
            serving_cost("_C::rotary_embedding", &rotary(Some(r#"["", "", "", "8", "", "True"]"#))).unwrap().unwrap();
        assert_eq!(c.fused, 6 * 8 + 2 * 6 * 32 * 4 + 2 * 6 * 16 * 4 + 6 * 8 * 4);
        assert_eq!(c.in_bytes, [6 * 8, 6 * 32 * 4, 6 * 16 * 4]);
        // The cost formula's own reason, with whose gap it is.
        let e = serving_cost("_C::rotary_embedding", &rotary(None)).unwrap().err().unwrap();
        assert_eq!(e, Unknown::not_recorded("Concrete Inputs missing: head_size (input 3) is needed"));
        let bad = OpArgs::recorded("[[4, 8], [], [8], []]", r#"["float", "Scalar", "float", "Scalar"]"#);
        let e = serving_cost("aiter::rmsnorm", &bad).unwrap().err().unwrap();
        assert_eq!(e.why, "input 1 is a scalar, expected the input");
        assert!(serving_cost("aten::add", &bad).is_none());
    }

    #[test]
    fn a_kv_cache_write_reads_key_value_and_slots_and_writes_a_row_per_token_in_the_caches_type() {
        // 4 tokens of 2 heads × 8: the key and value bf16, the caches fp8 (one byte an element).
        let a = OpArgs::recorded(
            "[[4, 2, 8], [4, 2, 8], [100, 16, 2, 8], [100, 16, 2, 8], [4], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "long int", "", "float", "float"]"#,
        );
        let c = serving_cost("_C_cache_ops::reshape_and_cache_flash", &a).unwrap().unwrap();
        let (kv, slots, cache) = (4 * 16 * 2, 4 * 8, 4 * 16);
        assert_eq!((c.fused, c.unfused), (2 * kv + slots + 2 * cache, Some(2 * kv + slots + 2 * cache)));
        assert_eq!((c.kind, c.out_bytes), (Kind::Other, None));
        // A slot mapping shorter than the key (a padded key): only the mapped tokens move.
        let a = OpArgs::recorded(
            "[[8, 2, 8], [8, 2, 8], [100, 16, 2, 8], [100, 16, 2, 8], [3], [], [], []]",
            r#"["float", "float", "float", "float", "long int", "", "float", "float"]"#,
        );
        let c = serving_cost("_C_cache_ops::reshape_and_cache", &a).unwrap().unwrap();
        assert_eq!(c.fused, 3 * 8 + 4 * (3 * 16 * 4));
    }

    #[test]
    fn aiter_rms_norm_writes_a_new_output_of_its_inputs_size() {
        let a = OpArgs::recorded(
            "[[32, 2880], [2880], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
        );
        let c = serving_cost("aiter::rms_norm", &a).unwrap().unwrap();
        assert_eq!(c.fused, 2 * (32 * 2880 * 2) + 2880 * 2);
        assert_eq!(c.out_bytes, Some(32 * 2880 * 2));
    }

    #[test]
    fn ops_whose_traffic_is_not_among_their_arguments_say_what_is_missing() {
        let moe = OpArgs::recorded("[[32, 3072], [32, 32], [], []]", r#"["c10::BFloat16", "c10::BFloat16", "", ""]"#);
        let Unknown { cause, why } = why_unknown("vllm::moe_forward", &moe).unwrap();
        assert!(why.contains("expert weights") && why.contains("[32, 3072], [32, 32]"), "{why}");
        assert_eq!(cause, super::super::unknown::Cause::NotRecorded);
        let attn = OpArgs::recorded(
            "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"]"#,
        );
        let why = why_unknown("vllm::unified_attention_with_output", &attn).unwrap().why;
        assert!(why.contains(&format!("{} B, a lower bound", 2 * 32 * 64 * 64 * 2)), "{why}");
        assert!(why.contains("block tables and sequence lengths"));
        let comms = OpArgs::recorded("[[], [], []]", r#"["Scalar", "Scalar", ""]"#);
        assert!(why_unknown("record_param_comms", &comms).unwrap().why.contains("no message size"));
        assert!(why_unknown("aten::add", &comms).is_none());
    }

    #[test]
    fn paged_prefill_attention_reads_one_kv_page_per_index_where_the_lengths_are_not_fixed() {
        // 10 query tokens of 4 heads × 8 (bf16); a token-per-page cache of 2 KV heads × 8;
        // 3 sequences (cu_seqlens of 4), 25 page indices.
        let a = OpArgs::recorded(
            "[[10, 4, 8], [1000, 2, 8], [1000, 2, 8], [4], [4], [25], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "Scalar", "Scalar"]"#,
        );
        let c = serving_cost("aiter::mha_batch_prefill", &a).unwrap().unwrap();
        let q = 10 * 4 * 8 * 2;
        let page = 2 * 8 * 2;
        assert_eq!(c.fused, 2 * q + 2 * 25 * page + 4 * 4 + 4 * 4 + 25 * 4);
        assert_eq!((c.unfused, c.kind), (None, Kind::Attention));
        let why = c.unfused_unknown.unwrap().why;
        assert!(why.contains("its size is not known: Concrete Inputs missing: max_seqlen_q"), "{why}");
        // Pages of 16 tokens: each index reads a whole page.
        let a = OpArgs::recorded(
            "[[10, 4, 8], [100, 16, 2, 8], [100, 16, 2, 8], [4], [4], [3], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "Scalar", "Scalar"]"#,
        );
        let c = serving_cost("aiter::mha_batch_prefill", &a).unwrap().unwrap();
        assert_eq!(c.fused, 2 * q + 2 * 3 * 16 * page + 4 * 4 + 4 * 4 + 3 * 4);
    }

    #[test]
    fn a_paged_prefill_whose_lengths_are_fixed_takes_the_formulas_bytes_and_knows_its_scores() {
        // 3 sequences of 4 queries over 4 keys (12 = 3 × 4, both bounds 4), causal; 4 query
        // heads over 2 K/V heads of 8, bf16, one token a page.
        let a = OpArgs::parse(perf::RawArgs {
            input_dims: Some("[[12, 4, 8], [1000, 2, 8], [1000, 2, 8], [4], [4], [20], [], [], [], [], [], [], [], [], []]"),
            input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#),
            concrete_inputs: Some(r#"["", "", "", "", "", "", "4", "4", "0.", "0.35", "0.", "False", "True", "-1", "-1"]"#),
            input_strides: None,
        })
        .unwrap();
        let c = serving_cost("aiter::mha_batch_prefill", &a).unwrap().unwrap();
        assert_eq!(c.fused, perf::op_cost("aiter::mha_batch_prefill", &a).unwrap().bytes);
        // Q and O 12 × 4 × 8, K and V rows 12 × 2 × 8, bf16; 4 + 4 ints; 12 page indices used.
        assert_eq!(c.fused, 2 * 12 * 4 * 8 * 2 + 2 * 12 * 2 * 8 * 2 + 8 * 4 + 12 * 4);
        // Each sequence's 4 queries see 4 + 3 + 2 + 1 = 10 keys: scores 4 heads × 3 × 10, bf16,
        // written and read twice over.
        assert_eq!(c.unfused, Some(c.fused + 4 * 3 * 10 * 2 * 4));
        assert!(c.unfused_unknown.is_none());
    }
}
