//! `fusionscope ranks` and `analysis::ranks`: a job's ranks read together. The synthetic job's
//! planted skews, offsets and straggler come back exactly; shuffled and truncated rank sets
//! keep every collective matched or reported unmatched; per-rank unions equal a brute-force
//! interval count; the real multirank traces give the figures their kernels say.

use crate::common::{data, data_bytes, json, run};
use fusionscope::analysis::ranks::clock::NOTED_OFFSET_US;
use fusionscope::analysis::ranks::collectives::CollectiveKind;
use fusionscope::analysis::ranks::identity::{IdentityError, RankSource};
use fusionscope::analysis::ranks::synthetic::SyntheticJob;
use fusionscope::analysis::ranks::{job_report, JobReport, RankSummary, RanksError};
use fusionscope::analysis::{classify, Category};
use fusionscope::formats::read_trace;
use fusionscope::import::read_rank;
use fusionscope::trace::Trace;
use proptest::prelude::*;

/// Rank `r` of `job`, read as the CLI reads a file (in odd-sized slices).
pub(crate) fn summary(job: &SyntheticJob, r: u32) -> RankSummary {
    let text = job.rank_trace(r);
    read_rank(&format!("job/rank{r}.json"), text.as_bytes().chunks(7919)).unwrap()
}

fn report(job: &SyntheticJob, ranks: &[u32]) -> JobReport {
    let summaries: Vec<RankSummary> = ranks.iter().map(|&r| summary(job, r)).collect();
    job_report(&summaries).unwrap()
}

/// The length of the union of `spans` by brute force: every elementary segment between two
/// consecutive endpoints is counted when some span holds it.
fn brute_union(spans: &[(f64, f64)]) -> f64 {
    let mut points: Vec<f64> = spans.iter().flat_map(|&(s, e)| [s, e]).collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    points.windows(2).filter(|w| spans.iter().any(|&(s, e)| s <= w[0] && w[1] <= e)).map(|w| w[1] - w[0]).sum()
}

/// Brute-force busy, computation and communication of one device of a whole trace.
pub(crate) fn brute_timeline(trace: &Trace, device: i64) -> (f64, f64, f64) {
    let comm = |name: &str| classify(name).category == Category::Communication;
    let kernels = trace.kernels.iter().filter(|k| k.device == device);
    let mut busy: Vec<(f64, f64)> = kernels.clone().map(|k| (k.ts, k.ts + k.dur)).collect();
    let mut computation: Vec<(f64, f64)> =
        kernels.clone().filter(|k| !comm(trace.name(k.name))).map(|k| (k.ts, k.ts + k.dur)).collect();
    let communication: Vec<(f64, f64)> =
        kernels.filter(|k| comm(trace.name(k.name))).map(|k| (k.ts, k.ts + k.dur)).collect();
    for t in trace.transfers.iter().filter(|t| t.device == device) {
        busy.push((t.ts, t.ts + t.dur));
        if t.kind == fusionscope::trace::TransferKind::Memset {
            computation.push((t.ts, t.ts + t.dur));
        }
    }
    (brute_union(&busy), brute_union(&computation), brute_union(&communication))
}

#[track_caller]
pub(crate) fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-3 * (1.0 + b.abs() * 1e-9), "{a} != {b}");
}

