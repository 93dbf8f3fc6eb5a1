use super::*;

fn shape(element_type: i32, dims: &[i64]) -> Option<ShapeProto> {
    Some(ShapeProto { element_type, dimensions: dims.to_vec(), tuple_shapes: Vec::new() })
}

fn inst(id: i64, name: &str, opcode: &str, shape: Option<ShapeProto>, operands: &[i64]) -> HloInstructionProto {
    HloInstructionProto {
        name: name.into(),
        opcode: opcode.into(),
        shape,
        id,
        operand_ids: operands.to_vec(),
        ..HloInstructionProto::default()
    }
}

fn fusion(id: i64, name: &str, shape: Option<ShapeProto>, operands: &[i64], calls: i64) -> HloInstructionProto {
    HloInstructionProto {
        fusion_kind: "kLoop".into(),
        called_computation_ids: vec![calls],
        ..inst(id, name, "fusion", shape, operands)
    }
}

fn computation(id: i64, instructions: Vec<HloInstructionProto>) -> HloComputationProto {
    HloComputationProto { name: format!("c{id}"), id, instructions, ..HloComputationProto::default() }
}

const F32: i32 = 11;

/// `exp(p0 + broadcast(p1))` on f32[16,10] and f32[10], one kLoop fusion, with a bitcast.
fn add_exp() -> Module {
    let fused = computation(
        2,
        vec![
            inst(10, "param_0", "parameter", shape(F32, &[16, 10]), &[]),
            inst(11, "param_1", "parameter", shape(F32, &[10]), &[]),
            inst(12, "broadcast.1", "broadcast", shape(F32, &[16, 10]), &[11]),
            inst(13, "add.1", "add", shape(F32, &[16, 10]), &[10, 12]),
            inst(14, "bitcast.1", "bitcast", shape(F32, &[160]), &[13]),
            inst(15, "exponential.1", "exponential", shape(F32, &[160]), &[14]),
        ],
    );
    let entry = computation(
        1,
        vec![
            inst(1, "p0", "parameter", shape(F32, &[16, 10]), &[]),
            inst(2, "p1", "parameter", shape(F32, &[10]), &[]),
            fusion(3, "loop_add_fusion", shape(F32, &[160]), &[1, 2], 2),
        ],
    );
    let proto = HloModuleProto { name: "jit_f".into(), computations: vec![fused, entry], ..HloModuleProto::default() };
    Module::new(proto).unwrap()
}

#[test]
fn a_fusions_group_is_its_computations_ops_with_their_bytes() {
    let g = add_exp().group("loop_add_fusion").unwrap();
    assert_eq!(g.kind, "kLoop");
    let ops: Vec<(&str, &str, &str)> =
        g.ops.iter().map(|o| (o.name.as_str(), o.opcode.as_str(), o.shape.as_str())).collect();
    assert_eq!(
        ops,
        [
            ("broadcast.1", "broadcast", "f32[16,10]"),
            ("add.1", "add", "f32[16,10]"),
            ("exponential.1", "exponential", "f32[160]")
        ]
    );
    assert_eq!(g.ops[1].operands, ["f32[16,10]", "f32[16,10]"]);
    // Fused: the two operands read (640 + 40 bytes) and the output written (640).
    assert_eq!(g.fused_bytes, Some(640 + 40 + 640));
    // Unfused: broadcast 40 → 640, add 2 × 640 → 640, exponential 640 → 640; the bitcast moves nothing.
    assert_eq!(g.unfused_bytes, Some((40 + 640) + (3 * 640) + (2 * 640)));
}

#[test]
fn an_instruction_that_is_not_a_fusion_is_its_own_group() {
    let cublas = HloInstructionProto {
        custom_call_target: "__cublas$gemm".into(),
        ..inst(
            3,
            "custom-call.2",
            "custom-call",
            Some(ShapeProto {
                element_type: 13,
                dimensions: vec![],
                tuple_shapes: vec![shape(16, &[64, 32]).unwrap(), shape(6, &[1024]).unwrap()],
            }),
            &[1, 2],
        )
    };
    let entry = computation(
        1,
        vec![
            inst(1, "a", "parameter", shape(16, &[64, 128]), &[]),
            inst(2, "b", "parameter", shape(16, &[128, 32]), &[]),
            cublas,
        ],
    );
    let m = Module::new(HloModuleProto { computations: vec![entry], ..HloModuleProto::default() }).unwrap();
    let g = m.group("custom-call.2").unwrap();
    assert_eq!(g.kind, "custom-call");
    assert_eq!(g.ops[0].opcode, "custom-call __cublas$gemm");
    assert_eq!(g.ops[0].shape, "(bf16[64,32], u8[1024])");
    let bytes = 64 * 128 * 2 + 128 * 32 * 2 + 64 * 32 * 2 + 1024;
    assert_eq!((g.fused_bytes, g.unfused_bytes), (Some(bytes), Some(bytes)));
    assert!(m.group("no-such-op").is_none());
}

