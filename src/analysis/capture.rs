//! Graph-capture traces joined to graph replays (`docs/trace-analysis.md`, "Capture traces").
//!
//! A serving engine records its CUDA/HIP graphs once (stream capture) and then replays them.
//! In a trace of the replays the kernels run, but none is linked to a CPU op: one graph launch
//! stands for them all. In a trace taken *while the graph was captured* the CPU ops run, with
//! their recorded shapes, and each launch call inside the capture window is a node of the graph
//! (on ROCm the call names its kernel), but no kernel runs. A graph replays its nodes in the
//! order they were captured, so the k-th kernel of a replay is the k-th launch of its capture:
//! [`attribute`] joins the two by that position, and the replay trace gains, for every replay,
//! a copy of the captured ops with their shapes, linked to that replay's kernels. Everything
//! downstream (the per-op table, the op-anchored mapping of a comparison) then works on graph
//! replays as on eager traces.
//!
//! Which captured graph a replay is: the one whose launches name the same kernels in the same
//! order. Several captures with the same sequence (a piecewise graph per layer) are taken in
//! turn, the n-th replay of a sequence going to its n-th capture modulo their number. Where the
//! capture trace does not name kernels (CUDA's launch calls carry no kernel name), a replay goes
//! to a graph with as many launches, and the report says it was matched by count.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use limits::CAPTURE_COPIED_OPS;
use trace::intern::NameId;
use trace::{CpuOp, OpLinks, RecordedShapes, Trace};

/// How the replays of one trace were joined to the graphs of a capture trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureReport {
    /// Graphs captured in the capture trace (stream-capture windows with launches).
    pub graphs_captured: usize,
    /// Graph launches in the replay trace whose kernels were found.
    pub replays: usize,
    /// Replays joined to a captured graph.
    pub replays_matched: usize,
    /// Kernels of the replays, and those now attributed to a captured op.
    pub replay_kernels: usize,
    pub kernels_attributed: usize,
    /// Replays matched by their number of launches only (the capture names no kernels).
    pub matched_by_count: usize,
}

/// Why a capture trace could not be joined to a replay trace.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CaptureError {
    #[error(
        "the capture trace has no graph capture: no cudaStreamBeginCapture/hipStreamBeginCapture ... \
         EndCapture window with launches in it (was it recorded while the graphs were captured?)"
    )]
    NoCapture,
    #[error("the replay trace has no graph launch (cudaGraphLaunch/hipGraphLaunch) whose kernels it recorded")]
    NoReplay,
    #[error(
        "none of the {replays} graph replays matches one of the {graphs} captured graphs: their kernel \
         sequences differ (was the capture taken with the same batch size and build?)"
    )]
    NoMatch { replays: usize, graphs: usize },
    #[error("joining would copy more than {limit} captured ops (replays × ops per graph)")]
    TooManyOps { limit: usize },
    #[error("External ids would pass 2^64 while numbering the copied ops")]
    IdOverflow,
}

/// One captured graph: its window and, per launch in order, the kernel named and the op.
struct CapturedGraph {
    begin: f64,
    end: f64,
    tid: i64,
    first_launch_ts: f64,
    kernels: Vec<Option<NameId>>,
    ops: Vec<Option<usize>>,
}

/// The graphs of a capture trace, in capture order.
fn captured_graphs(capture: &Trace) -> Vec<CapturedGraph> {
    let mut calls: Vec<_> = capture.launches.values().collect();
    calls.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let links = OpLinks::new(capture);
    let mut graphs = Vec::new();
    // Open windows per thread: (begin, the graph's launches so far).
    let mut open: FxHashMap<i64, CapturedGraph> = FxHashMap::default();
    for call in calls {
        let name = capture.name(call.name);
        if name.ends_with("StreamBeginCapture") {
            open.insert(
                call.tid,
                CapturedGraph {
                    begin: call.ts,
                    end: call.ts,
                    tid: call.tid,
                    first_launch_ts: call.ts,
                    kernels: Vec::new(),
                    ops: Vec::new(),
                },
            );
        } else if name.ends_with("StreamEndCapture") {
            if let Some(mut g) = open.remove(&call.tid) {
                g.end = call.ts;
                if !g.ops.is_empty() {
                    graphs.push(g);
                }
            }
        } else if let Some(g) = open.get_mut(&call.tid) {
            if call.kernel.is_some() || name.contains("LaunchKernel") {
                if g.ops.is_empty() {
                    g.first_launch_ts = call.ts;
                }
                g.kernels.push(call.kernel);
                g.ops.push(links.op_of_launch(call));
            }
        }
    }
    graphs
}

