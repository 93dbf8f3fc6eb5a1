//! The analysis worker's warm-up: as soon as it starts, it reads a small synthetic serving pair
//! (`analysis::synthetic::serving::gzipped_vendor_pair`) the way it reads a user's files, and
//! compares the two, then forgets them.
//!
//! **Why.** A browser runs WebAssembly first in a baseline tier and recompiles a function
//! optimised only once it has run hot; the optimised code is used from the function's next
//! call. Reading a file is a few long calls, so the first file a fresh worker reads ran mostly
//! in the baseline tier: in headless Chromium the first comparison of a real 59 + 33 MB
//! serving pair took 0.99 s, the same files dropped again 0.58 s. The page starts its two
//! workers once it has drawn, well before anyone drops a file; reading a pair of about 7 MB
//! then (inflating, parsing, the rank fold, every analysis of a trace, handing a trace over
//! and taking it back, the comparison, encoding the replies) costs the idle worker a fraction
//! of a second and makes the first file as fast as the next.
//!
//! **Never in the way.** It works in steps of one slice (or one analysis), and between steps
//! it yields to the worker's event loop; any request that comes in ([`interrupt`]) ends it at
//! the next step. A failure ends it silently: it only ever costs time.

use std::cell::Cell;

use js_sys::Promise;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::DedicatedWorkerGlobalScope;

use analysis::compare::{compare, Input};
use analysis::summary::ClassifiedTrace;
use analysis::synthetic::serving::gzipped_vendor_pair;
use analysis::wire;
use import::{FileOpener, Imported};
use page::protocol::Json;

/// Decode passes of each synthetic trace: 4.5 + 2.6 MB of JSON, enough for the hot loops of
/// reading and analysing to be optimised.
const DECODE_PASSES: usize = 100;

/// Bytes fed per step, as a file's slices are (its gzip inflates to about 1 MB of JSON).
const STEP_BYTES: usize = 64 * 1024;

thread_local! {
    /// A request came in: the warm-up stops at its next step.
    static INTERRUPTED: Cell<bool> = const { Cell::new(false) };
}

/// Tells a running warm-up to stop (the worker has real work).
pub fn interrupt() {
    INTERRUPTED.with(|i| i.set(true));
}

fn interrupted() -> bool {
    INTERRUPTED.with(Cell::get)
}

/// Lets the worker's event loop run (and deliver a request) before the next step.
async fn yield_to_events() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let tick = Promise::new(&mut |resolve, _| {
        let _ = scope.set_timeout_with_callback(&resolve);
    });
    let _ = JsFuture::from(tick).await;
}

/// Reads, analyses and compares the synthetic pair, step by step; stops when interrupted.
pub async fn warm_up() {
    let Ok(files) = gzipped_vendor_pair(DECODE_PASSES) else { return };
    let mut traces = Vec::with_capacity(2);
    for (name, gz) in ["warm-up-amd.json.gz", "warm-up-nvidia.json.gz"].into_iter().zip(files) {
        let mut opener = FileOpener::with_ranks(name);
        for slice in gz.chunks(STEP_BYTES) {
            yield_to_events().await;
            if interrupted() || opener.feed(slice).is_err() {
                return;
            }
        }
        yield_to_events().await;
        if interrupted() {
            return;
        }
        let Ok((Imported::Trace { trace, summary, time, search }, _)) = opener.finish_with_ranks(|_| None) else {
            return;
        };
        // The replies' encoding, and the hand-over between the two workers.
        let _ = (Json::encode(&summary), Json::encode(&time));
        let handed = wire::to_bytes(&trace, search.as_deref()).and_then(|bytes| wire::from_bytes(&bytes));
        let Ok(handed) = handed else { return };
        traces.push(handed);
    }
    yield_to_events().await;
    if let ([(a, search_a), (b, search_b)], false) = (traces.as_slice(), interrupted()) {
        let c = compare(
            Input { side: ClassifiedTrace::new(a).with_search(search_a.as_ref()), file: Some("warm-up-amd") },
            Input { side: ClassifiedTrace::new(b).with_search(search_b.as_ref()), file: Some("warm-up-nvidia") },
        );
        let _ = Json::encode(&c);
    }
}