#[test]
fn nested_fusions_are_expanded_and_a_fusion_that_calls_itself_ends() {
    let inner = computation(
        3,
        vec![
            inst(20, "q", "parameter", shape(F32, &[4]), &[]),
            inst(21, "negate.1", "negate", shape(F32, &[4]), &[20]),
        ],
    );
    let outer = computation(
        2,
        vec![
            inst(10, "p", "parameter", shape(F32, &[4]), &[]),
            fusion(11, "inner_fusion", shape(F32, &[4]), &[10], 3),
            inst(12, "abs.1", "abs", shape(F32, &[4]), &[11]),
            // Calls its own computation: read once, its unfused bytes unknown.
            fusion(13, "again", shape(F32, &[4]), &[12], 2),
        ],
    );
    let entry = computation(
        1,
        vec![inst(1, "x", "parameter", shape(F32, &[4]), &[]), fusion(2, "outer", shape(F32, &[4]), &[1], 2)],
    );
    let m =
        Module::new(HloModuleProto { computations: vec![inner, outer, entry], ..HloModuleProto::default() }).unwrap();
    let g = m.group("outer").unwrap();
    let names: Vec<&str> = g.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["abs.1", "negate.1"]);
    assert_eq!(g.fused_bytes, Some(32));
    assert_eq!(g.unfused_bytes, None);
}

#[test]
fn sizes_past_64_bits_are_unknown_and_sub_byte_types_are_packed() {
    let huge = ShapeProto { element_type: F32, dimensions: vec![1 << 31, 1 << 31, 1 << 31], tuple_shapes: vec![] };
    assert_eq!(shape_bytes(&huge), None);
    assert_eq!(shape_bytes(&shape(21, &[3]).unwrap()), Some(2), "s4[3] is 12 bits: 2 bytes");
    assert_eq!(shape_bytes(&shape(F32, &[-1]).unwrap()), None);
    assert_eq!(shape_bytes(&shape(17, &[]).unwrap()), Some(0), "a token holds nothing");
    assert_eq!(shape_text(&shape(F32, &[]).unwrap()), "f32[]");
    let entry = computation(
        1,
        vec![inst(1, "p", "parameter", Some(huge.clone()), &[]), inst(2, "copy.1", "copy", Some(huge), &[1])],
    );
    let m = Module::new(HloModuleProto { computations: vec![entry], ..HloModuleProto::default() }).unwrap();
    let g = m.group("copy.1").unwrap();
    assert_eq!((g.fused_bytes, g.unfused_bytes), (None, None));
}

#[test]
fn flops_are_counted_as_xlas_cost_analysis_counts_them() {
    let bf16 = |dims: &[i64]| shape(16, dims);
    let dot = HloInstructionProto {
        dot_dimension_numbers: Some(DotDimensionNumbers { lhs_contracting_dimensions: vec![1] }),
        ..inst(3, "dot.1", "dot", bf16(&[64, 32]), &[1, 2])
    };
    let (a, b) = (bf16(&[64, 128]).unwrap(), bf16(&[128, 32]).unwrap());
    assert_eq!(op_flops(&dot, &[], &[Some(&a), Some(&b)]), Some(2 * 64 * 32 * 128));
    // A convolution: 2 × output elements × the kernel's elements per output feature.
    let conv = HloInstructionProto {
        convolution_dimension_numbers: Some(ConvolutionDimensionNumbers { kernel_output_feature_dimension: 0 }),
        custom_call_target: "__cudnn$convForward".into(),
        ..inst(4, "cudnn-conv.1", "custom-call", None, &[1, 2])
    };
    let out = ShapeProto {
        element_type: 13,
        dimensions: vec![],
        tuple_shapes: vec![bf16(&[1, 8, 10, 10]).unwrap(), shape(6, &[64]).unwrap()],
    };
    let conv = HloInstructionProto { shape: Some(out), ..conv };
    let (input, kernel) = (bf16(&[1, 4, 10, 10]).unwrap(), bf16(&[8, 4, 3, 3]).unwrap());
    assert_eq!(op_flops(&conv, &[], &[Some(&input), Some(&kernel)]), Some(2 * 800 * 4 * 9));
    // Elementwise: one per output element; a reduction: one per input element; movement: none.
    let x = shape(F32, &[16, 10]);
    assert_eq!(op_flops(&inst(5, "add.1", "add", x.clone(), &[]), &[], &[]), Some(160));
    let reduce = inst(6, "reduce.1", "reduce", shape(F32, &[16]), &[]);
    assert_eq!(op_flops(&reduce, &[], &[x.as_ref()]), Some(160));
    assert_eq!(op_flops(&inst(7, "t.1", "transpose", x.clone(), &[]), &[], &[]), Some(0));
    // No count here: a sort.
    assert_eq!(op_flops(&inst(8, "sort.1", "sort", x, &[]), &[], &[]), None);
    // A group's FLOPs add up its ops', and say the work is on the matrix units.
    let g = add_exp().group("loop_add_fusion").unwrap();
    assert_eq!((g.flops, g.matrix, g.element.as_deref()), (Some(160 + 160), false, Some("f32")));
}

