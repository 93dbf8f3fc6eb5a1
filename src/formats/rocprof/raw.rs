//! serde's view of the parts of a rocprofv3 results JSON the reader uses (`rocprofiler-sdk-tool`:
//! agents, kernel symbols, kernel-dispatch and memory-copy buffer records). Every other key
//! (counters, strings, code objects, callback records, API records) is skipped by serde without
//! being kept. Names are borrowed from the text where they hold no escapes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The whole file: one tool record, or a list of them (one per process when merged).
#[derive(Deserialize)]
pub(super) struct Root<'a> {
    #[serde(rename = "rocprofiler-sdk-tool", borrow)]
    pub tool: Option<OneOrMany<Tool<'a>>>,
}

/// A value that is either one `T` or a list of them.
pub(super) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object or a list of objects")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(t) = seq.next_element()? {
                    v.push(t);
                }
                Ok(OneOrMany::Many(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(OneOrMany::One)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One process's records.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Tool<'a> {
    pub metadata: Metadata,
    #[serde(borrow)]
    pub agents: Vec<Agent<'a>>,
    #[serde(borrow)]
    pub kernel_symbols: Symbols<'a>,
    pub buffer_records: BufferRecords,
    #[serde(borrow)]
    pub strings: Strings<'a>,
}

/// `strings`: the names of each buffer-record kind's operations, the list indexed by the
/// kind's number (`KERNEL_DISPATCH` is 11, `HIP_RUNTIME_API` 5, `RCCL_API` 14, …).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Strings<'a> {
    #[serde(borrow)]
    pub buffer_records: Vec<KindNames<'a>>,
    /// The ROCTx messages (`roctxMarkA`, `roctxRangePushA`, `roctxRangeStartA`), keyed by the
    /// marker record's internal correlation id: a `std::map` as cereal writes it.
    #[serde(borrow)]
    pub marker_api: Vec<MarkerMessage<'a>>,
}

/// `{"key": <correlation id>, "value": "<message>"}`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct MarkerMessage<'a> {
    pub key: u64,
    #[serde(borrow)]
    pub value: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct KindNames<'a> {
    #[serde(borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub operations: Vec<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Metadata {
    pub pid: Option<i64>,
}

/// An HSA agent: a CPU (`type` 1) or a GPU (`type` 2).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Agent<'a> {
    pub id: Handle,
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub product_name: Option<Cow<'a, str>>,
    #[serde(rename = "type")]
    pub kind: Option<i64>,
    pub logical_node_id: Option<i64>,
    pub node_id: Option<i64>,
    pub wave_front_size: Option<u32>,
    pub cu_count: Option<u32>,
}

/// `{"handle": N}`, as rocprofiler-sdk writes every id of an agent, queue or stream.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
pub(super) struct Handle {
    pub handle: u64,
}

/// One kernel symbol: its id and its names.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Symbol<'a> {
    pub kernel_id: u64,
    #[serde(borrow)]
    pub formatted_kernel_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub demangled_kernel_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub kernel_name: Option<Cow<'a, str>>,
}

impl Symbol<'_> {
    /// The demangled name without the `.kd` descriptor suffix (`formatted_kernel_name`), as
    /// the PyTorch profiler names the same kernel on ROCm; the other names when it is absent.
    pub fn name(&self) -> Option<&str> {
        [&self.formatted_kernel_name, &self.demangled_kernel_name, &self.kernel_name]
            .into_iter()
            .filter_map(|n| n.as_deref())
            .find(|n| !n.is_empty())
    }
}

/// `kernel_symbols`: a list of symbols (rocprofv3's JSON), or an object keyed by kernel id
/// (older rocprofiler-sdk versions).
#[derive(Default)]
pub(super) struct Symbols<'a>(pub Vec<Symbol<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Symbols<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Symbols<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list or an object of kernel symbols")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = seq.next_element()? {
                    v.push(s);
                }
                Ok(Symbols(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((_, s)) = map.next_entry::<de::IgnoredAny, Symbol<'a>>()? {
                    v.push(s);
                }
                Ok(Symbols(v))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct BufferRecords {
    pub kernel_dispatch: Vec<Dispatch>,
    pub memory_copy: Vec<MemoryCopy>,
    pub hip_api: Vec<ApiCall>,
    pub rccl_api: Vec<ApiCall>,
    /// ROCTx markers and ranges (`--marker-trace`): a range's record spans push to pop.
    pub marker_api: Vec<Marker>,
}

/// A ROCTx marker or range (times in ns), named by its message in `strings.marker_api`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Marker {
    pub correlation_id: Correlation,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
}

/// A HIP or RCCL API call (times in ns): the launch side of its kernels' correlation id.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ApiCall {
    pub kind: u32,
    pub operation: u32,
    pub correlation_id: Correlation,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub thread_id: i64,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
pub(super) struct Correlation {
    pub internal: u64,
    pub external: u64,
}

/// One kernel dispatch (times in ns).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Dispatch {
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub correlation_id: Correlation,
    pub dispatch_info: DispatchInfo,
    pub stream_id: Option<Handle>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct DispatchInfo {
    pub agent_id: Handle,
    pub queue_id: Handle,
    pub kernel_id: u64,
}

/// One memory copy (times in ns; `operation` is rocprofiler-sdk's copy direction).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct MemoryCopy {
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub correlation_id: Correlation,
    pub operation: u32,
    pub dst_agent_id: Handle,
    pub src_agent_id: Handle,
    pub bytes: Option<u64>,
}
