//! The format-neutral GPU trace: what every profiler format is read into and every analysis
//! reads (`docs/trace-analysis.md`). It knows no file format: the readers are the `formats`
//! crate, the analyses the `analysis` crate.
//!
//! | module | what it is |
//! |---|---|
//! | [`model`] | the trace: kernels, copies, CPU ops with shapes, launches (sorted by correlation id, [`model::launches`]), annotations, devices; names interned ([`model::intern`]); vendor and devices ([`model::platform`]); kernel → op links ([`model::links`]); groups a compiler recorded ([`model::compiled`]) |
//! | [`read`] | what readers stream into: plain or gzip input ([`read::inflate`]), the [`EventSink`] a reader hands each event to, and the [`TraceHeader`] every sink receives at the end |

pub mod model;
pub mod read;

pub use model::intern::{NameId, NameTable};
pub use model::platform::{Platform, Vendor};
pub use model::Trace;
pub use read::{EventSink, TraceHeader};
