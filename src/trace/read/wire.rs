//! A [`Trace`] as bytes, to hand from one of the page's workers to the other: two files dropped
//! together are read at once in two workers, and the comparison needs both traces in one. The
//! form is postcard (compact binary serde): a few bytes per field, written and read in a small
//! fraction of the time reading the JSON took, where JSON would cost about as much again.

use thiserror::Error;

use crate::trace::model::Trace;

/// The bytes could not be made or read back (a bug, or bytes that are not a trace's).
#[derive(Debug, Error)]
#[error("a trace handed between the page's workers could not be {action}: {message}")]
pub struct WireError {
    action: &'static str,
    message: String,
}

/// The trace as bytes.
pub fn to_bytes(trace: &Trace) -> Result<Vec<u8>, WireError> {
    postcard::to_allocvec(trace).map_err(|e| WireError { action: "written", message: e.to_string() })
}

/// The trace [`to_bytes`] wrote.
pub fn from_bytes(bytes: &[u8]) -> Result<Trace, WireError> {
    postcard::from_bytes(bytes).map_err(|e| WireError { action: "read", message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::summary::{summarize_classified, ClassifiedTrace};
    use crate::trace::time::report::{recorded_cost, time_report};
    use crate::trace::{classify, read_trace};

    const QWEN: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
    ));

    #[test]
    fn a_trace_comes_back_whole_and_gives_the_same_results() {
        let trace = read_trace(QWEN).unwrap();
        let results = |t: &Trace| {
            let side = ClassifiedTrace::new(t, &classify);
            (summarize_classified(&side, None), time_report(&side, None, &recorded_cost))
        };
        let bytes = to_bytes(&trace).unwrap();
        assert!(bytes.len() < QWEN.len() * 4, "{} bytes", bytes.len());
        let back = from_bytes(&bytes).unwrap();
        assert_eq!(back.kernels, trace.kernels);
        assert_eq!(back.cpu_ops, trace.cpu_ops);
        assert_eq!(back.launches, trace.launches);
        assert_eq!(
            (back.names.len(), back.event_count, back.json_bytes),
            (trace.names.len(), trace.event_count, trace.json_bytes)
        );
        assert_eq!(results(&back), results(&trace));
    }

    #[test]
    fn bytes_that_are_not_a_trace_are_an_error() {
        let bytes = to_bytes(&read_trace(QWEN).unwrap()).unwrap();
        for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            assert!(from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(from_bytes(&[0xff; 64]).is_err());
    }
}
