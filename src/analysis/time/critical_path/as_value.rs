//! The JSON form of the critical paths (the keys of `docs/trace-analysis.md`, "Critical path"),
//! written and read by hand (`crate::time::json_fields`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{CriticalPath, Lane, PathEvent, PathItem};
use crate::time::json_fields::{f, n, object, text};

fn to_value(p: &CriticalPath) -> Value {
    let top = p.top.iter().map(|i| {
        Value::Object(object(vec![
            ("name", i.name.as_str().into()),
            ("side", i.side.into()),
            ("time_us", i.time_us.into()),
        ]))
    });
    let mut fields = vec![
        ("window", p.window.as_str().into()),
        ("length_us", p.length_us.into()),
        ("gpu_us", p.gpu_us.into()),
        ("cpu_us", p.cpu_us.into()),
        ("launch_us", p.launch_us.into()),
        ("other_us", p.other_us.into()),
        ("kernels", p.kernels.into()),
        ("calls", p.calls.into()),
        ("top", Value::Array(top.collect())),
    ];
    if !p.drawn.is_empty() {
        let drawn = p.drawn.iter().map(|e| {
            let mut event = match e.lane {
                Lane::Cpu { tid } => vec![("side", "cpu".into()), ("tid", tid.into())],
                Lane::Gpu { device, stream } => {
                    vec![("side", "gpu".into()), ("device", device.into()), ("stream", stream.into())]
                }
            };
            event.extend([
                ("start_us", e.start_us.into()),
                ("end_us", e.end_us.into()),
                ("name", e.name.as_str().into()),
            ]);
            Value::Object(object(event))
        });
        fields.push(("drawn", Value::Array(drawn.collect())));
    }
    Value::Object(object(fields))
}

fn event_of(e: &Value) -> Option<PathEvent> {
    let int = |k: &str| e.get(k)?.as_i64();
    let lane = match e.get("side")?.as_str()? {
        "gpu" => Lane::Gpu { device: int("device")?, stream: int("stream")? },
        _ => Lane::Cpu { tid: int("tid")? },
    };
    Some(PathEvent { lane, start_us: f(e, "start_us")?, end_us: f(e, "end_us")?, name: text(e, "name")? })
}

fn from_value(v: &Value) -> Option<CriticalPath> {
    let top = v
        .get("top")?
        .as_array()?
        .iter()
        .map(|i| {
            let side = if i.get("side")?.as_str()? == "gpu" { "gpu" } else { "cpu" };
            Some(PathItem { name: text(i, "name")?, side, time_us: f(i, "time_us")? })
        })
        .collect::<Option<_>>()?;
    Some(CriticalPath {
        window: text(v, "window")?,
        length_us: f(v, "length_us")?,
        gpu_us: f(v, "gpu_us")?,
        cpu_us: f(v, "cpu_us")?,
        launch_us: f(v, "launch_us")?,
        other_us: f(v, "other_us")?,
        kernels: n(v, "kernels")?,
        calls: n(v, "calls")?,
        top,
        drawn: match v.get("drawn") {
            Some(list) => list.as_array()?.iter().map(event_of).collect::<Option<_>>()?,
            None => Vec::new(),
        },
    })
}

pub fn serialize<S: Serializer>(paths: &[CriticalPath], s: S) -> Result<S::Ok, S::Error> {
    Value::Array(paths.iter().map(to_value).collect()).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<CriticalPath>, D::Error> {
    // Through one `Value`, as the other parts of the report are read: no code of its own per
    // deserializer.
    let list = match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(serde::de::Error::custom("critical_path: not a list")),
    };
    list.iter()
        .map(|v| from_value(v).ok_or_else(|| serde::de::Error::custom("critical_path: a malformed field")))
        .collect()
}
