//! Opening files and comparing traces through the analysis worker, with the progress bar, the
//! Cancel button, and the small kinds opened on the page's thread when no worker can start.
//!
//! These are the page's only asynchronous steps: each ends in one [`Action`] for the reducer.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use wasm_bindgen::JsValue;
use yew::{UseReducerHandle, UseStateHandle};

use super::browser;
use super::worker_client::{next_job_id, AnalysisWorker, OpenReply, CANCELLED, STOPPED, UNAVAILABLE};
use crate::page_state::PageState;
use analysis::compare::pairing::default_pair;
use analysis::Comparison;
use import::{detect, Imported, DETECT_BYTES, READS_LARGE_KINDS};
use page::open::{action_of, open_bytes, Opened};
use page::{Action, ByAddress, LoadedTrace, Reading, TraceHeld};
use view::ranks::RanksDrawn;

/// The page's analysis worker, started on first use and again if it stopped.
pub type WorkerSlot = Rc<RefCell<Option<AnalysisWorker>>>;

/// The reads in progress (so that Cancel can stop them): each one's worker and job.
pub type CurrentRead = Rc<RefCell<Vec<(AnalysisWorker, u32)>>>;

/// A file this large is not read beside another: the second worker would hold its trace while
/// the first adopts a copy, doubling the memory of what may be a multi-gigabyte trace.
const ASIDE_MAX_BYTES: f64 = 512.0 * 1024.0 * 1024.0;

/// The second worker is replaced after a read that grew its memory past this (WebAssembly
/// memory never shrinks, and what it held now lives in the first worker).
const ASIDE_KEEP_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// How long the files just read wait to be listed for the comparison that follows them: listed
/// together, the page draws once, where drawing a trace's views and then the comparison's made
/// the comparison wait for the first drawing (about 60 ms for a serving pair); a longer
/// comparison does not keep them from being listed.
const LIST_WITHIN_MS: i32 = 200;

/// What the page needs to open files.
#[derive(Clone)]
pub struct Opening {
    pub state: UseReducerHandle<PageState>,
    pub reading: UseStateHandle<Option<Reading>>,
    pub current: CurrentRead,
    pub worker: WorkerSlot,
    /// The second worker: it reads one file while the first reads another, and hands its trace
    /// over (the first keeps every trace, so that any two can be compared).
    pub reader: WorkerSlot,
    /// A comparison is being computed (the Compare button says so).
    pub comparing: UseStateHandle<bool>,
}

impl Opening {
    /// The running worker, started if there is none (or the last one stopped). A worker that
    /// stops once running is reported as [`Action::WorkerStopped`].
    fn worker(&self) -> Result<AnalysisWorker, String> {
        let mut slot = self.worker.borrow_mut();
        if let Some(w) = slot.as_ref().filter(|w| !w.stopped()) {
            return Ok(w.clone());
        }
        let state = self.state.clone();
        let w = AnalysisWorker::start(Rc::new(move |text| state.dispatch(Action::WorkerStopped(text))))?;
        *slot = Some(w.clone());
        Ok(w)
    }

    /// The second worker, started if there is none. It holds nothing, so when it stops the
    /// page need not be told: its file is read again by the first.
    fn reader(&self) -> Result<AnalysisWorker, String> {
        let mut slot = self.reader.borrow_mut();
        if let Some(w) = slot.as_ref().filter(|w| !w.stopped()) {
            return Ok(w.clone());
        }
        let w = AnalysisWorker::start(Rc::new(|text: String| {
            web_sys::console::warn_1(&format!("fusionscope: the second reader: {text}").into())
        }))?;
        *slot = Some(w.clone());
        Ok(w)
    }
}

impl Opening {
    /// Starts the worker ahead of the first file. A worker that cannot start is not an error
    /// yet: opening a file tries again, and falls back to the page's thread.
    pub fn prewarm(&self) {
        let _ = self.worker();
        let _ = self.reader();
    }

    /// Stops the reads in progress.
    pub fn cancel(&self) {
        for (worker, job) in self.current.borrow().iter() {
            worker.cancel(*job);
        }
    }

    /// Lets the worker drop a trace the page no longer lists.
    pub fn forget(&self, trace: &LoadedTrace) {
        if trace.held == TraceHeld::Worker {
            if let Some(w) = self.worker.borrow().as_ref() {
                w.forget(trace.id);
            }
        }
    }

