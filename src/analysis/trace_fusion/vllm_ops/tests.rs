use super::*;
use crate::trace_fusion::unknown::Cause;
use perf::RawArgs;

#[test]
fn step_annotations_parse_and_odd_ones_do_not() {
    let s = parse_step(
        "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)",
    )
    .unwrap();
    assert_eq!((s.c_sq, s.c_sk, s.c_sqsq, s.c_sqsk), (8155, 8430, 7475785, 7671310));
    assert_eq!((s.g_sq, s.g_sk, s.g_sqsq, s.g_sqsk), (37, 34489, 37, 34489));
    for bad in [
        "execute_context_2(14721)_generation_0(0)",
        "execute_1_context_0(sq5sk4sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)",
        "execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)x",
        "execute_1_context_0(sq99999999999999999999sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)",
        "",
    ] {
        assert_eq!(parse_step(bad), None, "{bad}");
    }
}

const ATTN_DIMS: &str = "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]";
const ATTN_TYPES: &str =
    r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"]"#;

#[test]
fn decode_attention_reads_each_cached_key_and_value_once() {
    let a = OpArgs::recorded(ATTN_DIMS, ATTN_TYPES);
    let step = StepLengths { g_sq: 32, g_sk: 55086, g_sqsq: 32, g_sqsk: 55086, ..Default::default() };
    let c = unified_attention(&a, Some(step), Ok(DType::BF16)).unwrap();
    // Q and O: 32 × 64 × 64; new K, V: 32 × 8 × 64; cached K, V: 55054 × 8 × 64; bf16.
    let fused = 2 * (2 * 32 * 64 * 64 + 2 * 32 * 8 * 64 + 2 * 55054 * 8 * 64);
    assert_eq!(c.fused, fused);
    assert_eq!(c.unfused, Some(fused + 4 * 64 * 55086 * 2));
    // An fp8 cache reads a byte per cached element.
    let c8 = unified_attention(&a, Some(step), Ok(DType::F8E4M3FN)).unwrap();
    assert_eq!(fused - c8.fused, 2 * 55054 * 8 * 64);
}

#[test]
fn attention_without_a_step_or_with_a_step_of_another_call_says_why() {
    let a = OpArgs::recorded(ATTN_DIMS, ATTN_TYPES);
    let e = unified_attention(&a, None, Ok(DType::BF16)).err().unwrap();
    assert!(e.why.contains("no vLLM step annotation") && e.why.contains("[32, 64, 64]"), "{e:?}");
    assert_eq!(e.cause, Cause::NotRecorded);
    let odd = StepLengths { g_sq: 5, g_sk: 4, ..Default::default() };
    let e = unified_attention(&a, Some(odd), Ok(DType::BF16)).err().unwrap();
    assert!(e.why.contains("more queries than keys") && e.cause == Cause::BadInput, "{e:?}");
    // unified_attention returns its output: of the query's type.
    let returning = OpArgs::recorded(
        "[[32, 64, 64], [32, 8, 64], [32, 8, 64], []]",
        r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", ""]"#,
    );
    let step = StepLengths { g_sq: 32, g_sk: 64, g_sqsq: 32, g_sqsk: 64, ..Default::default() };
    assert_eq!(
        unified_attention(&returning, Some(step), Ok(DType::BF16)).unwrap().fused,
        unified_attention(&a, Some(step), Ok(DType::BF16)).unwrap().fused
    );
    let big = StepLengths { c_sq: 40, c_sk: 40, c_sqsq: 1600, c_sqsk: 1600, ..Default::default() };
    let e = unified_attention(&a, Some(big), Ok(DType::BF16)).err().unwrap();
    assert!(e.why.contains("40 query tokens but the query has 32 rows"), "{e:?}");
    let no_cache = Unknown::not_recorded("no cache");
    let e = unified_attention(&a, Some(StepLengths::default()), Err(no_cache.clone())).err().unwrap();
    assert_eq!(e, no_cache);
    let odd = OpArgs::recorded("[[32, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]", ATTN_TYPES);
    assert!(unified_attention(&odd, None, Ok(DType::BF16))
        .err()
        .unwrap()
        .why
        .contains("not [tokens, heads, head dim]"));
}

