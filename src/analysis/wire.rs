//! A [`Trace`] as bytes, to hand from one of the page's workers to the other: two files dropped
//! together are read at once in two workers, and the comparison needs both traces in one. The
//! form is postcard (compact binary serde): a few bytes per field, written and read in a small
//! fraction of the time reading the JSON took, where JSON would cost about as much again. The
//! trace's structure search goes with it, so that the worker that takes it compares without
//! searching the trace again.

use thiserror::Error;

use crate::structure::TraceStructure;
use trace::Trace;

/// The bytes could not be made or read back (a bug, or bytes that are not a trace's).
#[derive(Debug, Error)]
#[error("a trace handed between the page's workers could not be {action}: {message}")]
pub struct WireError {
    action: &'static str,
    message: String,
}

/// The trace and its structure search (`None`: nothing found) as bytes.
pub fn to_bytes(trace: &Trace, search: Option<&TraceStructure>) -> Result<Vec<u8>, WireError> {
    postcard::to_allocvec(&(trace, search)).map_err(|e| WireError { action: "written", message: e.to_string() })
}

/// The trace and search [`to_bytes`] wrote.
pub fn from_bytes(bytes: &[u8]) -> Result<(Trace, Option<TraceStructure>), WireError> {
    postcard::from_bytes(bytes).map_err(|e| WireError { action: "read", message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pipeline::{time_report, Choices};
    use crate::summary::{summarize, ClassifiedTrace};
    use formats::read_trace;

    const QWEN: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
    ));

    #[test]
    fn a_trace_comes_back_whole_and_gives_the_same_results() {
        let trace = read_trace(QWEN).unwrap();
        let results = |t: &Trace| {
            let side = ClassifiedTrace::new(t);
            (summarize(&side, None), time_report(&side, &Choices::default()))
        };
        let bytes = to_bytes(&trace, None).unwrap();
        assert!(bytes.len() < QWEN.len() * 4, "{} bytes", bytes.len());
        let (back, search) = from_bytes(&bytes).unwrap();
        assert_eq!(search, None);
        assert_eq!(back.kernels, trace.kernels);
        assert_eq!(back.cpu_ops, trace.cpu_ops);
        assert_eq!(back.launches, trace.launches);
        assert_eq!(
            (back.names.len(), back.event_count, back.json_bytes),
            (trace.names.len(), trace.event_count, trace.json_bytes)
        );
        assert_eq!(results(&back), results(&trace));
    }

    /// A serving trace's search (steps, phases, layers) comes back equal, and a comparison
    /// that takes it equals one that searches again.
    #[test]
    fn a_structure_search_comes_back_with_its_trace() {
        use crate::compare::{compare, Input};
        use crate::synthetic::serving::{write_serving_trace, ServingSpec};
        let (amd, nvidia) = ServingSpec::vendor_pair();
        let [a, b] = [amd, nvidia].map(|spec| {
            let mut json = Vec::new();
            write_serving_trace(&mut json, &spec).unwrap();
            read_trace(&json).unwrap()
        });
        let search = ClassifiedTrace::new(&b).into_search().expect("the serving trace has layers");
        assert!(search.phases.iter().any(|p| p.layer.is_some()));
        let (back, back_search) = from_bytes(&to_bytes(&b, Some(&search)).unwrap()).unwrap();
        assert_eq!(back_search.as_ref(), Some(&search));
        let fresh = compare(Input::new(&a, None), Input::new(&b, None));
        let reused = compare(
            Input::new(&a, None),
            Input { side: ClassifiedTrace::new(&back).with_search(back_search.as_ref()), file: None },
        );
        assert_eq!(serde_json::to_string(&reused).unwrap(), serde_json::to_string(&fresh).unwrap());
    }

    #[test]
    fn bytes_that_are_not_a_trace_are_an_error() {
        let bytes = to_bytes(&read_trace(QWEN).unwrap(), None).unwrap();
        for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            assert!(from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(from_bytes(&[0xff; 64]).is_err());
    }
}
