//! The trace benchmark's WebAssembly entry: a reader fed chunk by chunk from JavaScript, as the
//! web page's worker does, plus the comparison. Built for wasm32 and driven by
//! `tests/bench/trace_wasm_bench.js` (see `scripts/bench`); empty natively.

#[cfg(target_arch = "wasm32")]
mod entry {
    use fusionscope::analysis::summary::{summarize, ClassifiedTrace};
    use fusionscope::analysis::pipeline::{time_report, Choices};
    use fusionscope::analysis::{classify, compare, Input};
    use fusionscope::trace::Trace;
    use fusionscope::formats::TraceReader;
    use wasm_bindgen::prelude::*;

    /// Reads traces one after the other and compares the last two.
    #[wasm_bindgen]
    pub struct TraceBench {
        reader: Option<TraceReader>,
        traces: Vec<Trace>,
    }

    #[wasm_bindgen]
    impl TraceBench {
        #[wasm_bindgen(constructor)]
        pub fn new() -> TraceBench {
            TraceBench { reader: Some(TraceReader::new()), traces: Vec::new() }
        }

        /// Feeds the next slice of the current trace.
        pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsError> {
            let reader = self.reader.get_or_insert_with(TraceReader::new);
            reader.feed(chunk).map_err(|e| JsError::new(&e.to_string()))
        }

        /// Ends the current trace; returns its kernel count.
        pub fn finish(&mut self) -> Result<u32, JsError> {
            let reader = self.reader.take().unwrap_or_default();
            let trace = reader.finish().map_err(|e| JsError::new(&e.to_string()))?;
            let kernels = trace.kernels.len() as u32;
            self.traces.push(trace);
            Ok(kernels)
        }

        /// Drops the traces read so far.
        pub fn clear(&mut self) {
            self.traces.clear();
        }

        /// The last trace's summary and report, as the page's worker makes them for a file it
        /// opened; returns the number of op rows.
        pub fn analyse(&self) -> Result<u32, JsError> {
            let Some(t) = self.traces.last() else { return Err(JsError::new("read a trace first")) };
            let side = ClassifiedTrace::new(t);
            let summary = summarize(&side, None);
            let time = time_report(&side, &Choices::default());
            std::hint::black_box(&summary);
            Ok(time.ops.len() as u32)
        }

        /// Compares the last two traces read; returns the number of mapping rows.
        pub fn compare(&self) -> Result<u32, JsError> {
            let [.., a, b] = self.traces.as_slice() else {
                return Err(JsError::new("read two traces first"));
            };
            let c = compare(Input::new(a, None), Input::new(b, None));
            Ok(c.op_mapping.len() as u32)
        }
    }

    /// A file opened as the page's worker opens it: read slice by slice and analysed
    /// (summary, time report, fusion, rank summary), with the time of each part.
    #[wasm_bindgen]
    pub struct OpenBench {
        opener: Option<fusionscope::import::FileOpener>,
    }

    #[wasm_bindgen]
    impl OpenBench {
        #[wasm_bindgen(constructor)]
        pub fn new(name: &str) -> OpenBench {
            OpenBench { opener: Some(fusionscope::import::FileOpener::with_ranks(name)) }
        }

        /// Feeds the next slice of the file.
        pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsError> {
            let opener = self.opener.as_mut().ok_or_else(|| JsError::new("finished"))?;
            opener.feed(chunk).map_err(|e| JsError::new(&e.message("file")))
        }

        /// Ends the read and makes the worker's results.
        pub fn finish(&mut self) -> Result<(), JsError> {
            let opener = self.opener.take().ok_or_else(|| JsError::new("finished"))?;
            let opened = opener.finish_with_ranks(|_| None).map_err(|e| JsError::new(&e.message("file")))?;
            std::hint::black_box(&opened);
            Ok(())
        }
    }

    impl Default for TraceBench {
        fn default() -> Self {
            Self::new()
        }
    }

    /// Size of the module's linear memory, bytes: it only grows, so this is the peak.
    #[wasm_bindgen]
    pub fn memory_bytes() -> f64 {
        (core::arch::wasm32::memory_size(0) * 65536) as f64
    }
}