#[test]
fn context_pairs_leave_out_the_causal_triangle() {
    let a =
        OpArgs::recorded("[[10, 2, 4], [10, 1, 4], [10, 1, 4], [10, 2, 4]]", r#"["float", "float", "float", "float"]"#);
    // One prefill request: 10 new tokens after 5 cached, so sk = 15 and 10·15 − 45 = 105 pairs.
    let step = StepLengths { c_sq: 10, c_sk: 15, c_sqsq: 100, c_sqsk: 150, ..Default::default() };
    let c = unified_attention(&a, Some(step), Ok(DType::F32)).unwrap();
    assert_eq!(c.fused, 4 * (2 * 10 * 2 * 4 + 2 * 10 * 4 + 2 * 5 * 4));
    assert_eq!(c.unfused.unwrap() - c.fused, 4 * 2 * 105 * 4);
}

fn gpt_oss(tokens: u64) -> MoeShapes {
    MoeShapes {
        tokens,
        hidden: 3072,
        experts: 32,
        topk: 4,
        w13_bytes: 32 * 1536 * 5888,
        w2_bytes: 32 * 1472 * 3072,
        inter: 2944,
        gated: true,
        act: DType::BF16,
    }
}

#[test]
fn moe_gemms_read_the_active_experts_weights() {
    let s = gpt_oss(8192);
    // 8192 tokens: every expert is hit (the miss chance is 0.875^8192).
    assert_eq!(s.active_fraction(), 1.0);
    let up = moe_kernel(&s, MoeKernel::Gemm(0), "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", true).unwrap();
    let mid = 8192 * 4 * 2944 * 2;
    assert_eq!(up.fused, 8192 * 3072 * 2 + 32 * 1536 * 5888 + mid);
    assert_eq!(up.unfused, Some(up.fused + 4 * mid));
    let down = moe_kernel(&s, MoeKernel::Gemm(1), "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", true).unwrap();
    assert_eq!(down.fused, mid + 32 * 1472 * 3072 + 8192 * 4 * 3072 * 2);
    let fin = moe_kernel(&s, MoeKernel::Finalize, "_finalize_matmul_scatter_bf16", true).unwrap();
    assert_eq!(fin.fused, 8192 * 4 * 3072 * 2 + 8192 * 4 * 2 + 8192 * 3072 * 2);
    // 32 tokens: 32 · (1 − (28/32)^32) experts expected.
    let s = gpt_oss(32);
    let f = 1.0 - 0.875f64.powi(32);
    let up = moe_kernel(&s, MoeKernel::Gemm(0), "x_swiglu_matmul_ogs", true).unwrap();
    assert_eq!(up.fused, 32 * 3072 * 2 + ((32 * 1536 * 5888) as f64 * f).round() as u64 + 32 * 4 * 2944 * 2);
    let e = moe_kernel(&s, MoeKernel::Gemm(2), "matmul_ogs", true).err().unwrap();
    assert!(e.why.contains("GEMM 3") && e.cause == Cause::NoCost, "{e:?}");
}

type Op<'a> = (&'a str, &'a str, &'a str, &'a str);

/// A trace of one call of `root` (name, dims, types, concrete) holding `children`, each
/// 2 µs, one after another.
fn call(root: Op, children: &[Op]) -> Trace {
    let op = |(name, dims, types, concrete): Op, ts: f64, dur: f64, id: usize| {
        format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{"External id":{id},"Input Dims":{dims},"Input type":{types},"Concrete Inputs":{concrete}}}}}"#
        )
    };
    let mut ev = vec![op(root, 100.0, 1000.0, 1)];
    for (i, &child) in children.iter().enumerate() {
        ev.push(op(child, 110.0 + 3.0 * i as f64, 2.0, i + 2));
    }
    formats::read_trace(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
}

const MOE: Op = (
    "vllm::moe_forward",
    "[[32, 3072], [32, 32], [], []]",
    r#"["c10::BFloat16", "c10::BFloat16", "", ""]"#,
    r#"["", "", "", ""]"#,
);

fn moe_call(children: &[Op]) -> Trace {
    call(MOE, children)
}