    /// Opens the files, two at a time (the second worker reads the second file of each pair
    /// while the first reads the first), showing progress, and dispatches what opening each
    /// does, in the order given. Cancelling stops the current files and the ones after them.
    /// When two or more traces were read, the default pair is compared at once.
    pub fn open_files(&self, files: Vec<(web_sys::Blob, String)>) {
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            // The list as the reducer will have it (the state handle is this render's).
            let mut opened = this.state.traces.opened.clone();
            let mut traces_read = 0;
            // The last files' actions: dispatched with the comparison that follows them, so that
            // the page draws once (see `LIST_WITHIN_MS`), or at once when none follows.
            let mut last = Vec::new();
            let mut files = files.into_iter();
            'files: while let Some((blob, file_name)) = files.next() {
                let aside = files.next().map(|(b, n)| {
                    let read = this.read_aside(&b, &n);
                    (b, n, read)
                });
                let first = this.open_one(&blob, &file_name).await;
                let cancelled = first.as_ref().err().is_some_and(|e| e == CANCELLED);
                let mut results = vec![(file_name, first)];
                if let Some((b, n, read)) = aside {
                    let second =
                        if cancelled { Err(CANCELLED.to_string()) } else { this.finish_aside(&b, &n, read).await };
                    results.push((n, second));
                }
                // A capture read beside its replay may have been joined to it after the replay
                // was answered (the workers run side by side): its update comes after the
                // replay is listed; so does an execution trace's link. One read first, with no
                // trace held yet, comes first: the trace read beside it was linked as it opened.
                results.sort_by_key(|(_, r)| match r {
                    Ok(Action::ExecTraceOpened { joined, unlinked, .. }) => !(joined.is_empty() && unlinked.is_empty()),
                    Ok(Action::CompileLogOpened { joined, .. }) => !joined.is_empty(),
                    r => matches!(r, Ok(Action::CaptureOpened { .. })),
                });
                let mut actions = Vec::with_capacity(results.len());
                for (file_name, result) in results {
                    let action = match result {
                        Ok(action) => action,
                        Err(e) if e == CANCELLED => {
                            this.list(&mut actions);
                            let text = format!("Reading {file_name} was cancelled; nothing changed.");
                            this.state.dispatch(Action::Inform(text));
                            break 'files;
                        }
                        // The page was told (Action::WorkerStopped, naming this file); the next
                        // file opens in a new worker.
                        Err(e) if e == STOPPED => continue,
                        Err(e) => Action::Fail(e),
                    };
                    if let Action::OpenTrace(t) = &action {
                        traces_read += 1;
                        opened.push(t.clone());
                    }
                    actions.push(action);
                }
                if files.len() == 0 {
                    last = actions;
                } else {
                    this.list(&mut actions);
                }
            }
            // Ranks of one distributed job (these and those opened before) show the Ranks view
            // in place of comparing two of them.
            if traces_read >= 1 {
                if let Some(job) = this.ask_job(&opened) {
                    let report = job.await;
                    if matches!(report, Ok(Some(_))) {
                        this.list(&mut last);
                    }
                    if this.show_job(report) {
                        return;
                    }
                }
            }
            let vendors: Vec<_> = opened.iter().map(LoadedTrace::vendor).collect();
            if let Some((a, b)) = if traces_read >= 2 { default_pair(&vendors) } else { None } {
                let (a, b) = (opened[a].clone(), opened[b].clone());
                let result = this.listing_if_slow(this.ask_comparison(&a, &b), &mut last).await;
                this.list(&mut last);
                this.show_comparison(&a, &b, result);
            }
            this.list(&mut last);
        });
    }

    /// Dispatches the files' actions held back for the result that follows them, leaving none.
    fn list(&self, held: &mut Vec<Action>) {
        std::mem::take(held).into_iter().for_each(|a| self.dispatch_opened(a));
    }

    /// Awaits `result`, dispatching the held actions if it takes longer than `LIST_WITHIN_MS`.
    async fn listing_if_slow<F: Future>(&self, result: F, held: &mut Vec<Action>) -> F::Output {
        let mut result = std::pin::pin!(result);
        match browser::within(result.as_mut(), LIST_WITHIN_MS).await {
            Some(output) => output,
            None => {
                self.list(held);
                result.await
            }
        }
    }

    /// Dispatches what opening a file did (a newly opened result replaces a shared view's link).
    fn dispatch_opened(&self, action: Action) {
        if matches!(
            action,
            Action::OpenAnalysedGraph { .. }
                | Action::OpenTrace(_)
                | Action::CaptureOpened { .. }
                | Action::ExecTraceOpened { .. }
                | Action::CompileLogOpened { .. }
                | Action::OpenOpTrace { .. }
                | Action::OpenSimTable(_)
        ) {
            browser::clear_fragment();
        }
        self.state.dispatch(action);
    }

    /// Makes the job report again from the traces still opened after a rank was removed
    /// (`show`: the Ranks view was showing); nothing when fewer than two ranks remain.
    pub fn redo_job(&self, opened: Vec<LoadedTrace>, show: bool) {
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let ids: Vec<u32> = opened.iter().filter(|t| t.held == TraceHeld::Worker).map(|t| t.id).collect();
            if ids.len() < 2 {
                return;
            }
            let Ok(worker) = this.worker() else { return };
            match worker.ranks(ids).await {
                Ok(Some(report)) => this.state.dispatch(Action::RedoneJob { job: ByAddress::new(report), show }),
                Ok(None) => {}
                Err(e) => web_sys::console::warn_1(&format!("fusionscope: no Ranks view: {e}").into()),
            }
        });
    }

    /// Asks the worker for the job report of the opened traces that are ranks of one job;
    /// `None` when fewer than two traces are held there.
    fn ask_job(&self, opened: &[LoadedTrace]) -> Option<impl Future<Output = Result<Option<RanksDrawn>, String>>> {
        let ids: Vec<u32> = opened.iter().filter(|t| t.held == TraceHeld::Worker).map(|t| t.id).collect();
        if ids.len() < 2 {
            return None;
        }
        Some(self.worker().ok()?.ranks(ids))
    }

    /// Shows the job report [`Self::ask_job`] got; false when the traces are not one job's
    /// ranks (the page then goes on as without ranks, and says why on the console).
    fn show_job(&self, report: Result<Option<RanksDrawn>, String>) -> bool {
        match report {
            Ok(Some(report)) => {
                self.state.dispatch(Action::ShowRanks(ByAddress::new(report)));
                true
            }
            Ok(None) => false,
            Err(e) => {
                web_sys::console::warn_1(&format!("fusionscope: no Ranks view: {e}").into());
                false
            }
        }
    }

    /// Starts reading a file in the second worker, to hand its trace to the first; `None` when
    /// it is too large for that or the second worker cannot start (the first then reads it).
    fn read_aside(&self, blob: &web_sys::Blob, file_name: &str) -> Option<AsideRead> {
        if blob.size() > ASIDE_MAX_BYTES {
            return None;
        }
        let reader = self.reader().ok()?;
        let progress = AsideProgress::default();
        let on_progress = {
            let (progress, reading, file_name) = (progress.clone(), self.reading.clone(), file_name.to_string());
            move |done, total| {
                progress.last.set((done, total));
                if progress.shown.get() {
                    let started_ms = progress.started_ms.get();
                    reading.set(Some(Reading { file_name: file_name.clone(), done, total, started_ms }));
                }
            }
        };
        progress.started_ms.set(js_sys::Date::now());
        let (job, reply) = reader.open(blob, file_name, true, on_progress);
        self.current.borrow_mut().push((reader.clone(), job));
        // The trace goes to the first worker as soon as it is read, not when the page gets to it
        // (the first worker takes it up as soon as it is free).
        let outcome: Rc<RefCell<Option<AsideOutcome>>> = Rc::default();
        let (cell, main, name) = (outcome.clone(), self.worker().ok(), file_name.to_string());
        let ended = wasm_bindgen_futures::future_to_promise(async move {
            let result = match (reply.await, main) {
                (Ok(OpenReply::Parsed { bytes, summary, time, rank }), Some(w)) => {
                    AsideOutcome::Adopted(w.adopt(&name, bytes, summary, time, rank).1.await)
                }
                (read, _) => AsideOutcome::Read(read),
            };
            *cell.borrow_mut() = Some(result);
            Ok(JsValue::UNDEFINED)
        });
        Some(AsideRead { reader, job, progress, ended, outcome })
    }

    /// Ends a read started by [`Self::read_aside`]: its trace is adopted by the first worker.
    /// If the second worker failed, the first reads the file itself.
    async fn finish_aside(
        &self,
        blob: &web_sys::Blob,
        file_name: &str,
        read: Option<AsideRead>,
    ) -> Result<Action, String> {
        let Some(AsideRead { reader, job, progress, ended, outcome }) = read else {
            return self.open_one(blob, file_name).await;
        };
        let (done, total) = progress.last.get();
        let started_ms = progress.started_ms.get();
        self.reading.set(Some(Reading {
            file_name: file_name.to_string(),
            done,
            total: total.max(blob.size()),
            started_ms,
        }));
        progress.shown.set(true);
        let _ = wasm_bindgen_futures::JsFuture::from(ended).await;
        let outcome = outcome.borrow_mut().take();
        self.current.borrow_mut().retain(|(_, j)| *j != job);
        if reader.memory() > ASIDE_KEEP_BYTES {
            self.reader.borrow_mut().take();
        }
        let action = match outcome {
            Some(AsideOutcome::Adopted(Ok(reply))) => Ok(action_of_reply(file_name, reply).await),
            Some(AsideOutcome::Adopted(Err(e))) => Err(e),
            // Read, but there was no first worker to take it: that worker reads the file again.
            Some(AsideOutcome::Read(Ok(OpenReply::Parsed { .. }))) | None => {
                return self.open_one(blob, file_name).await;
            }
            Some(AsideOutcome::Read(Ok(reply))) => Ok(action_of_reply(file_name, reply).await),
            Some(AsideOutcome::Read(Err(e))) if e == CANCELLED => Err(e),
            Some(AsideOutcome::Read(Err(e))) => {
                let warning =
                    format!("fusionscope: the second reader could not read {file_name} ({e}); reading it again");
                web_sys::console::warn_1(&warning.into());
                return self.open_one(blob, file_name).await;
            }
        };
        self.reading.set(None);
        action
    }

    /// Reads and analyses one file in the worker (a small kind on the page's thread without one).
    async fn open_one(&self, blob: &web_sys::Blob, file_name: &str) -> Result<Action, String> {
        let started_ms = js_sys::Date::now();
        let reading = self.reading.clone();
        let total = blob.size();
        reading.set(Some(Reading { file_name: file_name.to_string(), done: 0.0, total, started_ms }));
        let progress = {
            let (reading, file_name) = (reading.clone(), file_name.to_string());
            move |done, total| reading.set(Some(Reading { file_name: file_name.clone(), done, total, started_ms }))
        };
        let reply = match self.worker() {
            Ok(w) => {
                let (job, reply) = w.open(blob, file_name, false, progress);
                self.current.borrow_mut().push((w, job));
                let reply = reply.await;
                self.current.borrow_mut().retain(|(_, j)| *j != job);
                reply
            }
            Err(e) => Err(format!("{UNAVAILABLE}: {e}")),
        };
        let action = match reply {
            Ok(reply) => Ok(action_of_reply(file_name, reply).await),
            // No worker (an old browser, or a host that does not serve the script).
            Err(e) if e.starts_with(UNAVAILABLE) => {
                let warning = format!("fusionscope: reading {file_name} on the page: {e}");
                web_sys::console::warn_1(&warning.into());
                open_on_page(blob, file_name).await
            }
            Err(e) => Err(e),
        };
        reading.set(None);
        action
    }

    /// Compares two opened traces where they are held and shows the comparison.
    pub async fn compare(&self, a: LoadedTrace, b: LoadedTrace) {
        let result = self.ask_comparison(&a, &b).await;
        self.show_comparison(&a, &b, result);
    }

    /// Asks the worker for the comparison of two opened traces (the request goes at once).
    fn ask_comparison(&self, a: &LoadedTrace, b: &LoadedTrace) -> impl Future<Output = Result<Comparison, String>> {
        self.comparing.set(true);
        let asked = match (&a.held, &b.held) {
            (TraceHeld::Worker, TraceHeld::Worker) => self.worker().map(|w| w.compare(a.id, b.id)),
            // Only the worker reads traces in the page (see `import::READS_LARGE_KINDS`).
            _ => Err("the analysis worker no longer holds them; open both again".to_string()),
        };
        async move { asked?.await }
    }

    /// Shows the comparison [`Self::ask_comparison`] got, or why there is none.
    fn show_comparison(&self, a: &LoadedTrace, b: &LoadedTrace, result: Result<Comparison, String>) {
        self.comparing.set(false);
        self.state.dispatch(match result {
            Ok(c) => Action::ShowComparison {
                files: (a.file_name.clone(), b.file_name.clone()),
                comparison: ByAddress::new(c),
            },
            Err(e) => Action::Fail(format!("{} and {} cannot be compared: {e}.", a.file_name, b.file_name)),
        });
    }
}

