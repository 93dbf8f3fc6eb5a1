//! The messages between the page and its analysis worker, as two enums both sides use: the
//! page sends a [`Request`], the worker answers with [`Reply`]s. They cross as JavaScript
//! values made by `serde-wasm-bindgen` (`web::worker_client` and `web::reader_worker`), so a
//! message the other side does not understand is a decoding error, not a silently missing field.
//!
//! A file to open travels beside its request (a `Blob` is not data serde can carry): the
//! message is the array `[request, file]`. Large results (a trace's summary, a comparison, a
//! graph and its analysis) travel as [`Json`] text: the page decodes them with the same
//! `serde_json` it uses for share links, in steps between which it can draw frames, and does
//! not link a second decoder for the same types.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use analysis::pipeline::TraceTime;
use analysis::provenance::CompiledKernels;
use analysis::ranks::RankSummary;
use analysis::{Comparison, TraceSummary};
use fusion::json::GraphFile;
use fusion::AnalysisReport;
use view::ranks::RanksDrawn;

/// What the page asks of the worker. Every request names its job (a page-wide unique id); the
/// replies to it carry the same id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Read, open and analyse the file sent beside this request. With `hand_back`, a trace is
    /// not kept but sent back as bytes with its results ([`Reply::Parsed`]): the page's second
    /// worker reads one file while the first reads another, and hands its trace to the first.
    Open {
        job: u32,
        name: String,
        #[serde(default)]
        hand_back: bool,
    },
    /// Keep a trace another worker read and analysed (its [`Reply::Parsed`]), as if this
    /// worker had opened the file: the replies are those of `Open`.
    Adopt {
        job: u32,
        name: String,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
        summary: Json<TraceSummary>,
        time: Json<TraceTime>,
        /// Its rank summary, read with it (`Reply::Parsed`).
        #[serde(default)]
        rank: Option<Json<RankSummary>>,
    },
    /// Stop reading `job` at the next slice; nothing of the file is kept.
    Cancel { job: u32 },
    /// Compare two traces the worker holds (the ids of the jobs that opened them).
    Compare { job: u32, a: u32, b: u32 },
    /// Drop the trace opened by `job` (the page no longer lists it).
    Forget { job: u32 },
    /// The job report (`fusionscope ranks`) of the held traces among `ids` that are ranks of
    /// a distributed job (a `distributedInfo`, or a rank in the file name), in that order.
    Ranks { job: u32, ids: Vec<u32> },
}

/// What the worker sends back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The worker listens: requests sent before this would have been lost.
    Ready,
    /// Bytes of the file read so far, and the worker's memory (bytes), so that the page can
    /// tell a worker that dies at 4 GiB ran out of memory.
    Progress { job: u32, done: f64, total: f64, memory: f64 },
    /// The worker saw the Cancel of `job` and dropped what it had read.
    Cancelled { job: u32 },
    /// A trace, kept by the worker under `job`; only its summary crosses.
    Trace { job: u32, summary: Json<TraceSummary>, time: Json<TraceTime> },
    /// An op graph in its file form and its analysis.
    Graph { job: u32, graph: Json<GraphFile>, report: Json<AnalysisReport> },
    /// A small file the page opens itself (see `FileKind::analysed_off_the_page`): its bytes,
    /// all of them, or the head of an unrecognised file.
    Bytes {
        job: u32,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// A graph-capture trace (`analysis::capture`), kept by the worker to give its ops to the
    /// replays it belongs to: `joined` has, by trace id, the new report of each trace it held
    /// that the capture was joined to (a replay opened later is joined as it opens).
    Capture { job: u32, graphs: u32, joined: Vec<(u32, Json<TraceTime>)> },
    /// A PyTorch execution trace (`ops` op nodes), kept by the worker to give its exact data
    /// flow to the Kineto trace of its run: `joined` has, by trace id, the new report of each
    /// held trace whose CPU ops it links to; `unlinked` names the held traces it does not link
    /// to (an execution trace of another run). A trace opened later is linked as it opens.
    ExecTrace { job: u32, ops: u64, joined: Vec<(u32, Json<TraceTime>)>, unlinked: Vec<String> },
    /// A torch.compile log, kept by the worker to give the exact groups of Inductor's kernels
    /// to the traces of its run: its kernels as the page shows them, and, by trace id, the new
    /// report of each held trace it was joined to. A trace opened later is joined as it opens.
    CompileLog { job: u32, kernels: Json<CompiledKernels>, joined: Vec<(u32, Json<TraceTime>)> },
    /// The comparison asked for.
    Comparison { job: u32, comparison: Json<Comparison> },
    /// A trace read for another worker (`Open` with `hand_back`), in `analysis::wire` form, with
    /// its summary and report.
    Parsed {
        job: u32,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
        summary: Json<TraceSummary>,
        time: Json<TraceTime>,
        /// Its rank summary (`analysis::ranks`), for the job report of the ranks opened together.
        #[serde(default)]
        rank: Option<Json<RankSummary>>,
    },
    /// The job report asked for (`Request::Ranks`), drawn for the Ranks view; `None` when
    /// fewer than two of the traces are ranks of a distributed job.
    Ranks { job: u32, report: Option<Json<RanksDrawn>> },
    /// The job failed; the message names the file and what went wrong.
    Error { job: u32, message: String },
    /// The worker hit a bug and cannot go on.
    Panic { message: String },
}

