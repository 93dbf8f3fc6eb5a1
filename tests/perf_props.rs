//! The per-op cost formulas (`src/perf/`, `docs/cost-formulas.md`) by property: no panic on
//! any arguments a trace could record, and more work never costs less.

use fusionscope::perf::{cost_from_trace, costed_ops, op_cost, DType, Input, OpArgs, RawArgs, Shape, Tensor};
use proptest::prelude::*;

const TYPE_NAMES: &[&str] = &[
    "float",
    "c10::BFloat16",
    "c10::Half",
    "c10::Float8_e4m3fn",
    "long int",
    "int",
    "bool",
    "double",
    "unsigned char",
    "Scalar",
    "ScalarList",
    "TensorList",
    "GenericList",
    "",
    "c10::complex<float>",
];

const CONCRETE: &[&str] = &[
    "",
    "True",
    "False",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "6",
    "15",
    "[-1]",
    "[1, 1]",
    "[2, 2]",
    "[0, 192]",
    "[]",
    "0.",
    "0.125",
    "abc",
    "[1, x]",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
];

fn dim() -> impl Strategy<Value = i128> {
    prop_oneof![
        8 => 0i128..5,
        4 => prop::sample::select(vec![7i128, 64, 559, 1024, 4096]),
        1 => prop::sample::select(vec![1i128 << 31, 1 << 32, 1 << 62, u64::MAX as i128, -1, -3]),
    ]
}

