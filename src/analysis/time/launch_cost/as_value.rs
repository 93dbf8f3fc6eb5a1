//! The JSON form of a [`LaunchReport`] (the keys of `docs/trace-analysis.md`, "Launch cost"),
//! written and read by hand (`crate::time::json_fields`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{HostBound, LaunchCost, LaunchReport, SmallKernels, StepLaunchCost, Stretch};
use crate::time::json_fields::{f, n, object, text};

fn stretch(s: &Stretch) -> Value {
    Value::Object(object(vec![
        ("device", s.device.into()),
        ("stream", s.stream.into()),
        ("start_us", s.start_us.into()),
        ("kernels", s.kernels.into()),
        ("span_us", s.span_us.into()),
        ("idle_us", s.idle_us.into()),
    ]))
}

fn cost(c: &LaunchCost) -> Map<String, Value> {
    let hb = &c.host_bound;
    let mut host_bound = object(vec![
        ("stretches", hb.stretches.into()),
        ("kernels", hb.kernels.into()),
        ("span_us", hb.span_us.into()),
        ("idle_us", hb.idle_us.into()),
    ]);
    if let Some(l) = &hb.longest {
        host_bound.insert("longest".into(), stretch(l));
    }
    let names = c
        .small
        .names
        .iter()
        .map(|(n, count)| Value::Object(object(vec![("name", n.as_str().into()), ("count", (*count).into())])));
    let small = object(vec![
        ("kernels", c.small.kernels.into()),
        ("kernel_us", c.small.kernel_us.into()),
        ("launch_us", c.small.launch_us.into()),
        ("names", Value::Array(names.collect())),
    ]);
    object(vec![
        ("calls", c.calls.into()),
        ("launched_kernels", c.launched_kernels.into()),
        ("launch_cpu_us", c.launch_cpu_us.into()),
        ("per_launch_us", c.per_launch_us.into()),
        ("latency_median_us", c.latency_median_us.into()),
        ("latency_p90_us", c.latency_p90_us.into()),
        ("host_bound", Value::Object(host_bound)),
        ("small_kernels", Value::Object(small)),
        ("graph_saving_us", c.graph_saving_us.into()),
    ])
}

pub(super) fn to_value(r: &LaunchReport) -> Value {
    let mut m = cost(&r.whole);
    if !r.steps.is_empty() {
        let steps = r.steps.iter().map(|s| {
            let mut step = object(vec![("window", s.window.as_str().into())]);
            step.extend(cost(&s.cost));
            Value::Object(step)
        });
        m.insert("steps".into(), Value::Array(steps.collect()));
    }
    Value::Object(m)
}

fn stretch_of(v: &Value) -> Option<Stretch> {
    Some(Stretch {
        device: v.get("device")?.as_i64()?,
        stream: v.get("stream")?.as_i64()?,
        start_us: f(v, "start_us")?,
        kernels: n(v, "kernels")?,
        span_us: f(v, "span_us")?,
        idle_us: f(v, "idle_us")?,
    })
}

fn cost_of(v: &Value) -> Option<LaunchCost> {
    let hb = v.get("host_bound")?;
    let small = v.get("small_kernels")?;
    let names = small
        .get("names")?
        .as_array()?
        .iter()
        .map(|e| Some((text(e, "name")?, n(e, "count")?)))
        .collect::<Option<_>>()?;
    Some(LaunchCost {
        calls: n(v, "calls")?,
        launched_kernels: n(v, "launched_kernels")?,
        launch_cpu_us: f(v, "launch_cpu_us")?,
        per_launch_us: f(v, "per_launch_us")?,
        latency_median_us: f(v, "latency_median_us")?,
        latency_p90_us: f(v, "latency_p90_us")?,
        host_bound: HostBound {
            stretches: n(hb, "stretches")?,
            kernels: n(hb, "kernels")?,
            span_us: f(hb, "span_us")?,
            idle_us: f(hb, "idle_us")?,
            longest: match hb.get("longest") {
                Some(l) => Some(stretch_of(l)?),
                None => None,
            },
        },
        small: SmallKernels {
            kernels: n(small, "kernels")?,
            kernel_us: f(small, "kernel_us")?,
            launch_us: f(small, "launch_us")?,
            names,
        },
        graph_saving_us: f(v, "graph_saving_us")?,
    })
}

pub(super) fn from_value(v: &Value) -> Option<LaunchReport> {
    let steps = match v.get("steps") {
        Some(list) => list
            .as_array()?
            .iter()
            .map(|s| Some(StepLaunchCost { window: text(s, "window")?, cost: cost_of(s)? }))
            .collect::<Option<_>>()?,
        None => Vec::new(),
    };
    Some(LaunchReport { whole: cost_of(v)?, steps })
}

pub fn serialize<S: Serializer>(r: &Option<LaunchReport>, s: S) -> Result<S::Ok, S::Error> {
    r.as_ref().map(to_value).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LaunchReport>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => from_value(&v).map(Some).ok_or_else(|| serde::de::Error::custom("launch_cost: a malformed field")),
    }
}
