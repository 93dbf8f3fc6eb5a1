use std::collections::HashMap;

use prost::Message;

use super::proto::*;
use super::*;
use trace::TransferKind;

fn stat(id: i64, value: Value) -> XStat {
    XStat { metadata_id: id, value: Some(value) }
}

fn event(meta: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
    XEvent { metadata_id: meta, offset_ps: Some(offset_ps), num_occurrences: None, duration_ps, stats }
}

fn line(id: i64, name: &str, timestamp_ns: i64, events: Vec<XEvent>) -> XLine {
    XLine { id, name: name.into(), timestamp_ns, events, ..Default::default() }
}

/// A host plane, one GPU plane with a kernel stream, a copy stream, a derived `XLA Ops` line
/// and an aggregated event, and a second GPU with one kernel.
fn space() -> XSpace {
    let stat_meta: HashMap<i64, XStatMetadata> = [
        (1, "device_vendor"),
        (2, "compute_cap_major"),
        (3, "compute_cap_minor"),
        (4, "core_count"),
        (5, "memory_size"),
        (6, "hlo_op"),
        (7, "correlation_id"),
        (8, "fusion.3"),
    ]
    .into_iter()
    .map(|(id, name)| (id, XStatMetadata { id, name: name.into() }))
    .collect();
    let ev_meta: HashMap<i64, XEventMetadata> =
        [(10, "loop_fusion.kd", ""), (11, "MEMCPYHtoD", ""), (12, "fusion.3", "")]
            .into_iter()
            .map(|(id, name, display)| {
                (id, XEventMetadata { id, name: name.into(), display_name: display.into(), stats: vec![] })
            })
            .collect();
    let gpu0 = XPlane {
        id: 1,
        name: "/device:GPU:0".into(),
        lines: vec![
            line(
                7,
                "Stream #7(Kernel)",
                1_000,
                vec![
                    // hlo_op by reference to a stat name, and as a string.
                    event(10, 2_500_000, 1_250_000, vec![stat(6, Value::Ref(8)), stat(7, Value::Uint64(41))]),
                    event(10, 500_000, 250_000, vec![stat(6, Value::Str("convolution.1".into()))]),
                    // An aggregate (no start): not a run.
                    XEvent {
                        metadata_id: 10,
                        offset_ps: None,
                        num_occurrences: Some(9),
                        duration_ps: 5,
                        stats: vec![],
                    },
                ],
            ),
            line(8, "Stream #8(MemcpyH2D)", 2_000, vec![event(11, 0, 4_000_000, vec![])]),
            line(9, "XLA Ops", 1_000, vec![event(12, 0, 9_000_000, vec![])]),
        ],
        event_metadata: ev_meta.clone(),
        stat_metadata: stat_meta.clone(),
        stats: vec![
            stat(1, Value::Str("NVIDIA".into())),
            stat(2, Value::Int64(9)),
            stat(3, Value::Int64(0)),
            stat(4, Value::Int64(132)),
            stat(5, Value::Uint64(85_899_345_920 - 100)),
        ],
    };
    let gpu3 = XPlane {
        id: 2,
        name: "/device:GPU:3".into(),
        lines: vec![line(2, "Stream #2(Kernel,MemcpyD2D)", 0, vec![event(10, 7_000_000, 1_000_000, vec![])])],
        event_metadata: ev_meta,
        stat_metadata: stat_meta,
        stats: vec![],
    };
    let host = XPlane {
        name: "/host:CPU".into(),
        lines: vec![line(1, "python", 0, vec![event(1, 0, 5, vec![])])],
        ..Default::default()
    };
    XSpace { planes: vec![host, gpu0, gpu3], hostnames: vec!["h".into()] }
}