/// A read in the second worker ([`Opening::read_aside`]): `ended` resolves when its trace was
/// adopted by the first worker (or the read ended otherwise), with the outcome in `outcome`.
struct AsideRead {
    reader: AnalysisWorker,
    job: u32,
    progress: AsideProgress,
    ended: js_sys::Promise,
    outcome: Rc<RefCell<Option<AsideOutcome>>>,
}

/// How a read in the second worker ended.
enum AsideOutcome {
    /// Its trace was handed to the first worker, which answered this.
    Adopted(Result<OpenReply, String>),
    /// The second worker's own answer (another kind of file, an error, a cancellation).
    Read(Result<OpenReply, String>),
}

/// Where a read in the second worker has got, shown once the first file is done.
#[derive(Clone, Default)]
struct AsideProgress {
    last: Rc<std::cell::Cell<(f64, f64)>>,
    shown: Rc<std::cell::Cell<bool>>,
    started_ms: Rc<std::cell::Cell<f64>>,
}

/// Opens a file on the page's thread (no worker could start). The page's build reads only the
/// small kinds, so the head is read first: a trace or op graph is refused at once, without
/// reading what may be gigabytes into the page.
async fn open_on_page(blob: &web_sys::Blob, file_name: &str) -> Result<Action, String> {
    let head = browser::read_head(blob, file_name, DETECT_BYTES).await?;
    let detected = detect(&head);
    if detected.kind.analysed_off_the_page() && !READS_LARGE_KINDS {
        return Ok(open_bytes(file_name, &head, next_job_id()));
    }
    let bytes = browser::read_blob(blob, file_name).await?;
    Ok(open_bytes(file_name, &bytes, next_job_id()))
}

