//! The overview's JSON form written and read by hand through `serde_json::Value`, for the
//! ranks view's drawing (`view::ranks::RanksDrawn`): the page reads it, and derived
//! serde code for the overview's five types would be several KB of its download. The keys are
//! the derived ones (`docs/ranks.md`, "JSON").

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Evidence, Finding, FindingKind, Overview, Verdict, VerdictSide};
use crate::time::json_fields::{f, object, text};
use trace::platform::Processor;

/// Every kind with its JSON name.
const KINDS: [(FindingKind, &str); 12] = [
    (FindingKind::OpGap, "op_gap"),
    (FindingKind::FusionDifference, "fusion_difference"),
    (FindingKind::Opportunity, "opportunity"),
    (FindingKind::Idle, "idle"),
    (FindingKind::CategoryShift, "category_shift"),
    (FindingKind::Op, "op"),
    (FindingKind::Category, "category"),
    (FindingKind::Straggler, "straggler"),
    (FindingKind::CollectiveWait, "collective_wait"),
    (FindingKind::ExposedCommunication, "exposed_communication"),
    (FindingKind::GroupSaving, "group_saving"),
    (FindingKind::GroupTraffic, "group_traffic"),
];

/// Every evidence with its JSON name.
const EVIDENCE: [(Evidence, &str); 4] = [
    (Evidence::Fusion, "fusion"),
    (Evidence::Kernels, "kernels"),
    (Evidence::Time, "time"),
    (Evidence::Ranks, "ranks"),
];

fn name<T: PartialEq + Copy>(table: &[(T, &'static str)], x: T) -> &'static str {
    table.iter().find(|(t, _)| *t == x).map_or("", |(_, n)| n)
}

fn of_name<T: Copy>(table: &[(T, &'static str)], s: &str) -> Option<T> {
    table.iter().find(|(_, n)| *n == s).map(|(t, _)| *t)
}

fn to_value(o: &Overview) -> Value {
    let sides = o.verdict.sides.iter().map(|s| {
        let mut fields = vec![
            ("key", s.key.as_str().into()),
            ("name", s.name.as_str().into()),
            ("gpu_time_us", s.gpu_time_us.into()),
        ];
        // Absent figures are left out, as the derived form does.
        for (k, x) in [("span_us", s.span_us), ("busy_us", s.busy_us), ("idle_us", s.idle_us)] {
            if let Some(x) = x {
                fields.push((k, x.into()));
            }
        }
        if !s.processor.is_gpu() {
            fields.push(("processor", "cpu".into()));
        }
        Value::Object(object(fields))
    });
    let findings = o.findings.iter().map(|x| {
        Value::Object(object(vec![
            ("kind", name(&KINDS, x.kind).into()),
            ("time_us", x.time_us.into()),
            ("text", x.text.as_str().into()),
            ("evidence", name(&EVIDENCE, x.evidence).into()),
        ]))
    });
    let verdict = object(vec![("text", o.verdict.text.as_str().into()), ("sides", Value::Array(sides.collect()))]);
    Value::Object(object(vec![("verdict", Value::Object(verdict)), ("findings", Value::Array(findings.collect()))]))
}

fn from_value(v: &Value) -> Option<Overview> {
    let verdict = v.get("verdict")?;
    let sides = verdict
        .get("sides")?
        .as_array()?
        .iter()
        .map(|s| {
            Some(VerdictSide {
                key: text(s, "key")?,
                name: text(s, "name")?,
                gpu_time_us: f(s, "gpu_time_us")?,
                span_us: f(s, "span_us"),
                busy_us: f(s, "busy_us"),
                idle_us: f(s, "idle_us"),
                processor: match s.get("processor").and_then(Value::as_str) {
                    Some("cpu") => Processor::Cpu,
                    _ => Processor::Gpu,
                },
            })
        })
        .collect::<Option<_>>()?;
    let findings = v
        .get("findings")?
        .as_array()?
        .iter()
        .map(|x| {
            Some(Finding {
                kind: of_name(&KINDS, x.get("kind")?.as_str()?)?,
                time_us: f(x, "time_us")?,
                text: text(x, "text")?,
                evidence: of_name(&EVIDENCE, x.get("evidence")?.as_str()?)?,
            })
        })
        .collect::<Option<_>>()?;
    Some(Overview { verdict: Verdict { text: text(verdict, "text")?, sides }, findings })
}

pub fn serialize<S: Serializer>(o: &Overview, s: S) -> Result<S::Ok, S::Error> {
    to_value(o).serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Overview, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(Overview::default()),
        Some(v) => from_value(&v).ok_or_else(|| serde::de::Error::custom("overview: a malformed field")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_written_form_is_the_derived_one_both_ways() {
        let o = Overview {
            verdict: Verdict {
                text: "2 ranks".into(),
                sides: vec![VerdictSide {
                    key: "rank1".into(),
                    name: "rank 1".into(),
                    gpu_time_us: 5.0,
                    span_us: Some(9.0),
                    busy_us: Some(5.0),
                    idle_us: None,
                    processor: Processor::Cpu,
                }],
            },
            findings: KINDS
                .iter()
                .zip(EVIDENCE.iter().cycle())
                .map(|(&(kind, _), &(evidence, _))| Finding { kind, time_us: 1.5, text: "t".into(), evidence })
                .collect(),
        };
        assert_eq!(to_value(&o), serde_json::to_value(&o).unwrap());
        assert_eq!(from_value(&serde_json::to_value(&o).unwrap()), Some(o));
    }
}
