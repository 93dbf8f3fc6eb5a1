//! The XLA profiles of real runs (tests/data/compiled, made by scripts/make-compiled-traces):
//! the HLO the profile carries is the module XLA dumped beside it, instruction for instruction,
//! and its bytes add up to XLA's own cost analysis of that module.

use rustc_hash::FxHashMap;

use crate::xplane::decode::Programs;
use crate::xplane::hlo;
use crate::xplane::proto::XSpace;
use prost::Message;

/// The profiles and the module each one ran: on CPU (jax[cpu]) and on an H200 (jax with CUDA).
const CASES: [(&str, &str); 4] = [
    ("jax_block_cpu", "jit_block"),
    ("jax_convnet_cpu", "jit_convnet"),
    ("jax_block_cuda", "jit_block"),
    ("jax_convnet_cuda", "jit_convnet"),
];

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/../../tests/data/compiled/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One computation of an HLO text dump: its instructions as (name, opcode, called computation
/// or custom-call target).
type Computation = Vec<(String, String, Option<String>)>;

/// The computations of XLA's text dump (`--xla_dump_hlo_as_text`), by name, and the entry's name.
fn dump(text: &str) -> (FxHashMap<String, Computation>, String) {
    let mut computations: FxHashMap<String, Computation> = FxHashMap::default();
    let (mut current, mut entry) = (None::<String>, String::new());
    for line in text.lines() {
        if line.ends_with('{') && !line.starts_with(' ') && !line.starts_with("HloModule") {
            let head = line.strip_prefix("ENTRY ").unwrap_or(line);
            let name = head.trim_start_matches('%').split(' ').next().unwrap().to_string();
            if line.starts_with("ENTRY ") {
                entry = name.clone();
            }
            computations.insert(name.clone(), Vec::new());
            current = Some(name);
        } else if line == "}" {
            current = None;
        } else if let (Some(c), Some(rest)) =
            (&current, line.trim_start().strip_prefix("ROOT ").or(Some(line.trim_start())))
        {
            let Some((name, rhs)) = rest.strip_prefix('%').and_then(|r| r.split_once(" = ")) else { continue };
            // `f32[2,32]{1,0} fusion(%a, %b), kind=kLoop, calls=%fused_computation.1`; a tuple
            // shape `(f32[2], f32[2])` has spaces inside its parentheses.
            let after_shape = match rhs.starts_with('(') {
                true => &rhs[rhs.find(") ").unwrap() + 2..],
                false => rhs.split_once(' ').unwrap().1,
            };
            let opcode = after_shape.split('(').next().unwrap().to_string();
            // A fusion's called computation; a custom call's target stands in that place.
            let calls =
                rhs.split_once("calls=%").map(|(_, c)| c.split([',', ' ', '}']).next().unwrap().to_string()).or_else(
                    || rhs.split_once("custom_call_target=\"").map(|(_, t)| t.split('"').next().unwrap().to_string()),
                );
            computations.get_mut(c).unwrap().push((name.to_string(), opcode, calls));
        }
    }
    (computations, entry)
}

/// A fusion's ops as the dump writes them: its computation's instructions, nested fusions
/// expanded, what moves no data left out (as `hlo::Module::group` does).
fn fused_ops(computations: &FxHashMap<String, Computation>, name: &str, out: &mut Vec<String>) {
    for (op, opcode, calls) in &computations[name] {
        match opcode.as_str() {
            "parameter" | "tuple" | "get-tuple-element" | "constant" | "bitcast" => {}
            "fusion" => fused_ops(computations, calls.as_deref().unwrap(), out),
            _ => out.push(op.clone()),
        }
    }
}

/// The module of the profile named `jit_NAME`.
fn module<'a>(programs: &'a Programs, name: &str) -> &'a hlo::Module {
    let id = programs.by_name[name];
    &programs.modules[&id]
}

/// A compiled run's profile (its programs' HLO) and XLA's dump of the same module.
fn run(case: &str) -> (Programs, FxHashMap<String, Computation>, String) {
    let space = XSpace::decode(data(&format!("{case}.xplane.pb")).as_slice()).unwrap();
    let text = String::from_utf8(data(&format!("{case}.after_optimizations.txt"))).unwrap();
    let (computations, entry) = dump(&text);
    (Programs::of(&space), computations, entry)
}