/// The action for the worker's reply. A large graph's decoding is split into steps with a
/// task boundary between them, so that no single step blocks the page for long.
async fn action_of_reply(file_name: &str, reply: OpenReply) -> Action {
    match reply {
        OpenReply::Trace { id, summary, time } => action_of(file_name, Opened::TraceInWorker { summary, time }, id),
        OpenReply::Graph { graph, report } => {
            let fail = |e: String| Action::Fail(format!("{file_name}: the worker's analysis cannot be read: {e}."));
            browser::next_task().await;
            let file = match graph.decode() {
                Ok(f) => f,
                Err(e) => return fail(e.to_string()),
            };
            drop(graph);
            browser::next_task().await;
            let graph = match share::graph_of(&file) {
                Ok(g) => g,
                Err(e) => return fail(e.to_string()),
            };
            drop(file);
            browser::next_task().await;
            let report = match report.decode() {
                Ok(r) => r,
                Err(e) => return fail(e.to_string()),
            };
            browser::next_task().await;
            action_of(file_name, Opened::Imported(Imported::Graph { graph, report }), next_job_id())
        }
        OpenReply::Bytes(bytes) => open_bytes(file_name, &bytes, next_job_id()),
        OpenReply::Capture { graphs, joined } => {
            action_of(file_name, Opened::CaptureInWorker { graphs, joined }, next_job_id())
        }
        OpenReply::ExecTrace { ops, joined, unlinked } => {
            action_of(file_name, Opened::ExecTraceInWorker { ops, joined, unlinked }, next_job_id())
        }
        OpenReply::CompileLog { kernels, joined } => {
            action_of(file_name, Opened::CompileLogInWorker { kernels, joined }, next_job_id())
        }
        // Only a `hand_back` read gives these, and its caller adopts them instead.
        OpenReply::Parsed { .. } => {
            Action::Fail(format!("{file_name}: the worker handed back a trace nobody adopted."))
        }
    }
}

/// The bundled example pair (copied next to the page from tests/data/traces, MIT licence,
/// see www/examples/README.md).
const EXAMPLE_TRACES: [&str; 2] =
    ["examples/hf_bert-small_eager_h100.json.gz", "examples/hf_bert-small_eager_mi300x.json.gz"];

impl Opening {
    /// Fetches the example traces from the page's own origin, opens them and shows their
    /// comparison.
    pub fn open_example(&self) {
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut files = Vec::new();
            for path in EXAMPLE_TRACES {
                match browser::fetch_blob(path).await {
                    Ok(blob) => files.push((blob, path.rsplit('/').next().unwrap_or(path).to_string())),
                    Err(e) => return this.state.dispatch(Action::Fail(format!("The example cannot be opened: {e}."))),
                }
            }
            this.open_files(files);
        });
    }
}