fn shape_json() -> impl Strategy<Value = String> {
    prop::collection::vec(dim(), 0..5)
        .prop_map(|d| format!("[{}]", d.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")))
}

/// One input: (dims JSON, type, concrete text).
fn input() -> impl Strategy<Value = (String, String, String)> {
    (
        prop_oneof![3 => shape_json(), 1 => prop::collection::vec(shape_json(), 0..3).prop_map(|l| format!("[{}]", l.join(", ")))],
        prop::sample::select(TYPE_NAMES),
        prop::sample::select(CONCRETE),
    )
        .prop_map(|(d, t, c)| (d, t.to_string(), c.to_string()))
}

fn op_name() -> impl Strategy<Value = String> {
    let mut names: Vec<String> = costed_ops().into_iter().filter(|n| n != "triton_*").collect();
    names.extend(
        [
            "triton_poi_fused_add_mul_0",
            "triton_red_fused_add_mean_mul_pow_rsqrt_0",
            "triton_per_fused__softmax_1",
            "triton_tem_fused_addmm_relu_0",
            "triton__0d1d2d",
            "aten::view",
            "aten::_foreach_add_",
        ]
        .map(String::from),
    );
    prop::sample::select(names)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any op name with any recorded arguments gives a cost or a one-line reason, never a panic
    /// (sizes up to 2⁶⁴ − 1 overflow into errors, negative sizes are refused).
    #[test]
    fn no_panic_on_any_arguments(op in op_name(), inputs in prop::collection::vec(input(), 0..10), concrete in any::<bool>()) {
        let dims = format!("[{}]", inputs.iter().map(|i| i.0.clone()).collect::<Vec<_>>().join(", "));
        let types = serde_json::to_string(&inputs.iter().map(|i| i.1.clone()).collect::<Vec<_>>()).unwrap();
        let values = serde_json::to_string(&inputs.iter().map(|i| i.2.clone()).collect::<Vec<_>>()).unwrap();
        let raw = RawArgs { input_dims: Some(&dims), input_type: Some(&types), concrete_inputs: concrete.then_some(values.as_str()), input_strides: None };
        if let Err(e) = cost_from_trace(&op, raw) {
            let text = e.to_string();
            prop_assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
        }
    }

    /// Arbitrary text is refused, not a panic.
    #[test]
    fn no_panic_on_any_text(dims in "[\\[\\]0-9, -]{0,40}", types in "[\\[\\]\", a-zA-Z:]{0,40}") {
        let _ = cost_from_trace("aten::add", RawArgs { input_dims: Some(&dims), input_type: Some(&types), concrete_inputs: None, input_strides: None });
    }

    /// A larger M, N or K never makes a GEMM cheaper.
    #[test]
    fn gemm_cost_grows_with_every_dimension(m in 1u64..5000, n in 1u64..5000, k in 1u64..5000, grow in 0usize..3, by in 1u64..100) {
        let mm = |m: u64, n: u64, k: u64| {
            op_cost("aten::mm", &OpArgs::new(vec![tensor(vec![m, k], DType::BF16), tensor(vec![k, n], DType::BF16)], true)).unwrap()
        };
        let base = mm(m, n, k);
        let mut dims = [m, n, k];
        dims[grow] += by;
        let bigger = mm(dims[0], dims[1], dims[2]);
        prop_assert!(bigger.flops > base.flops && bigger.bytes > base.bytes);
    }

    /// More queries or keys never make attention cheaper, causal or not; causal never costs more.
    #[test]
    fn attention_cost_grows_with_sequence(b in 1u64..8, h in 1u64..16, n in 1u64..4096, d in prop::sample::select(vec![64u64, 128]), by in 1u64..512, causal in any::<bool>()) {
        let sdpa = |n: u64, causal: bool| {
            let qkv = || tensor(vec![b, h, n, d], DType::BF16);
            let flag = Input::Scalar(Some(if causal { "True" } else { "False" }.to_string()));
            let args = OpArgs::new(vec![qkv(), qkv(), qkv(), Input::Scalar(Some("0.".into())), flag], true);
            op_cost("aten::_scaled_dot_product_flash_attention", &args).unwrap()
        };
        let (base, bigger) = (sdpa(n, causal), sdpa(n + by, causal));
        prop_assert!(bigger.flops > base.flops && bigger.bytes > base.bytes);
        prop_assert!(sdpa(n, true).flops <= sdpa(n, false).flops);
    }

    /// Pointwise, reduction, norm and softmax costs grow with the input.
    #[test]
    fn vector_op_costs_grow_with_the_input(rows in 1u64..2000, cols in 1u64..2000, by in 1u64..100, which in 0usize..4) {
        let cost = |rows: u64| {
            let x = || tensor(vec![rows, cols], DType::F32);
            let (op, args) = match which {
                0 => ("aten::add", vec![x(), x(), Input::Scalar(Some("1".into()))]),
                1 => ("aten::sum", vec![x(), Input::List(fusionscope::perf::List::Scalars(Some("[-1]".into()))), Input::Scalar(Some("False".into())), Input::Absent]),
                2 => ("aten::native_layer_norm", vec![x(), Input::List(fusionscope::perf::List::Scalars(Some(format!("[{cols}]")))), tensor(vec![cols], DType::F32), tensor(vec![cols], DType::F32), Input::Scalar(Some("1e-05".into()))]),
                _ => ("aten::_softmax", vec![x(), Input::Scalar(Some("-1".into())), Input::Scalar(Some("False".into()))]),
            };
            op_cost(op, &OpArgs::new(args, true)).unwrap()
        };
        let (base, bigger) = (cost(rows), cost(rows + by));
        prop_assert!(bigger.flops > base.flops && bigger.bytes > base.bytes);
    }

    /// FBGEMM's sparse-feature and quantization ops cost more with more values, samples or
    /// rows, and the TBE lookup counts exactly its indices, offsets, gathered rows and pooled
    /// output (`docs/cost-formulas.md`), for any sizes.
    #[test]
    fn fbgemm_costs_grow_and_the_lookup_adds_up(t in 1u64..200, b in 1u64..5000, n in 0u64..10_000_000, d in 1u64..512, by in 1u64..1000, which in 0usize..4) {
        let int = |dims: Vec<u64>| tensor(dims, DType::I32);
        let long = |dims: Vec<u64>| tensor(dims, DType::I64);
        let cost = |n: u64, b: u64| {
            let (op, args) = match which {
                0 => ("fbgemm::permute_2D_sparse_data", vec![int(vec![t]), int(vec![t, b]), int(vec![n]), Input::Absent, Input::Scalar(None)]),
                1 => ("fbgemm::bounds_check_indices", vec![long(vec![t]), long(vec![n]), long(vec![t * b + 1]), Input::Scalar(None), long(vec![1])]),
                2 => ("fbgemm::FloatToFP8RowwiseQuantized", vec![tensor(vec![n + b, d], DType::F32), Input::Scalar(None)]),
                _ => ("fbgemm::asynchronous_complete_cumsum", vec![int(vec![n + b])]),
            };
            op_cost(op, &OpArgs::new(args, false)).unwrap()
        };
        let base = cost(n, b);
        prop_assert!(cost(n + by, b).bytes > base.bytes && cost(n, b + by).bytes > base.bytes);

        let mut inputs = vec![Input::Absent; 29];
        inputs[1] = tensor(vec![1000 * d], DType::F16);
        inputs[2] = tensor(vec![0], DType::F16);
        inputs[6] = int(vec![t + 1]);
        inputs[7] = Input::Scalar(Some((t * d).to_string()));
        inputs[8] = Input::Scalar(Some(d.to_string()));
        inputs[11] = long(vec![n]);
        inputs[12] = long(vec![t * b + 1]);
        inputs[13] = Input::Scalar(Some("0".into()));
        let c = op_cost("fbgemm::split_embedding_codegen_lookup_sgd_function", &OpArgs::new(inputs, true)).unwrap();
        prop_assert_eq!(c.bytes, n * 8 + (t * b + 1) * 8 + n * d * 2 + b * t * d * 4);
        prop_assert_eq!(c.flops, n * d);
    }

    /// A larger batch never makes a convolution cheaper.
    #[test]
    fn conv_cost_grows_with_the_batch(n in 1u64..16, c in 1u64..64, hw in 3u64..64, k in prop::sample::select(vec![1u64, 3, 5]), by in 1u64..8) {
        let conv = |n: u64| {
            let list = |v: &str| Input::List(fusionscope::perf::List::Scalars(Some(v.to_string())));
            let args = vec![
                tensor(vec![n, c, hw, hw], DType::F16),
                tensor(vec![2 * c, c, k, k], DType::F16),
                Input::Absent,
                list("[1, 1]"),
                list("[0, 0]"),
                list("[1, 1]"),
                Input::Scalar(Some("False".into())),
                list("[0, 0]"),
                Input::Scalar(Some("1".into())),
            ];
            op_cost("aten::convolution", &OpArgs::new(args, true))
        };
        if let (Ok(base), Ok(bigger)) = (conv(n), conv(n + by)) {
            prop_assert!(bigger.flops > base.flops && bigger.bytes > base.bytes);
        }
    }
}

fn tensor(dims: Vec<u64>, dtype: DType) -> Input {
    Input::Tensor(Tensor::new(0, Shape::new(dims), dtype))
}
