//! `fusionscope ranks` on the real multirank traces: the two ranks of a 128-rank job, rank 0 of
//! an A100 job with its process group, and each rank's idle split by cause.

use crate::common::{data, data_bytes, json};
use crate::trace_ranks::{brute_timeline, close, summary};
use fusionscope::analysis::findings::ranks::ranks_overview;
use fusionscope::analysis::ranks::collectives::CollectiveKind;
use fusionscope::analysis::ranks::synthetic::SyntheticJob;
use fusionscope::analysis::ranks::{job_report, RankSummary};
use fusionscope::formats::read_trace;
use fusionscope::import::read_rank;

#[test]
fn the_two_ranks_of_the_128_rank_job() {
    let read = |r: u32| {
        let rel = format!("multirank/hta_sampled_128rank_rank{r}.json.gz");
        read_rank(&rel, data_bytes(&rel).chunks(65_536)).unwrap()
    };
    let (r0, r1) = (read(0), read(1));
    let r = job_report(&[r1.clone(), r0.clone()]).unwrap();
    assert_eq!(r.world_size, Some(128));
    assert_eq!(r.ranks.iter().map(|e| (e.rank, e.collectives)).collect::<Vec<_>>(), vec![(0, 10), (1, 10)]);
    // No process groups recorded: the SendRecv kernels are matched by stream, 8 on 84, 2 on 203.
    let on = |g: &str| r.collectives.iter().filter(|c| c.group == g).count();
    assert_eq!((on("stream 84"), on("stream 203"), r.collectives.len()), (8, 2, 10));
    assert!(r
        .collectives
        .iter()
        .all(|c| c.kind == CollectiveKind::SendRecv && c.bytes.is_none() && c.busbw_gbps.is_none()));
    assert!(r.notes.iter().any(|n| n == "2 of the 128 ranks given; missing: 2–127"), "{:?}", r.notes);
    // Point-to-point kernels do not end together: the report says the offset is rough.
    assert!(r.ranks[1].clock.point_to_point);
    assert!(r.notes.iter().any(|n| n.contains("only point-to-point kernels are shared")), "{:?}", r.notes);
    // Figures from the kernels themselves: each pair's skew and waits on the aligned clock
    // (these traces' times are near 1.7e15 µs, where an f64 holds quarter microseconds).
    let off = r.ranks[1].clock.offset_us;
    let near = |a: f64, b: f64| assert!((a - b).abs() <= 0.5, "{a} != {b}");
    for c in &r.collectives {
        let (a, b) = (&c.per_rank[0], &c.per_rank[1]);
        near(c.start_skew_us, (a.start_us - b.start_us).abs());
        near(c.wait_us[&0] + c.wait_us[&1], c.start_skew_us);
        near(c.duration_us, a.end_us.max(b.end_us) - a.start_us.max(b.start_us));
    }
    let seq = |s: &RankSummary, g: &str| -> Vec<(f64, f64)> {
        s.collectives.iter().filter(|c| s.groups[c.group as usize].key == g).map(|c| (c.start_us, c.end_us)).collect()
    };
    let (s0, s1) = (seq(&r0, "stream 84"), seq(&r1, "stream 84"));
    let first = r.collectives.iter().find(|c| c.group == "stream 84" && c.seq == 0).unwrap();
    near(first.per_rank[0].start_us, s0[0].0);
    near(first.per_rank[1].start_us, s1[0].0 - off);
    // The busiest device's timeline equals the brute-force unions of the trace's kernels.
    for (e, rel) in r.ranks.iter().zip(["hta_sampled_128rank_rank0", "hta_sampled_128rank_rank1"]) {
        let trace = read_trace(&data_bytes(&format!("multirank/{rel}.json.gz"))).unwrap();
        let (busy, computation, communication) = brute_timeline(&trace, e.devices[0].pid);
        let t = e.timeline.as_ref().unwrap();
        close(t.busy_us, busy);
        close(t.computation_us, computation);
        close(t.communication_us, communication);
    }
    // Stragglers: every matched pair had one last rank; their caused waits sum to all the waits.
    let waits: f64 = r.collectives.iter().map(|c| c.start_skew_us).sum();
    near(r.stragglers.iter().map(|s| s.caused_wait_us).sum(), waits);
    assert_eq!(r.stragglers.iter().map(|s| s.late_collectives).sum::<usize>(), 10);
}