/// The kernels of each graph launch in the replay trace (indices into `kernels`, in start
/// order), in launch order.
fn replays(replay: &Trace) -> Vec<Vec<usize>> {
    let mut index: FxHashMap<u64, usize> = FxHashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (k, kernel) in replay.kernels.iter().enumerate() {
        let Some(c) = kernel.correlation.filter(|_| kernel.external_id.is_none()) else { continue };
        let Some(launch) = replay.launches.get(&c) else { continue };
        if !replay.name(launch.name).contains("GraphLaunch") {
            continue;
        }
        let next = groups.len();
        let g = *index.entry(c).or_insert(next);
        if g == next {
            groups.push(Vec::new());
        }
        groups[g].push(k);
    }
    groups
}

/// Copies `ops` of the capture trace into `out` for one replay, shifted in time by `delta`,
/// with fresh External ids; returns the new id of each copied op.
struct Copier<'a> {
    capture: &'a Trace,
    names: FxHashMap<NameId, NameId>,
    tids: FxHashMap<i64, i64>,
    next_tid: i64,
    next_id: u64,
    copied: usize,
}

impl Copier<'_> {
    fn name(&mut self, out: &mut Trace, id: NameId) -> NameId {
        let capture = self.capture;
        *self.names.entry(id).or_insert_with(|| out.names.intern(capture.name(id)))
    }

    fn copy(&mut self, out: &mut Trace, op: &CpuOp, delta: f64) -> Result<u64, CaptureError> {
        self.copied += 1;
        if self.copied > CAPTURE_COPIED_OPS {
            return Err(CaptureError::TooManyOps { limit: CAPTURE_COPIED_OPS });
        }
        let id = self.next_id;
        self.next_id = id.checked_add(1).ok_or(CaptureError::IdOverflow)?;
        let next_tid = &mut self.next_tid;
        let tid = *self.tids.entry(op.tid).or_insert_with(|| {
            *next_tid += 1;
            *next_tid
        });
        let shapes = RecordedShapes {
            dims: op.shapes.dims.map(|n| self.name(out, n)),
            types: op.shapes.types.map(|n| self.name(out, n)),
            concrete: op.shapes.concrete.map(|n| self.name(out, n)),
            strides: op.shapes.strides.map(|n| self.name(out, n)),
        };
        let name = self.name(out, op.name);
        out.cpu_ops.push(CpuOp {
            name,
            ts: op.ts + delta,
            dur: op.dur,
            tid,
            pid: op.pid,
            external_id: id,
            annotation: false,
            shapes,
        });
        Ok(id)
    }
}

/// The number of graphs captured, when `trace` is a graph-capture trace: it has stream-capture
/// windows, and more launches were captured in them than kernels ran (a capture trace's graphs
/// do not run; a trace that captures its graphs and then runs its workload is an ordinary
/// trace). `None` otherwise.
pub fn captured_graph_count(trace: &Trace) -> Option<usize> {
    let begin = ["cudaStreamBeginCapture", "hipStreamBeginCapture"].map(|n| trace.names.get(n));
    if begin.iter().all(Option::is_none) {
        return None;
    }
    let graphs = captured_graphs(trace);
    let launches: usize = graphs.iter().map(|g| g.ops.len()).sum();
    (launches > trace.kernels.len()).then_some(graphs.len())
}

