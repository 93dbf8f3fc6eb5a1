//! Tests of `fold`.

use super::*;
use formats::Reader;

fn read(text: &str, chunk: usize) -> RankSummary {
    let mut r = Reader::with_sink(RankSink::new("t.json"));
    for c in text.as_bytes().chunks(chunk) {
        r.feed(c).unwrap();
    }
    r.finish().unwrap()
}

fn k(name: &str, stream: i64, ts: f64, dur: f64, args: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"stream":{stream}{args}}}}}"#
    )
}

#[test]
fn keeps_collectives_with_group_kind_bytes_and_the_compute_before_them() {
    let ar = r#","Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"dtype":"BFloat16","Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]""#;
    let events = [
        k("gemm", 7, 0.0, 10.0, ""),
        k("gemm", 7, 5.0, 10.0, ""), // overlaps: compute 0–15
        k("ncclKernel_AllReduce_RING_LL_Sum_bf16", 40, 20.0, 5.0, ar),
        k("gemm", 7, 30.0, 4.0, ""),
        k("ncclKernel_SendRecv_RING_SIMPLE", 41, 40.0, 2.0, ""),
    ];
    let text = format!(
        r#"{{"distributedInfo":{{"rank":1,"world_size":2}},"traceEvents":[{}]}}"#,
        events.iter().rev().cloned().collect::<Vec<_>>().join(",")
    );
    let s = read(&text, 13);
    assert_eq!(s.distributed.as_ref().and_then(|d| d.rank), Some(1));
    assert_eq!(s.kernels, 5);
    assert_eq!(s.collectives.len(), 2);
    let (a, b) = (&s.collectives[0], &s.collectives[1]);
    assert_eq!((a.kind, a.bytes, a.start_us, a.end_us), (CollectiveKind::AllReduce, Some(2048), 20.0, 25.0));
    assert_eq!(s.groups[a.group as usize].key, "0");
    assert_eq!(s.groups[a.group as usize].ranks, Some(vec![0, 1]));
    assert_eq!((a.lead_in_us, a.compute_before_us), (20.0, Some(15.0)));
    assert_eq!((b.kind, b.bytes), (CollectiveKind::SendRecv, None));
    assert_eq!(s.groups[b.group as usize].key, "stream 41");
    assert!(s.groups[b.group as usize].by_stream);
    assert_eq!((b.lead_in_us, b.compute_before_us), (15.0, Some(4.0)));
    let t = s.timeline().unwrap();
    assert_eq!((t.total_us, t.busy_us, t.computation_us, t.communication_us), (42.0, 26.0, 19.0, 7.0));
    assert_eq!(t.exposed_communication_us, 7.0);
    let streams: Vec<(i64, u64, f64)> = s.devices[0].streams.iter().map(|x| (x.stream, x.kernels, x.busy_us)).collect();
    assert_eq!(streams, vec![(7, 3, 19.0), (40, 1, 5.0), (41, 1, 2.0)]);
}

#[test]
fn span_set_is_an_exact_union() {
    let mut s = SpanSet::default();
    for (a, b) in [(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (2.5, 5.5), (-4.0, -1.0), (10.0, 11.0)] {
        s.add(a, b);
    }
    let i = s.intervals().unwrap();
    assert_eq!(i.length(), 3.0 + 6.0 + 1.0);
    assert_eq!(i.within(-2.0, 1.0), 2.0);
}

/// The set holds fewer disjoint spans than its cap and gives up on reaching it, before its
/// store would double; a span that merges never counts.
#[test]
fn span_set_gives_up_on_reaching_its_cap() {
    let mut s = SpanSet::default();
    let spans = limits::RANKS_COMPUTE_SPANS - 1;
    for i in 0..spans {
        s.add(2.0 * i as f64, 2.0 * i as f64 + 1.0);
    }
    s.add(0.5, 0.75);
    assert_eq!(s.intervals().map(|i| i.length()), Some(spans as f64));
    s.add(1e12, 1e12 + 1.0);
    assert!(s.intervals().is_none());
}
