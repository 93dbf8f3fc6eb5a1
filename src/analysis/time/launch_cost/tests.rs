use super::*;
use trace::{Kernel, Launch};

/// A planted kernel: its start and duration, and its launch call's start and duration (`None`:
/// no launch call).
type Planted = (f64, f64, Option<(f64, f64)>);

/// Stream 7 of a planted trace: `(start, dur, call start, call dur)` per kernel, each with its
/// own launch call but for `None`.
fn planted(kernels: &[Planted]) -> Trace {
    let mut t = Trace::default();
    let name = t.names.intern("k");
    let call = t.names.intern("cudaLaunchKernel");
    for (i, &(ts, dur, launch)) in kernels.iter().enumerate() {
        let correlation = launch.map(|(call_ts, call_dur)| {
            let c = i as u64 + 1;
            let l = Launch { name: call, kernel: None, external_id: None, ts: call_ts, dur: call_dur, tid: 1 };
            t.launches.insert(c, l);
            c
        });
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
    t
}

const PLANTED: [Planted; 6] = [
    // Launched before the stream had work: not a wait.
    (0.0, 10.0, Some((0.0, 5.0))),
    // Three kernels each launched after the stream went idle (at 10, 22 and 32): a stretch
    // from 10 to 42 with 10 + 8 + 8 µs of idle time. Each runs 2 µs for a 4 µs call.
    (20.0, 2.0, Some((15.0, 4.0))),
    (30.0, 2.0, Some((25.0, 4.0))),
    (40.0, 2.0, Some((35.0, 4.0))),
    // Launched at 30, while the stream was busy: the stretch ends.
    (42.0, 20.0, Some((30.0, 3.0))),
    // No launch call recorded: not a launched kernel.
    (100.0, 1.0, None),
];

#[test]
fn each_figure_of_a_planted_trace() {
    let t = planted(&PLANTED);
    let LaunchReport { whole: cost, steps } = launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap();
    assert!(steps.is_empty());
    assert_eq!((cost.calls, cost.launched_kernels), (5, 5));
    assert_eq!((cost.launch_cpu_us, cost.per_launch_us), (20.0, 4.0));
    // From each call's return: 0 (the first kernel started before its call returned), 1, 1,
    // 1, 9; the median is the 3rd, the p90 the 5th.
    assert_eq!((cost.latency_median_us, cost.latency_p90_us), (1.0, 9.0));
    let hb = &cost.host_bound;
    assert_eq!((hb.stretches, hb.kernels, hb.span_us, hb.idle_us), (1, 3, 32.0, 26.0));
    let longest = hb.longest.as_ref().unwrap();
    assert_eq!((longest.device, longest.stream, longest.start_us, longest.kernels), (0, 7, 10.0, 3));
    let small = &cost.small;
    assert_eq!((small.kernels, small.kernel_us, small.launch_us), (3, 6.0, 12.0));
    assert_eq!(small.names, [("k".to_string(), 3)]);
    // The three gaps of the stretch are all the host wait there is.
    assert_eq!(cost.graph_saving_us, 26.0);
}

#[test]
fn two_host_bound_kernels_are_a_pause_not_a_stretch() {
    let t = planted(&PLANTED[..3]);
    let cost = launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole;
    assert_eq!(cost.host_bound, HostBound::default());
    // Its two gaps are host wait a graph would remove all the same.
    assert_eq!(cost.graph_saving_us, 18.0);
}

/// A graph gives back only time the device ran nothing: a stream's gap while another stream
/// works gives back none of that, and two streams waiting at once wait once.
#[test]
fn a_graph_gives_back_only_the_time_no_stream_of_the_device_ran() {
    // Stream 7: a kernel at 0–10, then one launched at 25 (after the stream went idle) at 30–32:
    // a host-wait gap of 10–30.
    let mut t = planted(&[(0.0, 10.0, Some((0.0, 5.0))), (30.0, 2.0, Some((25.0, 4.0)))]);
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 20.0);
    // Stream 8 of the same device busy at 12–18 (no launch call: still busy time): 6 of the 20
    // are not idle time.
    let busy = Kernel { ts: 12.0, dur: 6.0, stream: 8, correlation: None, ..t.kernels[0] };
    t.kernels.push(busy);
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 14.0);
    // Stream 9 waits on the host at 15–35 as well (a kernel at 5–15, the next launched at 33
    // and run at 35): the two gaps wait at once over 15–30, and over 10–35 the device ran at
    // 10–18 (streams 8 and 9) and 30–32: 18–30 and 32–35 are given back.
    for (i, (ts, dur, call)) in [(5.0, 10.0, 5.0), (35.0, 1.0, 33.0)].into_iter().enumerate() {
        let c = 100 + i as u64;
        t.launches.insert(c, Launch { ts: call, dur: 1.0, ..t.launches[&1] });
        t.kernels.push(Kernel { ts, dur, stream: 9, correlation: Some(c), ..t.kernels[0] });
    }
    t.kernels.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 15.0);
    // Another device's work is no busy time of this one: 15–18 is given back too.
    for k in t.kernels.iter_mut().filter(|k| k.stream == 8) {
        k.device = 1;
    }
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 18.0);
}

