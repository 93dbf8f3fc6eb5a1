//! The XSpace messages the reader uses, as prost derive structs written by hand from the
//! schema checked in beside this file (`xplane.proto`, Apache-2.0, see its header): no
//! `protoc` at build time. Fields the reader does not use are left out, so prost skips them
//! unread (a space's errors and warnings); unknown fields of
//! newer profiler versions are skipped the same way.

use std::collections::HashMap;

/// A profile: planes of host threads and devices.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XSpace {
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// A device (`/device:GPU:0`) or the host (`/host:CPU`): timelines and the metadata their
/// events refer to by id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XPlane {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    #[prost(map = "int64, message", tag = "4")]
    pub event_metadata: HashMap<i64, XEventMetadata>,
    #[prost(map = "int64, message", tag = "5")]
    pub stat_metadata: HashMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// A timeline: a GPU stream (`Stream #3(Kernel)`) or a derived row (`XLA Ops`, `Steps`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct XLine {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// Start of the line, ns since the epoch; events are offsets from it in ps.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XEvent {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Start, ps after the line's `timestamp_ns` (one side of the schema's `data` oneof).
    #[prost(int64, optional, tag = "2")]
    pub offset_ps: Option<i64>,
    /// An aggregated event's count instead of a start (the oneof's other side).
    #[prost(int64, optional, tag = "5")]
    pub num_occurrences: Option<i64>,
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// A named value; the name is its `stat_metadata` entry's.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XStat {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "Value", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<Value>,
}

/// An [`XStat`]'s value.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "2")]
    Double(f64),
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(string, tag = "5")]
    Str(String),
    /// Serialized messages: a program's optimized HLO (`Hlo Proto`, see `super::hlo`).
    #[prost(bytes = "vec", tag = "6")]
    Bytes(Vec<u8>),
    /// A string held as the name of the `stat_metadata` entry with this id.
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XEventMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub display_name: String,
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XStatMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
}