#[test]
fn rank_0_of_the_a100_job_with_its_process_group() {
    let rel = "multirank/hta_nccl_a100_rank0_of2.json.gz";
    let s = read_rank(rel, data_bytes(rel).chunks(100_000)).unwrap();
    let info = s.distributed.as_ref().unwrap();
    assert_eq!((info.rank, info.world_size, info.nccl_version.as_deref()), (Some(0), Some(2), Some("2.17.1")));
    assert_eq!(s.groups.len(), 1);
    assert_eq!(
        (s.groups[0].key.as_str(), s.groups[0].desc.as_deref(), s.groups[0].size),
        ("0", Some("default_pg"), Some(2))
    );
    assert_eq!(s.groups[0].ranks, Some(vec![0, 1]));
    let r = job_report(std::slice::from_ref(&s)).unwrap();
    assert_eq!(r.collectives.len(), 21);
    // Every NCCL kernel, checked against its own args: bytes = nelems × 4 (Float), one rank's
    // duration, algbw = bytes / duration, busbw = algbw × the factor for a group of 2.
    let trace = read_trace(&data_bytes(rel)).unwrap();
    let nccl: Vec<_> = trace.kernels.iter().filter(|k| trace.name(k.name).starts_with("nccl")).collect();
    assert_eq!(nccl.len(), 21);
    let text = String::from_utf8(crate::common::gunzip(&data_bytes(rel))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut args: Vec<(f64, u64, String, u64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"].as_str().unwrap().starts_with("nccl"))
        .map(|e| {
            let a = &e["args"];
            let size = match a["dtype"].as_str().unwrap() {
                "Float" => 4,
                "Long" => 8,
                other => panic!("dtype {other}"),
            };
            (
                e["ts"].as_f64().unwrap(),
                a["In msg nelems"].as_u64().unwrap(),
                a["Collective name"].as_str().unwrap().to_string(),
                size,
            )
        })
        .collect();
    args.sort_by(|a, b| a.0.total_cmp(&b.0));
    for ((c, k), (_, nelems, name, size)) in r.collectives.iter().zip(&nccl).zip(&args) {
        let bytes = nelems * size;
        assert_eq!(c.bytes, Some(bytes));
        assert_eq!(c.kind, CollectiveKind::of_name(name));
        close(c.duration_us, k.dur);
        let alg = bytes as f64 / (k.dur * 1e3);
        close(c.algbw_gbps.unwrap(), alg);
        // Group of 2: all-reduce 2(n−1)/n = 1, broadcast 1.
        close(c.busbw_gbps.unwrap(), alg);
        assert_eq!((c.ranks.clone(), c.missing_ranks, c.start_skew_us, c.last_rank), (vec![0], Some(1), 0.0, None));
    }
    assert!(r.stragglers.is_empty());
    assert!(r.notes.iter().any(|n| n == "1 of the 2 ranks given; missing: 1"), "{:?}", r.notes);
    // One rank given: counted as one, and no straggler looked for among others that are absent.
    let verdict = ranks_overview(&r).verdict.text;
    assert!(
        verdict.starts_with("1 rank of one job (world size 2) over 660.55 ms: one rank alone has no other"),
        "{verdict}"
    );
    // Several devices listed, kernels on one: its timeline is the brute-force one.
    let (busy, computation, communication) = brute_timeline(&trace, 0);
    let t = r.ranks[0].timeline.as_ref().unwrap();
    close(t.busy_us, busy);
    close(t.computation_us, computation);
    close(t.communication_us, communication);
    assert_eq!(r.ranks[0].device.as_deref(), Some("NVIDIA A100-PG509-200"));
}

/// Each rank's idle split by cause, folded as its file streams, is the whole trace's (which
/// equals HolisticTraceAnalysis's, `tests/trace_waits.rs`), on the real multirank traces and
/// the synthetic job; `ranks --json` gives it per rank.
#[test]
fn each_ranks_waits_are_its_whole_traces() {
    use fusionscope::analysis::time::waits::{waits, Waits};
    let files = [
        "multirank/hta_nccl_a100_rank0_of2.json.gz",
        "multirank/hta_sampled_128rank_rank0.json.gz",
        "multirank/hta_sampled_128rank_rank1.json.gz",
    ];
    for rel in files {
        let bytes = data_bytes(rel);
        let folded = read_rank(rel, bytes.chunks(65_536)).unwrap();
        let whole = waits(&read_trace(&bytes).unwrap(), &[]).map(|w| Waits { steps: Vec::new(), ..w });
        assert!(whole.as_ref().is_some_and(|w| w.host_wait_us > 0.0), "{rel}: some host wait to compare");
        assert_eq!(folded.waits, whole, "{rel}");
        assert!(folded.notes.is_empty(), "{rel}: {:?}", folded.notes);
    }
    let job = SyntheticJob::small();
    for r in 0..job.world_size {
        let whole =
            waits(&read_trace(job.rank_trace(r).as_bytes()).unwrap(), &[]).map(|w| Waits { steps: Vec::new(), ..w });
        assert_eq!(summary(&job, r).waits, whole, "synthetic rank {r}");
    }
    let v = json(&["ranks", "--json", &data(files[1]), &data(files[2])]);
    for rank in v["ranks"].as_array().unwrap() {
        let host = rank["waits"]["host_wait_us"].as_f64().unwrap();
        let streams: f64 =
            rank["waits"]["streams"].as_array().unwrap().iter().map(|s| s["host_wait_us"].as_f64().unwrap()).sum();
        assert!(host > 0.0 && (host - streams).abs() < 1e-2, "{rank}");
    }
}