#[test]
fn stream_lines_become_kernels_and_copies_with_their_hlo_ops() {
    let bytes = space().encode_to_vec();
    assert!(looks_like_xspace(&bytes));
    let t = read_xplane(&bytes).unwrap();
    let kernels: Vec<(&str, f64, f64, i64, i64)> =
        t.kernels.iter().map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream)).collect();
    assert_eq!(
        kernels,
        vec![
            // 1,000 ns + 500,000 ps = 1.5 µs; the `.kd` descriptor suffix dropped.
            ("loop_fusion", 1.5, 0.25, 0, 7),
            ("loop_fusion", 3.5, 1.25, 0, 7),
            ("loop_fusion", 7.0, 1.0, 3, 2),
        ]
    );
    assert_eq!(t.kernels[1].correlation, Some(41));
    let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
    assert_eq!((t.name(copy.name), copy.ts, copy.dur, copy.kind), ("MEMCPYHtoD", 2.0, 4.0, TransferKind::Memcpy));
    // Each kernel with an HLO op is joined to an op of that name spanning it.
    let ops: Vec<(&str, f64, u64)> = t.cpu_ops.iter().map(|o| (t.name(o.name), o.ts, o.external_id)).collect();
    assert_eq!(ops.iter().map(|o| (o.0, o.1)).collect::<Vec<_>>(), vec![("convolution.1", 1.5), ("fusion.3", 3.5)]);
    for (k, op) in t.kernels.iter().zip(&t.cpu_ops) {
        assert_eq!(k.external_id, Some(op.external_id));
        assert!(!op.shapes.is_recorded());
    }
    assert_eq!(t.kernels[2].external_id, None);
    // The two GPU planes, named from their stats; events counted on stream lines only.
    assert_eq!(t.devices[0].name, "NVIDIA GPU (compute capability 9.0, 132 cores, 80 GiB)");
    assert_eq!(t.devices[0].warp_size, Some(32));
    assert_eq!(t.devices[1].name, "unknown vendor GPU");
    assert_eq!(t.event_count, 5);
}

/// A module whose `fusion.3` is `negate(p)` on f32[8], as the metadata plane holds it.
fn module(name: &str) -> Vec<u8> {
    use hlo::*;
    let f32s = |n| Some(ShapeProto { element_type: 11, dimensions: vec![n], tuple_shapes: vec![] });
    let inst = |id, name: &str, opcode: &str, operands: Vec<i64>| HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: f32s(8),
        operand_ids: operands,
        ..Default::default()
    };
    let fused = HloComputationProto {
        id: 2,
        instructions: vec![inst(10, "q", "parameter", vec![]), inst(11, "negate.1", "negate", vec![10])],
        ..Default::default()
    };
    let mut fusion = inst(2, "fusion.3", "fusion", vec![1]);
    (fusion.fusion_kind, fusion.called_computation_ids) = ("kLoop".into(), vec![2]);
    let entry = HloComputationProto {
        id: 1,
        instructions: vec![inst(1, "p", "parameter", vec![]), fusion],
        ..Default::default()
    };
    let m = HloModuleProto { name: name.into(), computations: vec![fused, entry], ..Default::default() };
    HloProto { hlo_module: Some(m) }.encode_to_vec()
}