/// While another stream's work sits queued (launched, not started), the device idles for a
/// reason of its own, not this host's launches; from the call's return on, the wait is the
/// launch's own latency, which a graph removes whatever else is queued.
#[test]
fn an_idle_device_with_another_streams_work_queued_waits_on_no_launch() {
    // Stream 7: 0–10, then a kernel launched at 25–29 and run at 30: a host wait of 10–30.
    let mut t = planted(&[(0.0, 10.0, Some((0.0, 5.0))), (30.0, 2.0, Some((25.0, 4.0)))]);
    // Stream 8's kernel, launched at 1–2 and run only at 33: queued over the whole gap.
    t.launches.insert(50, Launch { ts: 1.0, dur: 1.0, ..t.launches[&1] });
    t.kernels.push(Kernel { ts: 33.0, dur: 1.0, stream: 8, correlation: Some(50), ..t.kernels[0] });
    // Only 29–30, from stream 7's call's return to its kernel, is given back.
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 1.0);
    // The same kernel queued on stream 7 itself (a trace out of launch order) does not count.
    t.kernels[2].stream = 7;
    t.kernels.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    assert_eq!(launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole.graph_saving_us, 20.0);
}

#[test]
fn a_step_counts_the_kernels_that_start_inside_it() {
    let t = planted(&PLANTED);
    let windows = [("A".to_string(), 0.0, 25.0), ("B".to_string(), 25.0, 200.0), ("C".to_string(), 500.0, 600.0)];
    let steps = launch_cost(&t, &windows, DeviceBusy::of(&t)).unwrap().steps;
    let calls: Vec<(&str, u64, f64)> =
        steps.iter().map(|s| (s.window.as_str(), s.cost.calls, s.cost.launch_cpu_us)).collect();
    assert_eq!(calls, [("A", 2, 9.0), ("B", 3, 11.0), ("C", 0, 0.0)]);
    // Inside B the stretch is cut: its first kernel has no kernel before it in the step.
    assert_eq!(steps[1].cost.host_bound.stretches, 0);
}

#[test]
fn a_call_that_launched_two_kernels_costs_the_host_once() {
    let mut t = planted(&PLANTED[..1]);
    let mut second = t.kernels[0];
    second.ts = 10.0;
    t.kernels.push(second);
    let cost = launch_cost(&t, &[], DeviceBusy::of(&t)).unwrap().whole;
    assert_eq!((cost.calls, cost.launched_kernels, cost.launch_cpu_us), (1, 2, 5.0));
}

#[test]
fn graph_nodes_and_traces_without_calls_have_no_launch_cost() {
    let mut t = planted(&PLANTED);
    for k in &mut t.kernels {
        k.graph_node = true;
    }
    assert!(launch_cost(&t, &[], DeviceBusy::of(&t)).is_none());
    assert!(launch_cost(&Trace::default(), &[], DeviceBusy::default()).is_none());
}

#[test]
fn percentiles_by_nearest_rank() {
    assert_eq!(nearest_rank(&mut [], 50.0), 0.0);
    assert_eq!(nearest_rank(&mut [7.0], 90.0), 7.0);
    // In any order.
    let mut ten: Vec<f64> = (1..=10).rev().map(f64::from).collect();
    let picks = (nearest_rank(&mut ten, 50.0), nearest_rank(&mut ten, 90.0), nearest_rank(&mut ten, 100.0));
    assert_eq!(picks, (5.0, 9.0, 10.0));
}

#[test]
fn its_json_form_reads_back_as_it_was_written() {
    let t = planted(&PLANTED);
    let report = launch_cost(&t, &[("A".to_string(), 0.0, 25.0)], DeviceBusy::of(&t)).unwrap();
    let json = serde_json::to_string(&as_value::to_value(&report)).unwrap();
    assert!(json.contains(r#""longest":{"#) && json.contains(r#""window":"A""#), "{json}");
    let back = as_value::deserialize(&mut serde_json::Deserializer::from_str(&json)).unwrap();
    assert_eq!(back, Some(report));
}
