//! Writes an XLA profile (`*.xplane.pb`) as the trace-event JSON JAX saves as
//! `perfetto_trace.json.gz`, to make the test file `tests/data/formats/xla_json/` from the
//! shared xplane profile (tests/data/PROVENANCE.md). No JAX is needed: the steps are those of
//! TSL's converter (`xla/tsl/profiler/convert/xplane_to_trace_events.cc` and
//! `trace_events_to_json.cc`) and of JAX's `_write_perfetto_trace_file`
//! (`jax/_src/profiler.py`), followed here one by one:
//!
//! - the `/host:CPU` plane, then every `/device:GPU:` plane, become processes: pid
//!   `1 + plane.id` for a GPU, named by the plane (`process_name`, `process_sort_index`);
//! - every line a thread: tid the line's display id, named by its display name (`thread_name`,
//!   `thread_sort_index`); the `Async XLA Ops` line is left out;
//! - every event a complete event `{"ph":"X","pid","tid","ts","dur","name","args"}`: times in
//!   µs (ps / 10⁶), a duration of 0 ps made 1 ps; the name is the metadata's display name
//!   (the name then goes to `args.long_name`) or name; `args` holds the metadata's stats, then
//!   the event's, each as a string (a reference stat as the name it refers to), without the
//!   internal ones (`kernel_details`, `program_id`, `flops`, `bytes_accessed`, …), sorted by key;
//! - the metadata events first, then the events; the list ends with an empty event `{}`;
//! - JAX then loads that JSON, deletes its `metadata` key and writes it back with Python's
//!   `json.dump` (`", "` and `": "` separators), gzipped.
//!
//! `cargo run --example xplane_to_perfetto_json -- IN.xplane.pb OUT.json.gz`

use std::collections::BTreeMap;
use std::io::Write;

use fusionscope::formats::xplane::proto::{Value, XPlane, XSpace};
use prost::Message;
use serde_json::{json, Value as Json};

/// The stats TSL's `IsInternalStat` keeps out of the trace viewer.
const INTERNAL_STATS: [&str; 10] =
    ["kernel_details", "_pt", "_p", "_ct", "_c", "_r", "flops", "bytes_accessed", "program_id", "symbol_id"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = args.as_slice() else {
        eprintln!("usage: xplane_to_perfetto_json IN.xplane.pb OUT.json.gz");
        std::process::exit(2);
    };
    let bytes = std::fs::read(input).expect("read the profile");
    let space = XSpace::decode(bytes.as_slice()).expect("an XSpace");
    let mut planes: Vec<(i64, &XPlane)> = Vec::new();
    if let Some(host) = space.planes.iter().find(|p| p.name == "/host:CPU") {
        planes.push((501, host)); // kHostThreadsDeviceId (500 devices + 1): after the devices
    }
    for p in space.planes.iter().filter(|p| p.name.starts_with("/device:GPU:")) {
        planes.push((1 + p.id, p));
    }
    planes.sort_by_key(|(pid, _)| *pid);
    // Each event's members in the converter's order (`ph`, `pid`, `tid`, `ts`, `dur`, `name`,
    // `args`), which Python's `json.load` and `json.dump` keep.
    let mut events: Vec<Vec<(&str, Json)>> = Vec::new();
    for &(pid, plane) in &planes {
        let meta = |name: &str, args: Json| {
            vec![("ph", json!("M")), ("pid", json!(pid)), ("name", json!(name)), ("args", args)]
        };
        events.push(meta("process_name", json!({"name": plane.name})));
        events.push(meta("process_sort_index", json!({"sort_index": pid})));
        let mut lines: BTreeMap<i64, &str> = BTreeMap::new();
        for line in &plane.lines {
            let id = if line.display_id != 0 { line.display_id } else { line.id };
            let name = if line.display_name.is_empty() { &line.name } else { &line.display_name };
            lines.insert(id, name);
        }
        for (tid, name) in lines {
            let meta = |name: &str, args: Json| {
                vec![
                    ("ph", json!("M")),
                    ("pid", json!(pid)),
                    ("tid", json!(tid)),
                    ("name", json!(name)),
                    ("args", args),
                ]
            };
            if !name.is_empty() {
                events.push(meta("thread_name", json!({ "name": name })));
            }
            events.push(meta("thread_sort_index", json!({ "sort_index": tid })));
        }
    }
    for &(pid, plane) in &planes {
        let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
        let text = |v: &Value| match v {
            Value::Str(s) => s.clone(),
            Value::Ref(r) => stat_name(*r as i64).to_string(),
            Value::Int64(i) => i.to_string(),
            Value::Uint64(u) => u.to_string(),
            Value::Double(d) => d.to_string(),
            Value::Bytes(b) => format!("<{} bytes>", b.len()),
        };
        for line in &plane.lines {
            let tid = if line.display_id != 0 { line.display_id } else { line.id };
            let line_name = if line.display_name.is_empty() { &line.name } else { &line.display_name };
            if line_name == "Async XLA Ops" {
                continue;
            }
            for event in &line.events {
                let Some(offset_ps) = event.offset_ps else { continue };
                let meta = plane.event_metadata.get(&event.metadata_id);
                let mut args: BTreeMap<String, String> = BTreeMap::new();
                let name = match meta {
                    Some(m) if !m.display_name.is_empty() => {
                        args.insert("long_name".into(), m.name.clone());
                        m.display_name.clone()
                    }
                    Some(m) => m.name.clone(),
                    None => String::new(),
                };
                let stats = meta.map(|m| m.stats.as_slice()).unwrap_or(&[]).iter().chain(&event.stats);
                for s in stats {
                    let key = stat_name(s.metadata_id);
                    if let Some(v) = &s.value {
                        if !INTERNAL_STATS.contains(&key) {
                            args.insert(key.to_string(), text(v));
                        }
                    }
                }
                let ts_ps = i128::from(line.timestamp_ns) * 1000 + i128::from(offset_ps);
                let mut e = vec![
                    ("ph", json!("X")),
                    ("pid", json!(pid)),
                    ("tid", json!(tid)),
                    ("ts", json!(ts_ps as f64 / 1e6)),
                    ("dur", json!(event.duration_ps.max(1) as f64 / 1e6)),
                    ("name", json!(name)),
                ];
                if !args.is_empty() {
                    e.push(("args", json!(args)));
                }
                events.push(e);
            }
        }
    }
    events.push(Vec::new());
    let mut text = String::from("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push('{');
        for (j, (k, v)) in e.iter().enumerate() {
            if j > 0 {
                text.push_str(", ");
            }
            text.push_str(&format!("\"{k}\": "));
            python_dump(v, &mut text);
        }
        text.push('}');
    }
    text.push_str("]}");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes()).expect("gzip");
    std::fs::write(output, gz.finish().expect("gzip")).expect("write the trace");
    eprintln!("{} events, {} bytes of JSON", events.len(), text.len());
}

/// JSON as Python's `json.dump` writes it: `", "` and `": "` separators, keys in their order.
fn python_dump(v: &Json, out: &mut String) {
    match v {
        Json::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Json::String(k.clone()).to_string());
                out.push_str(": ");
                python_dump(v, out);
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_dump(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