const TOPK: (&str, &str, &str, &str) = (
    "TopK",
    "[[32, 32], [], [], [], [], [], []]",
    r#"["c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar", "", ""]"#,
    r#"["", "4", "True", "1", "True", "", ""]"#,
);
const W13: (&str, &str, &str, &str) =
    ("aten::view", "[[32, 1536, 5888], []]", r#"["unsigned char", "ScalarList"]"#, r#"["", "[32, 1536, 5888]"]"#);
const W2: (&str, &str, &str, &str) =
    ("aten::view", "[[32, 1472, 3072], []]", r#"["unsigned char", "ScalarList"]"#, r#"["", "[32, 1472, 3072]"]"#);
const FP4: &str = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu";

fn shapes(children: &[(&str, &str, &str, &str)], kernel: &str) -> Result<MoeShapes, Unknown> {
    let trace = moe_call(children);
    let o = trace.cpu_ops.iter().position(|op| trace.name(op.name) == "vllm::moe_forward").unwrap();
    moe_shapes(&trace, &ThreadOps::new(&trace), o, kernel)
}

#[test]
fn moe_shapes_come_from_the_subtree() {
    let s = shapes(&[TOPK, W13, W2], FP4).unwrap();
    assert_eq!(s, gpt_oss(32));
    // bf16 weights are not packed: H = 3072 and N = 2944 read as they are.
    let w13 = ("aten::view", "[[32, 3072, 5888], []]", r#"["c10::BFloat16", "ScalarList"]"#, r#"["", ""]"#);
    let w2 = ("aten::view", "[[32, 2944, 3072], []]", r#"["c10::BFloat16", "ScalarList"]"#, r#"["", ""]"#);
    let s = shapes(&[TOPK, w13, w2], "_matmul_ogs_NNT_bf16xbf16xbf16").unwrap();
    assert_eq!((s.inter, s.gated, s.w13_bytes), (2944, true, 32 * 3072 * 5888 * 2));
}

#[test]
fn what_the_subtree_does_not_record_is_said() {
    let e = shapes(&[W13, W2], FP4).err().unwrap();
    assert!(e.why.contains("no TopK call") && e.cause == Cause::NotRecorded, "{e}");
    let e = shapes(&[TOPK, W13], FP4).err().unwrap();
    assert!(e.why.contains("hands 1 tensors of 32 experts") && e.why.contains("[32, 1536, 5888]"), "{e}");
    let e = shapes(&[TOPK, W13, W2], "_matmul_ogs_NNT_bf16xbf16xbf16").err().unwrap();
    assert!(e.why.contains("stored as bytes") && e.why.contains("does not say their format"), "{e}");
    let odd = ("aten::view", "[[32, 1000, 3072], []]", r#"["unsigned char", "ScalarList"]"#, r#"["", ""]"#);
    let e = shapes(&[TOPK, W13, odd], FP4).err().unwrap();
    assert!(e.why.contains("do not fit hidden size 3072") && e.cause == Cause::BadInput, "{e}");
    let k0 = ("TopK", TOPK.1, TOPK.2, r#"["", "0", "True", "1", "True", "", ""]"#);
    assert!(shapes(&[k0, W13, W2], FP4).err().unwrap().why.contains("k = 0"));
    let k99 = ("TopK", TOPK.1, TOPK.2, r#"["", "99", "True", "1", "True", "", ""]"#);
    assert!(shapes(&[k99, W13, W2], FP4).err().unwrap().why.contains("not between 1 and the 32 experts"));
    // A dim past 64 bits is refused by the reader, and the call says its arguments do not
    // parse rather than panicking.
    let huge = ("aten::view", "[[32, 99999999999999999999, 2], []]", W2.2, W2.3);
    assert!(shapes(&[TOPK, W13, huge], FP4).is_err());
}

#[test]
fn topk_writes_what_its_subtree_allocates() {
    let trace = call(TOPK, &[]);
    let e = routing(&trace, &ThreadOps::new(&trace), 0, Routing::TopK).err().unwrap();
    assert!(e.why.contains("no allocation") && e.cause == Cause::NotRecorded, "{e:?}");
    let empty_values = ("aten::empty", "[[], []]", r#"["ScalarList", "Scalar"]"#, r#"["[32, 4]", "15"]"#);
    let empty_indices = ("aten::empty", "[[], []]", r#"["ScalarList", "Scalar"]"#, r#"["[32, 4]", "2"]"#);
    let empty_bits = ("aten::empty", "[[], []]", r#"["ScalarList", "Scalar"]"#, r#"["[1, 32]", "28"]"#);
    let trace = call(TOPK, &[empty_values, empty_indices, empty_bits]);
    // [32, 32] bf16 logits read; bf16 values, int16 indices, a uint32 bitmatrix written.
    let c = routing(&trace, &ThreadOps::new(&trace), 0, Routing::TopK).unwrap();
    assert_eq!(c.fused, 32 * 32 * 2 + 32 * 4 * 2 + 32 * 4 * 2 + 32 * 4);
    assert_eq!((c.kind, c.parts), (Kind::Reduction, &["topk"][..]));
    // SortTokens as the decode capture records it: both [32, 4] inputs read (bf16 values,
    // int16 indices), its allocations written (int32 [32], [256] and [6, 512]; int16 [128]).
    let sort =
        ("SortTokens", "[[32, 4], [32, 4], []]", r#"["c10::BFloat16", "short int", "Scalar"]"#, r#"["", "", "32"]"#);
    let concrete: Vec<String> = [("[32]", 3), ("[256]", 3), ("[128]", 2), ("[6, 512]", 3)]
        .iter()
        .map(|(size, code)| format!(r#"["{size}", "{code}"]"#))
        .collect();
    let allocs: Vec<Op> =
        concrete.iter().map(|c| ("aten::empty", "[[], []]", r#"["ScalarList", "Scalar"]"#, c.as_str())).collect();
    let trace = call(sort, &allocs);
    let c = routing(&trace, &ThreadOps::new(&trace), 0, Routing::SortTokens).unwrap();
    assert_eq!(c.fused, 32 * 4 * 2 + 32 * 4 * 2 + (32 + 256 + 6 * 512) * 4 + 128 * 2);
    assert_eq!(c.kind, Kind::Other);
    let empty =
        |concrete: &str| allocated_bytes("aten::empty", &args_c("[[], []]", r#"["ScalarList", "Scalar"]"#, concrete));
    assert_eq!(empty(r#"["[-1, 4]", "15"]"#), None);
    assert_eq!(empty(r#"["[2, 4]", "99"]"#), None);
    assert_eq!(empty(r#"["[4611686018427387904, 8]", "6"]"#), None);
    let strided = args_c("[[], [], []]", r#"["ScalarList", "ScalarList", "Scalar"]"#, r#"["[2, 4]", "[4, 1]", "6"]"#);
    assert_eq!(allocated_bytes("aten::empty_strided", &strided), Some(32));
}

fn args_c(dims: &str, types: &str, concrete: &str) -> OpArgs {
    OpArgs::parse(RawArgs {
        input_dims: Some(dims),
        input_type: Some(types),
        concrete_inputs: Some(concrete),
        input_strides: None,
    })
    .unwrap()
}

#[test]
fn the_enclosing_op_is_found_by_range_on_the_thread() {
    let trace = moe_call(&[TOPK, W13]);
    let threads = ThreadOps::new(&trace);
    let view = trace.cpu_ops.iter().position(|op| trace.name(op.name) == "aten::view").unwrap();
    let moe = threads.enclosing(&trace, view, |n| n.starts_with("vllm::")).unwrap();
    assert_eq!(trace.name(trace.cpu_ops[moe].name), "vllm::moe_forward");
    assert_eq!(threads.enclosing(&trace, view, |n| n == "TopK"), None, "a sibling does not hold it");
    assert_eq!(threads.enclosing(&trace, view, |n| n == "aten::view"), Some(view));
}

#[test]
fn moe_kernels_are_told_by_name() {
    assert_eq!(MoeKernel::of("_finalize_matmul_scatter_bf16"), Some(MoeKernel::Finalize));
    assert_eq!(MoeKernel::of("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"), Some(MoeKernel::Gemm(0)));
    assert_eq!(MoeKernel::of("_topk_forward"), None);
}