/// A cuBLAS call as XLA's GPU compiler writes it: a batched bf16 matmul whose dot dimensions
/// are in its backend config (`GpuBackendConfig` as JSON, 64-bit integers as strings), the
/// result beside its workspace.
fn cublas(backend_config: Vec<u8>, payload: Option<Payload>) -> HloInstructionProto {
    let out = ShapeProto {
        element_type: 13,
        dimensions: vec![],
        tuple_shapes: vec![shape(16, &[2, 64, 16]).unwrap(), shape(6, &[4096]).unwrap()],
    };
    HloInstructionProto {
        custom_call_target: "__cublas$lt$matmul".into(),
        backend_config,
        backend_config_payload: payload,
        ..inst(3, "cublas-gemm.1", "custom-call", Some(out), &[1, 2])
    }
}

const GEMM_CONFIG: &str = r#"{"operation_queue_id":"0","gemm_backend_config":{"alpha_real":1,"beta":0,
    "dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"],
    "lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]},"epilogue":"DEFAULT"}}"#;

#[test]
fn a_cublas_calls_flops_come_from_its_backend_config_wherever_the_module_keeps_it() {
    let module_of = |x: HloInstructionProto, payloads: Vec<Vec<u8>>| {
        let lhs = inst(1, "p0", "parameter", shape(16, &[2, 64, 32]), &[]);
        let rhs = inst(2, "p1", "parameter", shape(16, &[2, 32, 16]), &[]);
        Module::new(HloModuleProto {
            name: "jit_mm".into(),
            computations: vec![computation(1, vec![lhs, rhs, x])],
            payloads,
            ..Default::default()
        })
        .unwrap()
    };
    let config = GEMM_CONFIG.as_bytes().to_vec();
    // 2 × (2·64·16 outputs) × 32 contracted.
    let want = Some(2 * 2048 * 32);
    for (x, payloads) in [
        (cublas(config.clone(), None), vec![]),
        (cublas(vec![], Some(Payload { value: config.clone(), id: 0 })), vec![]),
        (cublas(vec![], Some(Payload { value: vec![], id: 1 })), vec![b"{}".to_vec(), config.clone()]),
    ] {
        let g = module_of(x, payloads).group("cublas-gemm.1").unwrap();
        assert_eq!((g.flops, g.matrix, g.element.as_deref()), (want, true, Some("bf16")));
    }
    // No dot dimensions, broken JSON, a dimension the operand does not have, a config past the
    // budget: no count, never a guess.
    let (lhs, rhs) = (shape(16, &[2, 64, 32]).unwrap(), shape(16, &[2, 32, 16]).unwrap());
    let operands = [Some(&lhs), Some(&rhs)];
    let x = cublas(vec![], None);
    for bad in [
        &b"{}"[..],
        b"{\"gemm_backend_config\": {",
        br#"{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["7"]}}}"#,
        br#"{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["x"]}}}"#,
    ] {
        assert_eq!(op_flops(&x, bad, &operands), None, "{}", String::from_utf8_lossy(bad));
    }
    let long = format!("{GEMM_CONFIG}{}", " ".repeat(64 << 10));
    assert_eq!(op_flops(&x, long.as_bytes(), &operands), None);
    assert_eq!(op_flops(&x, GEMM_CONFIG.as_bytes(), &operands), want);
}