/// [`space`] with a metadata plane holding `hlo` as program 5, the kernels' stats naming
/// that program (`by_program`) or only a module called `jit_f`.
fn with_hlo(hlo: Vec<u8>, by_program: bool) -> XSpace {
    let mut s = space();
    let gpu0 = &mut s.planes[1];
    gpu0.stat_metadata.insert(20, XStatMetadata { id: 20, name: "program_id".into() });
    gpu0.stat_metadata.insert(21, XStatMetadata { id: 21, name: "hlo_module".into() });
    let module_stat = if by_program { stat(20, Value::Int64(5)) } else { stat(21, Value::Str("jit_f".into())) };
    for e in &mut gpu0.lines[0].events {
        e.stats.push(module_stat.clone());
    }
    let metadata = XPlane {
        name: "/host:metadata".into(),
        stat_metadata: [(3, XStatMetadata { id: 3, name: "Hlo Proto".into() })].into_iter().collect(),
        event_metadata: [(
            5,
            XEventMetadata {
                id: 5,
                name: "jit_f".into(),
                stats: vec![stat(3, Value::Bytes(hlo))],
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    s.planes.push(metadata);
    s
}

#[test]
fn a_kernels_hlo_op_finds_its_group_in_the_programs_module() {
    for by_program in [true, false] {
        let t = read_xplane(&with_hlo(module("jit_f"), by_program).encode_to_vec()).unwrap();
        // The kernel run for `fusion.3` has its group; `convolution.1` is not in the module.
        let linked: Vec<(&str, Option<&str>)> = t
            .cpu_ops
            .iter()
            .map(|o| (t.name(o.name), t.compiled.of_op(o.external_id).map(|(_, g)| g.op.as_str())))
            .collect();
        assert_eq!(linked, [("convolution.1", None), ("fusion.3", Some("fusion.3"))], "by program: {by_program}");
        let (_, g) = t.compiled.of_op(t.cpu_ops[1].external_id).unwrap();
        assert_eq!((g.kind.as_str(), g.ops.len(), g.fused_bytes, g.unfused_bytes), ("kLoop", 1, Some(64), Some(64)));
    }
}

#[test]
fn the_kernels_of_one_execution_of_an_hlo_op_share_its_op() {
    // cuDNN's convolution runs an im2col and a GEMM for each execution; two executions.
    let mut s = space();
    let gpu0 = &mut s.planes[1];
    gpu0.event_metadata.insert(20, XEventMetadata { id: 20, name: "Im3d2Col".into(), ..Default::default() });
    gpu0.event_metadata.insert(21, XEventMetadata { id: 21, name: "Cijk_gemm".into(), ..Default::default() });
    let conv = || stat(6, Value::Str("cudnn-conv.1".into()));
    gpu0.lines[0].events = [(20, 0), (21, 1_000_000), (20, 5_000_000), (21, 6_000_000)]
        .into_iter()
        .map(|(meta, at)| event(meta, at, 500_000, vec![conv()]))
        .collect();
    let t = read_xplane(&s.encode_to_vec()).unwrap();
    let ids: Vec<Option<u64>> = t.kernels.iter().filter(|k| k.device == 0).map(|k| k.external_id).collect();
    assert_eq!(ids.len(), 4);
    assert_eq!((ids[0], ids[2]), (ids[1], ids[3]), "each execution is one op");
    assert_ne!(ids[0], ids[2], "two executions, two ops");
    assert_eq!(t.cpu_ops.iter().filter(|o| t.name(o.name) == "cudnn-conv.1").count(), 2);
}

#[test]
fn a_module_that_cannot_be_decoded_leaves_the_kernels_without_groups() {
    let t = read_xplane(&with_hlo(vec![0x0a, 0xff, 0xff, 0x03], true).encode_to_vec()).unwrap();
    assert_eq!(t.kernels.len(), 3);
    assert!(t.compiled.is_empty());
}

#[test]
fn gzip_and_any_slicing_give_the_same_trace() {
    use std::io::Write;
    let bytes = space().encode_to_vec();
    let whole = read_xplane(&bytes).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&bytes).unwrap();
    let gz = enc.finish().unwrap();
    for input in [&bytes, &gz] {
        let mut r = XplaneReader::new();
        for c in input.chunks(3) {
            r.feed(c).unwrap();
        }
        let t = r.finish().unwrap();
        assert_eq!((t.kernels, t.transfers), (whole.kernels.clone(), whole.transfers.clone()));
    }
}

#[test]
fn unknown_fields_are_skipped() {
    // A field 15 (varint) and a field 14 (bytes) in the space and in each plane: a newer
    // profiler's additions.
    let mut bytes = vec![0x78, 0x05, 0x72, 0x02, 0xaa, 0xbb];
    bytes.extend(space().encode_to_vec());
    let t = read_xplane(&bytes).unwrap();
    assert_eq!(t.kernels.len(), 3);
}

#[test]
fn bad_protobuf_is_refused_with_the_message_and_field() {
    let bytes = space().encode_to_vec();
    // Cut short: a length runs past the end.
    let e = read_xplane(&bytes[..bytes.len() - 7]).unwrap_err();
    assert!(matches!(&e, XplaneError::Decode { message } if message.contains("XSpace.planes")), "{e}");
    // A plane claiming 2^62 bytes: refused at once, nothing allocated for it.
    let mut absurd = vec![0x0a];
    absurd.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]);
    absurd.extend([0x12, 0x02, b'/', b'h']);
    let e = read_xplane(&absurd).unwrap_err();
    assert!(matches!(e, XplaneError::Decode { .. }), "{e}");
    // Valid protobuf of another shape: no planes named like a profile's.
    let other = XSpace { planes: vec![XPlane { name: "layer".into(), ..Default::default() }], hostnames: vec![] };
    let e = read_xplane(&other.encode_to_vec()).unwrap_err();
    assert_eq!(e.to_string(), "not an XLA profile: the protobuf has no device or host planes (planes named \"layer\")");
    assert!(!looks_like_xspace(&other.encode_to_vec()));
    assert!(!looks_like_xspace(b"\n0:0:0 %1:<2xf16> = a.b.add(%0:<2xf16>)\n"));
    let mut r = XplaneReader::new();
    r.input = Gathered::new(10);
    assert_eq!(r.feed(&bytes).unwrap_err(), XplaneError::TooLarge { limit: 10 });
    assert_eq!(r.feed(&bytes).unwrap_err(), XplaneError::Poisoned);
}

mod compiled_runs;