impl Reply {
    /// The job a reply answers (none for `Ready` and `Panic`).
    pub fn job(&self) -> Option<u32> {
        match self {
            Reply::Ready | Reply::Panic { .. } => None,
            Reply::Progress { job, .. }
            | Reply::Cancelled { job }
            | Reply::Trace { job, .. }
            | Reply::Graph { job, .. }
            | Reply::Bytes { job, .. }
            | Reply::Comparison { job, .. }
            | Reply::Capture { job, .. }
            | Reply::ExecTrace { job, .. }
            | Reply::CompileLog { job, .. }
            | Reply::Parsed { job, .. }
            | Reply::Ranks { job, .. }
            | Reply::Error { job, .. } => Some(*job),
        }
    }
}

/// A value of type `T` as JSON text: typed on both sides, decoded when and where the receiver
/// chooses.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
pub struct Json<T> {
    text: String,
    #[serde(skip)]
    of: PhantomData<fn() -> T>,
}

impl<T: Serialize> Json<T> {
    pub fn encode(value: &T) -> Result<Json<T>, serde_json::Error> {
        Ok(Json { text: serde_json::to_string(value)?, of: PhantomData })
    }
}

impl<T: DeserializeOwned> Json<T> {
    pub fn decode(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.text)
    }
}

impl<T> Json<T> {
    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

impl<T> Clone for Json<T> {
    fn clone(&self) -> Self {
        Json { text: self.text.clone(), of: PhantomData }
    }
}

impl<T> PartialEq for Json<T> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// Text equality is an equivalence.
impl<T> Eq for Json<T> {}

impl<T> std::fmt::Debug for Json<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Json({} bytes)", self.text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use import::{open_whole, Imported};

    const QWEN: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
    ));

    #[test]
    fn a_summary_crosses_as_json_and_decodes_to_the_same_value() {
        let Imported::Trace { summary, time, .. } = open_whole("q.json.gz", QWEN).unwrap() else { panic!() };
        let reply =
            Reply::Trace { job: 7, summary: Json::encode(&summary).unwrap(), time: Json::encode(&time).unwrap() };
        // Through a self-describing format, as serde-wasm-bindgen does with JavaScript values.
        let back: Reply = serde_json::from_value(serde_json::to_value(&reply).unwrap()).unwrap();
        assert_eq!(back, reply);
        let Reply::Trace { job, summary: json, time: time_json } = back else { panic!() };
        assert_eq!((job, json.decode().unwrap()), (7, summary));
        assert_eq!(time_json.decode().unwrap(), time);
    }

    #[test]
    fn every_request_and_reply_keeps_its_job_through_encoding() {
        let Imported::Trace { summary, time, .. } = open_whole("q.json.gz", QWEN).unwrap() else { panic!() };
        let requests = [
            Request::Open { job: 1, name: "a.json".into(), hand_back: false },
            Request::Open { job: 8, name: "b.json".into(), hand_back: true },
            Request::Adopt {
                job: 9,
                name: "b.json".into(),
                bytes: vec![1, 2, 3],
                summary: Json::encode(&summary).unwrap(),
                time: Json::encode(&time).unwrap(),
                rank: None,
            },
            Request::Cancel { job: 2 },
            Request::Compare { job: 3, a: 1, b: 2 },
            Request::Forget { job: 1 },
            Request::Ranks { job: 10, ids: vec![1, 9] },
        ];
        for r in requests {
            let back: Request = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
        let replies = [
            Reply::Ready,
            Reply::Progress { job: 4, done: 4.0, total: 8.0, memory: 65536.0 },
            Reply::Cancelled { job: 4 },
            Reply::Bytes { job: 5, bytes: vec![0, 255, 10] },
            Reply::Error { job: 6, message: "x.json is broken".into() },
            Reply::Capture { job: 7, graphs: 25, joined: Vec::new() },
            Reply::Parsed {
                job: 8,
                bytes: vec![0, 7],
                summary: Json::encode(&summary).unwrap(),
                time: Json::encode(&time).unwrap(),
                rank: None,
            },
            Reply::Ranks { job: 11, report: None },
            Reply::Panic { message: "bug".into() },
        ];
        for r in replies {
            let back: Reply = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
            assert_eq!(back.job(), r.job());
            assert_eq!(back, r);
        }
    }

    #[test]
    fn a_reply_of_another_shape_is_an_error_not_a_default() {
        let e = serde_json::from_str::<Reply>(r#"{"progress": {"job": 1}}"#).unwrap_err();
        assert!(e.to_string().contains("done"), "{e}");
        assert!(serde_json::from_str::<Request>(r#"{"open": {"job": "1", "name": "a"}}"#).is_err());
    }
}