#[test]
fn the_synthetic_job_gives_back_its_planted_figures() {
    let job = SyntheticJob::small();
    let r = report(&job, &[3, 1, 0, 2]);
    assert_eq!(r.world_size, Some(4));
    assert_eq!(r.ranks.iter().map(|e| e.rank).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    assert!(r.ranks.iter().all(|e| e.rank_source == RankSource::Trace));
    assert!(r.unmatched.is_empty(), "{:?}", r.unmatched);
    // Offsets against rank 0, from the collective ends.
    let offsets: Vec<f64> = r.ranks.iter().map(|e| e.clock.offset_us).collect();
    assert_eq!(offsets, vec![0.0, 120.0, 40.0, 2_500_000.0]);
    assert!(r.ranks.iter().all(|e| e.clock.max_residual_us == 0.0));
    assert!(r.notes.iter().any(|n| n.starts_with("rank 3's clock is 2.50 s from rank 0's")), "{:?}", r.notes);
    assert!(!r.notes.iter().any(|n| n.contains("rank 1's clock")), "120 µs is below {NOTED_OFFSET_US} µs");

    // Three steps of an all-reduce (group 0) and an all-gather (group 1), in time order.
    assert_eq!(r.collectives.len(), 6);
    for (i, c) in r.collectives.iter().enumerate() {
        assert_eq!((c.seq, c.ranks.clone(), c.missing_ranks), (i / 2, vec![0, 1, 2, 3], Some(0)));
        assert_eq!(c.end_spread_us, 0.0);
        if i % 2 == 0 {
            assert_eq!((c.kind, c.group.as_str(), c.bytes), (CollectiveKind::AllReduce, "0", Some(50_000_000)));
            assert_eq!(c.start_skew_us, 400.0);
            assert_eq!(
                c.wait_us.iter().map(|(r, w)| (*r, *w)).collect::<Vec<_>>(),
                vec![(0, 400.0), (1, 370.0), (2, 0.0), (3, 390.0)]
            );
            assert_eq!((c.last_rank, c.duration_us), (Some(2), 500.0));
            // 50 MB in 500 µs; bus factor 2(n−1)/n = 1.5 for 4 ranks.
            assert_eq!((c.algbw_gbps, c.busbw_gbps), (Some(100.0), Some(150.0)));
            let t0 = (job.step_start(i / 2)) as f64;
            assert_eq!(c.per_rank[2].start_us, t0 + 1400.0, "on rank 0's clock (offset 0)");
            assert_eq!(c.per_rank[0].duration_us, 900.0);
        } else {
            assert_eq!((c.kind, c.group.as_str(), c.bytes), (CollectiveKind::AllGather, "1", Some(8_000_000)));
            assert_eq!((c.start_skew_us, c.last_rank, c.duration_us), (0.0, None, 200.0));
            // 8 MB in 200 µs; (n−1)/n = 0.75.
            assert_eq!((c.algbw_gbps, c.busbw_gbps), (Some(40.0), Some(30.0)));
        }
    }
    // The straggler: 400 + 370 + 390 µs of others' wait a step; its lead-in and computation
    // against the others' mean (step 0 starts the trace: no gap before it).
    assert_eq!(r.stragglers.len(), 1);
    let s = &r.stragglers[0];
    assert_eq!((s.rank, s.caused_wait_us, s.late_collectives), (job.straggler, 3480.0, 3));
    assert_eq!((s.lead_in_us, s.others_lead_in_us), (1400.0 + 1500.0 * 2.0, 3240.0));
    assert_eq!((s.compute_before_us, s.others_compute_before_us), (Some(4200.0), Some(3040.0)));
    // Rank 1's timeline: compute 1,030 µs then the all-reduce to 1,900 µs, the all-gather 200 µs, 3 steps.
    let t = r.ranks[1].timeline.as_ref().unwrap();
    assert_eq!((t.total_us, t.busy_us, t.idle_us), (2.0 * 2210.0 + 2110.0, 6300.0, 230.0));
    assert_eq!((t.computation_us, t.communication_us, t.exposed_communication_us), (3090.0, 3210.0, 3210.0));
    assert_eq!(r.ranks[1].device.as_deref(), Some("NVIDIA H100 80GB HBM3"));
}

/// The overview of the synthetic job names what was planted, ranked by the time it explains:
/// the straggler's caused wait, the longest collective wait, the most exposed communication.
#[test]
fn the_overview_ranks_the_planted_straggler_wait_and_exposed_communication() {
    use fusionscope::analysis::findings::{ranks::ranks_overview, FindingKind};
    let job = SyntheticJob::small();
    let r = report(&job, &[0, 1, 2, 3]);
    let o = ranks_overview(&r);
    // Rank 2 computes 400 µs more a step: the others wait for it at each all-reduce.
    assert_eq!(
        o.verdict.text,
        "4 ranks of one job (world size 4) over 6.53 ms: the others wait longest for rank 2 (3.48 ms in all, at 3 collectives); each GPU busy 6.30 ms"
    );
    assert_eq!(o.verdict.sides[0].name, "rank 2");
    let of =
        |k: FindingKind| o.findings.iter().find(|f| f.kind == k).unwrap_or_else(|| panic!("{k:?}: {:?}", o.findings));
    let s = of(FindingKind::Straggler);
    assert_eq!(s.time_us, 3480.0);
    assert_eq!(
        s.text,
        "Rank 2 arrived last at 3 collectives: the other ranks waited 3.48 ms for it in all; its lead-in before them was 4.40 ms against their 3.24 ms, 4.20 ms of it computation against their 3.04 ms"
    );
    // Each step's all-reduce: 400 + 370 + 0 + 390 µs of waiting; the first of the three is named.
    let w = of(FindingKind::CollectiveWait);
    assert_eq!(w.time_us, 1160.0);
    assert_eq!(
        w.text,
        "all_reduce #0 of group 0 kept its ranks waiting 1.16 ms in all for rank 2: they started 400.00 µs apart"
    );
    // Rank 0 waits longest: (500 + 400 + 200) µs a step of communication with nothing beside it.
    let e = of(FindingKind::ExposedCommunication);
    assert_eq!(e.time_us, 3300.0);
    assert!(e.text.starts_with("Rank 0 spends 3.30 ms in communication that no computation overlaps"), "{}", e.text);
    let times: Vec<f64> = o.findings.iter().map(|f| f.time_us).collect();
    assert!(times.windows(2).all(|p| p[0] >= p[1]), "{times:?}");
}

#[test]
fn a_collective_missing_on_one_rank_leaves_its_group_unmatched_and_said() {
    let job = SyntheticJob { drop_allreduce: Some((1, 1)), ..SyntheticJob::small() };
    let r = report(&job, &[0, 1, 2, 3]);
    assert_eq!(r.unmatched.len(), 1);
    let u = &r.unmatched[0];
    assert_eq!((u.group.as_str(), u.from_seq), ("0", 0));
    assert_eq!(u.counts.iter().map(|(r, n)| (*r, *n)).collect::<Vec<_>>(), vec![(0, 3), (1, 2), (2, 3), (3, 3)]);
    assert!(u.reason.contains("different numbers of collectives"), "{}", u.reason);
    // Group 1 still matches, and aligns the clocks.
    assert!(r.collectives.iter().all(|c| c.group == "1"));
    assert_eq!(r.collectives.len(), 3);
    assert_eq!(r.ranks[3].clock.offset_us, 2_500_000.0);
    assert!(
        r.notes.iter().any(|n| n == "11 collective kernels in 1 groups not matched (see unmatched)"),
        "{:?}",
        r.notes
    );
}

#[test]
fn one_group_name_with_different_members_is_not_matched() {
    let job = SyntheticJob::small();
    let mut summaries: Vec<RankSummary> = (0..4).map(|r| summary(&job, r)).collect();
    let g = summaries[1].groups.iter_mut().find(|g| g.key == "0").unwrap();
    g.ranks = Some(vec![1, 5, 6, 7]);
    let r = job_report(&summaries).unwrap();
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(
        r.unmatched[0].reason,
        "rank 0 lists group 0's members as [0, 1, 2, 3], rank 1 as [1, 5, 6, 7]: not one group, so none of its collectives is matched"
    );
    assert!(r.collectives.iter().all(|c| c.group == "1"));
}

#[test]
fn a_rank_twice_or_files_of_other_jobs_are_refused_naming_the_files() {
    let job = SyntheticJob::small();
    let a = summary(&job, 1);
    let mut b = summary(&job, 1);
    b.file = "other/rank1.json".into();
    let e = job_report(&[a.clone(), b]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "job/rank1.json and other/rank1.json both are rank 1 (by their distributedInfo): give each rank once"
    );
    let other = SyntheticJob { world_size: 2, extra_us: vec![0, 0], offsets_us: vec![0, 0], ..SyntheticJob::small() };
    let e = job_report(&[a, summary(&other, 0)]).unwrap_err();
    assert!(matches!(e, RanksError::Identity(IdentityError::WorldSizes { first_size: 4, second_size: 2, .. })), "{e}");
    assert_eq!(job_report(&[]).unwrap_err(), RanksError::NoFiles);
}

#[test]
fn clocks_far_apart_are_said() {
    let job = SyntheticJob { offsets_us: vec![0, 0, 0, 86_400_000_000], ..SyntheticJob::small() };
    let r = report(&job, &[0, 3]);
    assert_eq!(r.ranks[1].clock.offset_us, 86_400_000_000.0);
    assert!(r.notes.iter().any(|n| n.starts_with("rank 3's clock is 86400.0 s from rank 0's: files of different jobs look like this")), "{:?}", r.notes);
    // Two of four ranks: the skew is between them alone, and the report says so.
    assert!(r.collectives.iter().all(|c| c.missing_ranks == Some(2)));
    assert!(r.notes.iter().any(|n| n.starts_with("2 of the 4 ranks given; missing: 1–2")), "{:?}", r.notes);
}

/// A job with random skews, offsets and kernel counts, and a unique straggler.
fn jobs() -> impl Strategy<Value = (SyntheticJob, Vec<u32>)> {
    (2u32..6, 1usize..4, 1usize..6, prop::collection::vec((0u64..300, 0u64..3_000_000), 6), 0u32..6, any::<u64>())
        .prop_map(|(world, steps, kernels, plan, straggler, seed)| {
            let straggler = straggler % world;
            let mut extra: Vec<u64> = plan.iter().take(world as usize).map(|p| p.0).collect();
            extra[straggler as usize] = 300 + seed % 200;
            let job = SyntheticJob {
                world_size: world,
                steps,
                kernels_per_step: kernels,
                compute_us: 777,
                extra_us: extra,
                offsets_us: plan.iter().take(world as usize).map(|p| p.1).collect(),
                straggler,
                ..SyntheticJob::small()
            };
            // A random subset of the ranks, in a random order.
            let mut order: Vec<u32> = (0..world).collect();
            let mut s = seed;
            for i in (1..order.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                order.swap(i, (s >> 33) as usize % (i + 1));
            }
            let keep = 1 + (seed >> 7) as usize % order.len();
            order.truncate(keep);
            (job, order)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn shuffled_and_truncated_rank_sets_match_every_collective_once(input in jobs()) {
        let (job, given) = input;
        let summaries: Vec<RankSummary> = given.iter().map(|&r| summary(&job, r)).collect();
        let r = job_report(&summaries).unwrap();
        // The order given does not matter.
        let mut reversed = summaries.clone();
        reversed.reverse();
        prop_assert_eq!(&job_report(&reversed).unwrap(), &r);
        // Every collective is matched once or reported unmatched.
        let total: usize = summaries.iter().map(|s| s.collectives.len()).sum();
        let matched: usize = r.collectives.iter().map(|c| c.ranks.len()).sum();
        let unmatched: usize = r.unmatched.iter().map(|u| u.counts.values().sum::<usize>()).sum();
        prop_assert_eq!(matched + unmatched, total);
        prop_assert!(r.unmatched.is_empty());
        let mut sorted = given.clone();
        sorted.sort_unstable();
        let reference = sorted[0] as usize;
        for (e, &rank) in r.ranks.iter().zip(&sorted) {
            prop_assert_eq!(e.rank, rank);
            // Planted offsets come back against the lowest rank given.
            let planted = job.offsets_us[rank as usize] as f64 - job.offsets_us[reference] as f64;
            prop_assert_eq!(e.clock.offset_us, planted);
            // The streamed unions equal a brute-force count over the rank's own kernels.
            let trace = read_trace(job.rank_trace(rank).as_bytes()).unwrap();
            let (busy, computation, communication) = brute_timeline(&trace, i64::from(rank % 8));
            let t = e.timeline.as_ref().unwrap();
            close(t.busy_us, busy);
            close(t.computation_us, computation);
            close(t.communication_us, communication);
        }
        for c in &r.collectives {
            prop_assert_eq!(&c.ranks, &sorted);
            let extra = |x: u32| job.extra_us[x as usize] as f64;
            let hi = sorted.iter().map(|&x| extra(x)).fold(0.0, f64::max);
            let lo = sorted.iter().map(|&x| extra(x)).fold(f64::INFINITY, f64::min);
            if c.kind == CollectiveKind::AllReduce {
                close(c.start_skew_us, hi - lo);
                // From the last given rank's arrival to the end, which waits for every rank.
                let all_hi = job.extra_us.iter().copied().max().unwrap() as f64;
                close(c.duration_us, job.transfer_us as f64 + all_hi - hi);
            }
        }
        // The planted straggler is named first whenever it is given with another rank.
        if given.len() >= 2 && given.contains(&job.straggler) {
            prop_assert_eq!(r.stragglers[0].rank, job.straggler);
            prop_assert_eq!(r.stragglers[0].late_collectives, job.steps);
        }
        if given.len() == 1 {
            prop_assert!(r.stragglers.is_empty());
        }
    }
}

#[test]
fn the_cli_prints_the_job_as_json_and_tables() {
    let dir = crate::common::temp_dir("ranks-cli");
    let job = SyntheticJob::small();
    let mut files = Vec::new();
    for r in 0..job.world_size {
        let p = dir.join(format!("rank{r}.json"));
        std::fs::write(&p, job.rank_trace(r)).unwrap();
        files.push(p.display().to_string());
    }
    let mut args = vec!["ranks"];
    args.extend(files.iter().map(String::as_str));
    args.push("--json");
    let v = json(&args);
    let expected = report(&job, &[0, 1, 2, 3]);
    // The CLI's JSON is the core's report (file names aside).
    assert_eq!(v["collectives"], serde_json::to_value(&expected.collectives).unwrap());
    assert_eq!(v["stragglers"], serde_json::to_value(&expected.stragglers).unwrap());
    let rank = &v["ranks"][2];
    for key in ["rank", "world_size", "file", "device", "timeline"] {
        assert!(!rank[key].is_null(), "ranks[2].{key}");
    }
    for key in ["total_us", "busy_us", "idle_us", "computation_us", "communication_us", "exposed_communication_us"] {
        assert!(rank["timeline"][key].is_number(), "timeline.{key}");
    }
    let c = &v["collectives"][0];
    for key in [
        "name",
        "group",
        "seq",
        "bytes",
        "ranks",
        "start_skew_us",
        "wait_us",
        "duration_us",
        "algbw_gbps",
        "busbw_gbps",
    ] {
        assert!(!c[key].is_null(), "collectives[0].{key}");
    }
    assert_eq!(c["wait_us"]["0"], 400.0);
    assert_eq!(v["stragglers"][0]["rank"], 2);
    assert_eq!(v["stragglers"][0]["caused_wait_us"], 3480.0);
    // The overview comes first, as the page shows it.
    let overview = fusionscope::analysis::findings::ranks::ranks_overview(&expected);
    assert_eq!(v["overview"], serde_json::to_value(&overview).unwrap());
    let page = fusionscope::view::ranks::RanksDrawn::of(&expected).unwrap();
    assert_eq!(page.overview, overview);

    let (code, text, err) = run(&args[..args.len() - 1]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with(&format!("{}\n\nFindings, ranked by the time they explain\n", overview.verdict.text)),
        "{text}"
    );
    for heading in
        ["Ranks (busiest device", "Streams", "Collectives matched across ranks (6)", "Stragglers (last to arrive"]
    {
        assert!(text.contains(heading), "{heading}: {text}");
    }
    // The same file twice: one line naming both.
    let (code, _, err) = run(&["ranks", &files[0], &files[0]]);
    assert_eq!(code, 2);
    assert!(err.contains("both are rank 0"), "{err}");
    // A file that is not a trace: named.
    let bad = dir.join("rank9.json");
    std::fs::write(&bad, "{\"traceEvents\": [}").unwrap();
    let (code, _, err) = run(&["ranks", &files[0], &bad.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("rank9.json"), "{err}");
}

#[test]
fn the_cli_on_the_shared_ranks() {
    let a = data("multirank/hta_sampled_128rank_rank0.json.gz");
    let b = data("multirank/hta_sampled_128rank_rank1.json.gz");
    let v = json(&["ranks", &b, &a, "--json"]);
    assert_eq!(v["ranks"][0]["rank"], 0);
    assert_eq!(v["ranks"][1]["world_size"], 128);
    assert_eq!(v["collectives"].as_array().unwrap().len(), 10);
    assert!(v["unmatched"].as_array().unwrap().is_empty());
}

#[test]
fn every_device_and_stream_of_one_trace_gets_its_figures() {
    use fusionscope::analysis::summary::ClassifiedTrace;
    use fusionscope::analysis::time::streams::device_streams;
    // One process driving four GPUs: the synthetic ranks' events in one trace, one clock.
    let job = SyntheticJob { offsets_us: vec![0; 4], ..SyntheticJob::small() };
    let mut events = Vec::new();
    let mut devices = Vec::new();
    for r in 0..job.world_size {
        let v: serde_json::Value = serde_json::from_str(&job.rank_trace(r)).unwrap();
        events.extend(v["traceEvents"].as_array().unwrap().iter().cloned());
        devices.extend(v["deviceProperties"].as_array().unwrap().iter().cloned());
    }
    let text = serde_json::json!({"deviceProperties": devices, "traceEvents": events}).to_string();
    let merged = read_rank("merged.json", text.as_bytes().chunks(4096)).unwrap();
    assert_eq!(merged.devices.iter().map(|d| d.pid).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    for (d, r) in merged.devices.iter().zip(0..) {
        let alone = summary(&job, r);
        assert_eq!(d, &alone.devices[0], "device {r}: the same figures as its rank's own trace");
        assert_eq!(d.timeline.device, "NVIDIA H100 80GB HBM3");
    }
    // The whole-trace path gives each stream the same figures as the fold.
    let trace = read_trace(text.as_bytes()).unwrap();
    let side = ClassifiedTrace::new(&trace);
    let whole = device_streams(&side);
    assert_eq!(whole.len(), 4);
    for (w, d) in whole.iter().zip(&merged.devices) {
        assert_eq!((w.pid, &w.streams), (d.pid, &d.streams));
    }
    // `trace --json`: a timeline for every device (each named) and every device's streams.
    let dir = crate::common::temp_dir("ranks-merged");
    let path = dir.join("merged.json");
    std::fs::write(&path, &text).unwrap();
    let v = json(&["trace", path.to_str().unwrap(), "--json"]);
    assert_eq!(v["other_devices"].as_array().unwrap().len(), 3);
    assert_eq!(v["streams"].as_array().unwrap().len(), 4);
    assert_eq!(v["streams"][3]["streams"], serde_json::to_value(&merged.devices[3].streams).unwrap());
}

#[test]
fn the_whole_trace_streams_equal_the_streamed_folds_on_real_traces() {
    use fusionscope::analysis::summary::ClassifiedTrace;
    use fusionscope::analysis::time::streams::device_streams;
    for rel in [
        "multirank/hta_sampled_128rank_rank0.json.gz",
        "multirank/hta_nccl_a100_rank0_of2.json.gz",
        "traces/nvidia/hta_a100_compiled_rank0.json.gz",
        "traces/amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz",
    ] {
        let bytes = data_bytes(rel);
        let folded = read_rank(rel, bytes.chunks(50_000)).unwrap();
        let trace = read_trace(&bytes).unwrap();
        let whole = device_streams(&ClassifiedTrace::new(&trace));
        assert_eq!(whole.len(), folded.devices.len(), "{rel}");
        for (w, d) in whole.iter().zip(&folded.devices) {
            assert_eq!(w.streams, d.streams, "{rel}");
            assert_eq!(w.device, d.timeline.device, "{rel}");
        }
        assert!(whole[0].streams.len() >= 2, "{rel}: several streams");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// A collective missing on any one rank is never matched by guess: its whole group is
    /// reported unmatched with the counts, and the other group still matches.
    #[test]
    fn a_missing_collective_is_reported_never_matched(input in jobs(), which in any::<u32>(), step in any::<usize>()) {
        let (job, given) = input;
        prop_assume!(given.len() >= 2);
        let rank = given[which as usize % given.len()];
        let job = SyntheticJob { drop_allreduce: Some((rank, step % job.steps)), ..job };
        let r = report(&job, &given);
        prop_assert!(r.collectives.iter().all(|c| c.group == "1"));
        prop_assert_eq!(r.collectives.len(), job.steps);
        prop_assert_eq!(r.unmatched.len(), 1);
        let counts = &r.unmatched[0].counts;
        prop_assert_eq!(counts.len(), given.len());
        for (&x, &n) in counts {
            prop_assert_eq!(n, if x == rank { job.steps - 1 } else { job.steps });
        }
    }
}

#[test]
fn odd_args_and_missing_identity_read_without_a_wrong_figure() {
    // No distributedInfo: ranks from the file names, else the order given. Collective args of
    // the wrong types read as absent (no size, group by stream), never as a wrong number.
    let kernel = |ts: f64, args: &str| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":9,"ts":{ts},"dur":10,"args":{{"stream":9{args}}}}}"#
        )
    };
    let odd = r#","In msg nelems":"many","dtype":"Quaternion","Process Group Ranks":"[0, -1]","Group size":-3"#;
    let text = |info: &str| {
        format!(
            r#"{{{info}"traceEvents":[{},{}]}}"#,
            kernel(100.0, odd),
            kernel(200.0, r#","In msg nelems":1e30,"dtype":"Float""#)
        )
    };
    let a = read_rank("dir/job_rank1.json", text("").as_bytes().chunks(17)).unwrap();
    let b = read_rank("dir/other.json", text(r#""distributedInfo": [1, 2], "#).as_bytes().chunks(17)).unwrap();
    assert_eq!(
        b.notes,
        vec!["distributedInfo is not an object of rank, world_size and pg_config: ignored".to_string()]
    );
    assert!(a.collectives.iter().all(|c| c.bytes.is_none() && c.kind == CollectiveKind::AllReduce));
    // `Process Group Ranks` that is not a list of ranks, a negative group size: unknown.
    assert_eq!(a.groups.len(), 1);
    assert_eq!((a.groups[0].key.as_str(), a.groups[0].ranks.as_ref(), a.groups[0].size), ("stream 9", None, None));
    let r = job_report(&[b, a]).unwrap();
    let ids: Vec<(u32, RankSource, &str)> = r.ranks.iter().map(|e| (e.rank, e.rank_source, e.file.as_str())).collect();
    assert_eq!(ids, vec![(0, RankSource::Order, "dir/other.json"), (1, RankSource::FileName, "dir/job_rank1.json")]);
    assert_eq!(r.world_size, None);
    // Both ran the same two all-reduces on stream 9 at the same times: matched, no skew.
    assert_eq!(r.collectives.len(), 2);
    assert!(r.collectives.iter().all(|c| c.start_skew_us == 0.0 && c.algbw_gbps.is_none() && c.group_size.is_none()));
    assert!(r.stragglers.is_empty());
}
