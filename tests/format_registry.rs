//! A new trace format is one folder and one registry line: a toy format, written here as a
//! format's folder would be, registered beside Kineto's, is detected, read slice by slice into
//! the format-neutral trace, classified and summarised by the same dispatch as every real
//! format (`import::FileOpener`), and its errors name the file, the format and the line.

use fusionscope::analysis::Category;
use fusionscope::formats::registry::{Format, FormatError, Registry, KINETO};
use fusionscope::import::{detect_in, FileKind, FileOpener, Imported};

/// The toy format's folder: `TOYTRACE`, then one line per kernel, `kernel NAME TS DUR DEVICE`.
mod toy {
    use fusionscope::formats::interface::{About, Incremental, Readable};
    use fusionscope::trace::intern::NameTable;
    use fusionscope::trace::read::{EventSink, TraceHeader};
    use fusionscope::trace::Kernel;

    pub const ABOUT: About = About {
        name: "toy",
        noun: "a toy trace",
        describe: "a toy trace (text, one kernel a line)",
        detect: |s| s.head.starts_with(b"TOYTRACE\n"),
    };

    pub struct Toy;

    /// What is wrong with a toy trace, in words.
    pub struct ToyError(pub String);

    impl Readable for Toy {
        type Error = ToyError;
        type Reader<S: EventSink + 'static> = Reader<S>;
        fn reader<S: EventSink + 'static>(sink: S) -> Reader<S> {
            Reader { text: Vec::new(), sink }
        }
    }

    pub struct Reader<S> {
        text: Vec<u8>,
        sink: S,
    }

    impl<S: EventSink> Incremental<S> for Reader<S> {
        type Error = ToyError;
        fn feed(&mut self, chunk: &[u8]) -> Result<(), ToyError> {
            if self.text.len() + chunk.len() > 1 << 20 {
                return Err(ToyError("the file is longer than the toy format's 1 MiB".into()));
            }
            self.text.extend_from_slice(chunk);
            Ok(())
        }
        fn finish(mut self) -> Result<S::Output, ToyError> {
            let text = String::from_utf8(self.text).map_err(|e| ToyError(format!("not UTF-8: {e}")))?;
            let mut names = NameTable::new();
            for (n, line) in text.lines().enumerate().skip(1).filter(|(_, l)| !l.is_empty()) {
                let bad = || ToyError(format!("line {}: expected `kernel NAME TS DUR DEVICE`, found {line:?}", n + 1));
                let fields: Vec<&str> = line.split(' ').collect();
                let [kind, name, ts, dur, device] = fields[..] else { return Err(bad()) };
                let number = |s: &str| s.parse::<f64>().map_err(|_| bad());
                if kind != "kernel" {
                    return Err(bad());
                }
                let kernel = Kernel {
                    name: names.intern(name),
                    ts: number(ts)?,
                    dur: number(dur)?,
                    device: device.parse().map_err(|_| bad())?,
                    stream: 7,
                    correlation: None,
                    external_id: None,
                    graph_node: false,
                };
                self.sink.kernel(&names, kernel);
            }
            let event_count = text.lines().skip(1).filter(|l| !l.is_empty()).count() as u64;
            Ok(self.sink.finish(TraceHeader { names, event_count, ..TraceHeader::default() }))
        }
    }
}

/// The toy format's errors travel as the registry's `Other`, in their own words.
impl From<toy::ToyError> for FormatError {
    fn from(e: toy::ToyError) -> Self {
        FormatError::Other(e.0)
    }
}

/// The registry line: the toy format first, then the formats it must not shadow.
static WITH_TOY: Registry = Registry::new(&[&Format::new::<toy::Toy>(toy::ABOUT), &KINETO]);

const TOY: &str = "TOYTRACE\nkernel ampere_sgemm_128x64_nn 100 40 0\nkernel triton_poi_fused_add_mul_0 150 10 0\n\
                   kernel ncclDevKernel_AllReduce_Sum_f32_RING_LL 170 50 0\n";

fn open(name: &str, bytes: &[u8], slice: usize) -> Result<Imported, String> {
    let mut opener = FileOpener::with_registry(name, WITH_TOY);
    for chunk in bytes.chunks(slice) {
        opener.feed(chunk).map_err(|e| e.message(name))?;
    }
    opener.finish().map_err(|e| e.message(name))
}

#[test]
fn a_registered_format_is_detected_by_its_own_marks() {
    let detected = detect_in(WITH_TOY, TOY.as_bytes());
    assert!(matches!(detected.kind, FileKind::Trace(f) if f.name() == "toy"), "{detected:?}");
    assert_eq!(detected.kind.describe(), "a toy trace (text, one kernel a line)");
    // The formats after it still take their files, and the default registry knows no toy.
    let kineto = br#"{"traceEvents": []}"#;
    assert!(matches!(detect_in(WITH_TOY, kineto).kind, FileKind::Trace(f) if f.name() == "kineto"));
    assert!(!fusionscope::import::detect(TOY.as_bytes()).kind.is_trace());
}

#[test]
fn a_registered_format_opens_and_is_analysed_as_every_format_is() {
    for slice in [1, 5, TOY.len()] {
        let Ok(Imported::Trace { trace, summary, .. }) = open("run.toy", TOY.as_bytes(), slice) else {
            panic!("slices of {slice}: not a trace")
        };
        assert_eq!(trace.kernels.len(), 3, "slices of {slice}");
        assert_eq!(trace.kernels.iter().map(|k| k.stream).collect::<Vec<_>>(), [7, 7, 7]);
        let platform = &summary.platforms[0];
        assert_eq!((platform.kernels, platform.gpu_time_us), (3, 100.0));
        assert_eq!(platform.file.as_deref(), Some("run.toy"));
        // Classified by the kernels' names, as any trace's are.
        let time = |c: Category| summary.categories.iter().find(|r| r.category == c).map(|r| r.trace.time_us);
        assert_eq!(time(Category::Gemm), Some(40.0));
        assert_eq!(time(Category::Communication), Some(50.0));
    }
}

#[test]
fn a_registered_formats_error_names_the_file_the_format_and_the_place() {
    let bad = "TOYTRACE\nkernel a 1 2 0\nlaunch b 3\n";
    assert_eq!(
        open("bad.toy", bad.as_bytes(), 4).err().as_deref(),
        Some(
            "bad.toy is a toy trace but cannot be read: line 3: expected `kernel NAME TS DUR DEVICE`, found \
             \"launch b 3\"."
        )
    );
}