/// The replay trace with each replayed kernel attributed to the captured op at its position in
/// its graph (module docs), and how many were.
pub fn attribute(replay: &Trace, capture: &Trace) -> Result<(Trace, CaptureReport), CaptureError> {
    let graphs = captured_graphs(capture);
    if graphs.is_empty() {
        return Err(CaptureError::NoCapture);
    }
    let groups = replays(replay);
    if groups.is_empty() {
        return Err(CaptureError::NoReplay);
    }
    let named = |g: &CapturedGraph| g.kernels.iter().all(Option::is_some);
    // Graphs by their kernel names (as text: the two traces intern names apart), else by count.
    let mut by_names: FxHashMap<Vec<&str>, Vec<usize>> = FxHashMap::default();
    let mut by_count: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for (i, g) in graphs.iter().enumerate() {
        if named(g) {
            let key = g.kernels.iter().flatten().map(|&n| capture.name(n)).collect();
            by_names.entry(key).or_default().push(i);
        } else {
            by_count.entry(g.ops.len()).or_default().push(i);
        }
    }
    // Captured ops by start time, for each window's ops.
    let mut starts: Vec<usize> = (0..capture.cpu_ops.len()).filter(|&i| !capture.cpu_ops[i].annotation).collect();
    starts.sort_by(|&a, &b| capture.cpu_ops[a].ts.total_cmp(&capture.cpu_ops[b].ts));
    let window_ops: Vec<Vec<usize>> = graphs
        .iter()
        .map(|g| {
            let from = starts.partition_point(|&i| capture.cpu_ops[i].ts < g.begin);
            starts[from..]
                .iter()
                .copied()
                .take_while(|&i| capture.cpu_ops[i].ts <= g.end)
                .filter(|&i| {
                    let op = &capture.cpu_ops[i];
                    op.tid == g.tid && op.ts + op.dur <= g.end
                })
                .collect()
        })
        .collect();

    let mut out = replay.clone();
    let max_id = replay
        .cpu_ops
        .iter()
        .map(|o| o.external_id)
        .chain(replay.kernels.iter().filter_map(|k| k.external_id))
        .chain(replay.transfers.iter().filter_map(|t| t.external_id))
        .chain(replay.launches.values().filter_map(|l| l.external_id))
        .max()
        .unwrap_or(0);
    let max_tid =
        replay.cpu_ops.iter().map(|o| o.tid).chain(replay.launches.values().map(|l| l.tid)).max().unwrap_or(0);
    let mut copier = Copier {
        capture,
        names: FxHashMap::default(),
        tids: FxHashMap::default(),
        next_tid: max_tid,
        next_id: max_id.checked_add(1).ok_or(CaptureError::IdOverflow)?,
        copied: 0,
    };
    let mut report = CaptureReport { graphs_captured: graphs.len(), replays: groups.len(), ..Default::default() };
    let mut turns: FxHashMap<usize, usize> = FxHashMap::default();
    for group in &groups {
        report.replay_kernels += group.len();
        let names: Vec<&str> = group.iter().map(|&k| replay.name(replay.kernels[k].name)).collect();
        let (candidates, counted) = match by_names.get(&names) {
            Some(c) => (c, false),
            None => match by_count.get(&group.len()) {
                Some(c) => (c, true),
                None => continue,
            },
        };
        let turn = turns.entry(candidates[0]).or_insert(0);
        let g = candidates[*turn % candidates.len()];
        *turn += 1;
        let graph = &graphs[g];
        let delta = replay.kernels[group[0]].ts - graph.first_launch_ts;
        // Each replay gets its own copy of the graph's ops: a call per replay, as when eager.
        let mut new_ids: FxHashMap<usize, u64> = FxHashMap::default();
        for &i in &window_ops[g] {
            new_ids.insert(i, copier.copy(&mut out, &capture.cpu_ops[i], delta)?);
        }
        for (&k, op) in group.iter().zip(&graph.ops) {
            let Some(op) = *op else { continue };
            let id = match new_ids.get(&op) {
                Some(&id) => id,
                // A launching op that outlives the window (not nested in it) is copied alone.
                None => {
                    let id = copier.copy(&mut out, &capture.cpu_ops[op], delta)?;
                    new_ids.insert(op, id);
                    id
                }
            };
            out.kernels[k].external_id = Some(id);
            report.kernels_attributed += 1;
        }
        report.replays_matched += 1;
        report.matched_by_count += usize::from(counted);
    }
    if report.replays_matched == 0 {
        return Err(CaptureError::NoMatch { replays: groups.len(), graphs: graphs.len() });
    }
    // cpu_ops are kept in start order (a comparison orders op calls by index).
    out.cpu_ops.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    Ok((out, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::op_table::op_table;
    use formats::read_trace;

    /// A capture trace: per graph, a capture window on thread 1 holding, per node, a `cpu_op`
    /// (External id, with dims) and the launch call it made (naming its kernel when `named`).
    fn capture(graphs: &[&[(&str, &str)]], named: bool) -> Trace {
        let (mut ev, mut t, mut id) = (Vec::new(), 0.0, 100u64);
        let call = |ev: &mut Vec<String>, name: &str, ts: f64, args: String| {
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":1,"args":{{{args}}}}}"#));
        };
        for nodes in graphs {
            call(&mut ev, "hipStreamBeginCapture", t, format!(r#""correlation":{id}"#));
            id += 1;
            for (op, kernel) in nodes.iter() {
                t += 10.0;
                ev.push(format!(
                    r#"{{"ph":"X","cat":"cpu_op","name":"{op}","pid":1,"tid":1,"ts":{t},"dur":5,"args":{{"External id":{id},"Input Dims":[[{id}]]}}}}"#
                ));
                let kernel = if named { format!(r#","kernel":"{kernel}""#) } else { String::new() };
                call(
                    &mut ev,
                    "hipLaunchKernel",
                    t + 1.0,
                    format!(r#""External id":{id},"correlation":{}{kernel}"#, id + 1),
                );
                id += 2;
            }
            t += 10.0;
            call(&mut ev, "hipStreamEndCapture", t, format!(r#""correlation":{id}"#));
            id += 1;
            t += 100.0;
        }
        read_trace(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    /// A replay trace: per graph launch, its kernels under the launch's correlation id; an
    /// eager op with External id 1 runs first.
    fn replay(launches: &[&[&str]]) -> Trace {
        let mut ev = vec![
            r#"{"ph":"X","cat":"cpu_op","name":"eager","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":1}}"#
                .to_string(),
            r#"{"ph":"X","cat":"kernel","name":"eager_k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"External id":1,"correlation":1}}"#
                .to_string(),
        ];
        let mut t = 10.0;
        for (i, kernels) in launches.iter().enumerate() {
            let c = 1000 + i;
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","pid":1,"tid":1,"ts":{t},"dur":1,"args":{{"correlation":{c}}}}}"#));
            for k in kernels.iter() {
                t += 3.0;
                ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"{k}","pid":0,"tid":7,"ts":{t},"dur":2,"args":{{"correlation":{c}}}}}"#));
            }
            t += 50.0;
        }
        read_trace(format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    fn calls(t: &Trace) -> Vec<(String, u64)> {
        let table = op_table(
            &crate::summary::ClassifiedTrace::new(t),
            None,
            &|_, _| Err(String::new()),
            &crate::time::recorded_cost::NoCallCosts,
            None,
        );
        let mut v: Vec<(String, u64)> =
            table.rows.iter().map(|r| (format!("{} {}", r.op, r.input_dims), r.calls)).collect();
        v.sort();
        v
    }

    #[test]
    fn each_replay_gets_its_own_calls_of_the_captured_ops() {
        let cap = capture(&[&[("aten::mm", "gemm"), ("aten::add", "add")]], true);
        let rep = replay(&[&["gemm", "add"], &["gemm", "add"], &["gemm", "add"]]);
        let (joined, report) = attribute(&rep, &cap).unwrap();
        assert_eq!((report.replays, report.replays_matched, report.kernels_attributed), (3, 3, 6));
        assert_eq!(
            calls(&joined),
            vec![("aten::add [[103]]".into(), 3), ("aten::mm [[101]]".into(), 3), ("eager null".into(), 1)]
        );
        // Fresh ids: the eager op keeps its kernel, and every copy is a distinct id.
        let ids: std::collections::BTreeSet<u64> = joined.cpu_ops.iter().map(|o| o.external_id).collect();
        assert_eq!(ids.len(), joined.cpu_ops.len());
        assert!(joined.cpu_ops.windows(2).all(|w| w[0].ts <= w[1].ts), "ops stay in start order");
    }

    #[test]
    fn replays_find_their_graph_by_kernel_names_and_identical_captures_take_turns() {
        let a: &[(&str, &str)] = &[("attn_piece", "k1"), ("mlp", "k2")];
        let b: &[(&str, &str)] = &[("other", "k3")];
        let cap = capture(&[a, b, a], true);
        let rep = replay(&[&["k1", "k2"], &["k3"], &["k1", "k2"], &["k9"]]);
        let (joined, report) = attribute(&rep, &cap).unwrap();
        assert_eq!((report.graphs_captured, report.replays, report.replays_matched), (3, 4, 3));
        assert_eq!((report.replay_kernels, report.kernels_attributed), (6, 5));
        // The two k1,k2 replays went to the first and the third capture (ops 101, 103 and
        // 111, 113), one call each; k9 was captured nowhere.
        let expected =
            ["attn_piece [[101]]", "attn_piece [[111]]", "eager null", "mlp [[103]]", "mlp [[113]]", "other [[107]]"];
        assert_eq!(calls(&joined), expected.map(|k| (k.to_string(), 1)).to_vec());
    }

    #[test]
    fn a_capture_trace_is_told_from_a_replay() {
        let cap = capture(&[&[("aten::mm", "gemm")]], true);
        assert_eq!(captured_graph_count(&cap), Some(1));
        assert_eq!(captured_graph_count(&replay(&[&["gemm"]])), None);
    }

    #[test]
    fn captures_that_name_no_kernels_match_by_launch_count() {
        let cap = capture(&[&[("aten::mm", ""), ("aten::add", "")]], false);
        let (joined, report) = attribute(&replay(&[&["gemm", "add"]]), &cap).unwrap();
        assert_eq!((report.replays_matched, report.matched_by_count), (1, 1));
        assert_eq!(calls(&joined).len(), 3);
        let err = attribute(&replay(&[&["gemm"]]), &cap).unwrap_err();
        assert_eq!(err, CaptureError::NoMatch { replays: 1, graphs: 1 });
    }
}