#[test]
fn every_fusion_of_a_real_profile_is_the_dumps_fused_computation() {
    for (case, module_name) in CASES {
        let (programs, computations, entry) = run(case);
        let m = module(&programs, module_name);
        let mut fusions = 0;
        for (op, opcode, calls) in &computations[&entry] {
            let group = m.group(op).unwrap_or_else(|| panic!("{case}: {op} is not in the profile's HLO"));
            if opcode != "fusion" {
                continue;
            }
            fusions += 1;
            let mut want = Vec::new();
            fused_ops(&computations, calls.as_deref().unwrap(), &mut want);
            let mut got: Vec<String> = group.ops.iter().map(|o| o.name.clone()).collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{case}: {op}");
        }
        assert!(fusions >= 3, "{case}: {fusions} fusions");
    }
}

#[test]
fn a_real_profiles_bytes_add_up_to_xlas_cost_analysis() {
    for (case, module_name) in CASES {
        let (programs, computations, entry) = run(case);
        let m = module(&programs, module_name);
        let cost: serde_json::Value = serde_json::from_slice(&data(&format!("{case}.cost.json"))).unwrap();
        let xla = cost["bytes accessed"].as_f64().unwrap();
        let (mut ours, mut uncosted) = (0u64, 0u64);
        for (op, opcode, calls) in &computations[&entry] {
            if matches!(opcode.as_str(), "parameter" | "tuple" | "get-tuple-element" | "constant" | "bitcast") {
                continue;
            }
            let bytes = m.group(op).unwrap().fused_bytes.unwrap();
            // XLA's cost analysis counts a custom call's bytes only for cuBLAS GEMMs; it marks
            // the others (cuDNN convolutions) unknown and leaves them out of its total.
            match opcode == "custom-call" && calls.as_deref() != Some("__cublas$gemm") {
                true => uncosted += bytes,
                false => ours += bytes,
            }
        }
        let off = (ours as f64 - xla).abs() / xla;
        println!(
            "{case}: fusionscope {ours} B, XLA's cost analysis {xla} B ({:.4} % apart); \
             {uncosted} B more in custom calls XLA does not cost",
            off * 100.0
        );
        assert!(off <= 0.02, "{case}: {ours} vs {xla}");
    }
}

/// A CPU run (jax[cpu]) has no GPU plane: its ops are the host plane's events that name an
/// HLO op, on the CPU client's thread. Each is a kernel of the one CPU device, joined to the
/// group of the entry instruction it ran, three calls of every one; the Python thread and
/// PJRT's own calls, which name no HLO op, are not kernels.
#[test]
fn a_cpu_runs_ops_are_kernels_of_the_cpu_each_with_its_hlo_group() {
    for (case, module_name) in [("jax_block_cpu", "jit_block"), ("jax_convnet_cpu", "jit_convnet")] {
        let trace = crate::xplane::read_xplane(&data(&format!("{case}.xplane.pb"))).unwrap();
        let (programs, computations, entry) = run(case);
        let m = module(&programs, module_name);
        assert_eq!(trace.devices.len(), 1, "{case}");
        assert_eq!(trace.devices[0].name, trace::CPU_DEVICE, "{case}");
        let streams: std::collections::BTreeSet<i64> = trace.kernels.iter().map(|k| k.stream).collect();
        assert_eq!(streams.len(), 1, "{case}: one CPU client thread");
        // The entry's instructions that do work: every one ran once a call.
        let thunks: Vec<&str> = computations[&entry]
            .iter()
            .filter(|(_, opcode, _)| {
                !matches!(opcode.as_str(), "parameter" | "tuple" | "get-tuple-element" | "constant" | "bitcast")
            })
            .map(|(op, _, _)| op.as_str())
            .collect();
        assert_eq!(trace.kernels.len(), 3 * thunks.len(), "{case}: {thunks:?}");
        let mut calls: FxHashMap<&str, usize> = FxHashMap::default();
        for k in &trace.kernels {
            let name = trace.name(k.name);
            assert!(thunks.contains(&name), "{case}: {name} is no instruction of the entry");
            *calls.entry(name).or_default() += 1;
            let op = k.external_id.unwrap_or_else(|| panic!("{case}: {name} has no op"));
            let (_, group) = trace.compiled.of_op(op).unwrap_or_else(|| panic!("{case}: {name} has no group"));
            assert_eq!(group.ops, m.group(name).unwrap().ops, "{case}: {name}");
        }
        assert!(calls.values().all(|&n| n == 3), "{case}: {calls:?}");
    }
}
