use super::*;
use trace::{CpuOp, Kernel, Launch, RecordedShapes};

/// A step on one thread and one stream: three launches, a synchronisation, host work, and a
/// kernel launched only after it:
/// - `k1` (10–110) after its launch call (0–5): 5 µs of launch delay;
/// - `k2` (110–160), launched at 20–25, waits for `k1` on the stream;
/// - `cudaDeviceSynchronize` (30–165) returns when `k2` ends (160);
/// - the host works in `aten::tail` (165–200) and launches `k3` at 190–195;
/// - `k3` (200–210) waits for that launch.
fn planted() -> Trace {
    let mut t = Trace::default();
    let call = |t: &mut Trace, c: u64, name: &str, ts: f64, dur: f64| {
        let name = t.names.intern(name);
        t.launches.insert(c, Launch { name, kernel: None, external_id: None, ts, dur, tid: 1 });
    };
    call(&mut t, 1, "cudaLaunchKernel", 0.0, 5.0);
    call(&mut t, 2, "cudaLaunchKernel", 20.0, 5.0);
    call(&mut t, 3, "cudaDeviceSynchronize", 30.0, 135.0);
    call(&mut t, 4, "cudaLaunchKernel", 190.0, 5.0);
    for (name, c, ts, dur) in [("k1", 1, 10.0, 100.0), ("k2", 2, 110.0, 50.0), ("k3", 4, 200.0, 10.0)] {
        let name = t.names.intern(name);
        let correlation = Some(c);
        t.kernels.push(Kernel {
            name,
            ts,
            dur,
            device: 0,
            stream: 7,
            correlation,
            external_id: None,
            graph_node: false,
        });
    }
    let tail = t.names.intern("aten::tail");
    let op = CpuOp {
        name: tail,
        ts: 165.0,
        dur: 35.0,
        tid: 1,
        pid: 0,
        external_id: 9,
        annotation: false,
        shapes: RecordedShapes::default(),
    };
    t.cpu_ops.push(op);
    t
}

#[test]
fn the_planted_path_and_its_shares() {
    let t = planted();
    let [p] = &critical_paths(&t, &[])[..] else { panic!("one window") };
    assert_eq!(p.window, "whole trace");
    // From k1's launch (0) to k3's end (210): k1, k2, the sync's last 5 µs, the host's 25 µs in
    // aten::tail and k3's launch call, and two launch delays of 5 µs.
    assert_eq!(p.length_us, 210.0);
    assert_eq!((p.gpu_us, p.cpu_us, p.launch_us, p.other_us), (160.0, 40.0, 10.0, 0.0));
    assert_eq!((p.kernels, p.calls), (3, 3));
    let top: Vec<(&str, &str, f64)> = p.top.iter().map(|i| (i.name.as_str(), i.side, i.time_us)).collect();
    assert_eq!(top[..3], [("k1", "gpu", 100.0), ("k2", "gpu", 50.0), ("aten::tail", "cpu", 25.0)]);
}

#[test]
fn a_window_cuts_the_path_at_its_start() {
    let t = planted();
    let windows = [("late".to_string(), 150.0, 210.0)];
    let [p] = &critical_paths(&t, &windows)[..] else { panic!("one window") };
    // From 150: k2's last 10 µs, the sync's 5, the host's 25 and 5, a 5 µs launch delay, k3.
    assert_eq!(p.length_us, 60.0);
    assert_eq!((p.gpu_us, p.cpu_us, p.launch_us), (20.0, 35.0, 5.0));
}

#[test]
fn a_kernel_queued_behind_another_is_bound_by_its_stream_not_its_launch() {
    let t = planted();
    let p = &critical_paths(&t, &[])[0];
    // k2's launch returned at 25, long before k1 ended: the launch is not on the path.
    assert!(p.top.iter().all(|i| i.time_us > 0.0));
    assert_eq!(p.launch_us, 10.0);
}

#[test]
fn no_kernel_no_path() {
    assert!(critical_paths(&Trace::default(), &[]).is_empty());
}
