//! The borrowed, lenient view of one trace event, filled from the event's bytes by
//! [`super::extract`] or, where it defers, by serde (the same view either way): only the fields
//! the analysis reads, each tolerant of the type variations real traces have (string pids, float
//! ids, missing keys). A field of an unexpected type reads as absent rather than failing the
//! trace; malformed JSON still fails.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use trace::CollectiveArgs;

/// Visitor methods that read a value of a kind the field does not take as absent (`$absent`),
/// consuming it whole so that parsing goes on.
macro_rules! absent_for {
    ($absent:expr; scalars) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
    ($absent:expr; numbers) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
    ($absent:expr; strings) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
    ($absent:expr; seqs) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($absent)
        }
    };
    ($absent:expr; maps) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($absent)
        }
    };
}

/// A string field, absent when the value is not a string.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Option<Cow<'a, str>>);

impl<'a> Text<'a> {
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            absent_for!(Text(None); numbers);
            absent_for!(Text(None); scalars);
            absent_for!(Text(None); seqs);
            absent_for!(Text(None); maps);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A number field: integers, floats and numeric strings read as `f64`; anything else is absent.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Num(pub Option<f64>);

impl Num {
    /// As a non-negative integer id (correlation, External id).
    pub fn id(self) -> Option<u64> {
        self.0.filter(|v| v.is_finite() && *v >= 0.0 && v.fract() == 0.0 && *v < 1.8e19).map(|v| v as u64)
    }

    /// As a signed integer (pid, tid, device, stream).
    pub fn int(self) -> Option<i64> {
        self.0.filter(|v| v.is_finite() && v.fract() == 0.0 && v.abs() < 9.2e18).map(|v| v as i64)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(Num(v.trim().parse::<f64>().ok().filter(|x| x.is_finite())))
            }
            absent_for!(Num(None); scalars);
            absent_for!(Num(None); seqs);
            absent_for!(Num(None); maps);
        }
        d.deserialize_any(V)
    }
}

/// A value's JSON text exactly as written (serde's [`RawValue`], borrowed as text so that the
/// one-pass extractor, [`super::extract`], can make one too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawJson<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for RawJson<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| RawJson(raw.get()))
    }
}

/// The `args` keys the analysis reads.
#[derive(Debug, Default, Deserialize)]
pub struct RawArgs<'a> {
    #[serde(default, rename = "External id")]
    pub external_id: Num,
    #[serde(default)]
    pub correlation: Num,
    #[serde(default)]
    pub device: Num,
    #[serde(default)]
    pub stream: Num,
    #[serde(default)]
    pub bytes: Num,
    #[serde(default, borrow)]
    pub kind: Text<'a>,
    /// On a ROCm launch call, the kernel it launches (how a graph-capture trace names the
    /// kernels of a graph that did not run).
    #[serde(default, borrow)]
    pub kernel: Text<'a>,
    /// What `record_shapes=True` writes on a `cpu_op`: one entry per input, kept as written.
    #[serde(default, borrow, rename = "Input Dims")]
    pub input_dims: Option<RawJson<'a>>,
    #[serde(default, borrow, rename = "Input type")]
    pub input_types: Option<RawJson<'a>>,
    #[serde(default, borrow, rename = "Concrete Inputs")]
    pub concrete_inputs: Option<RawJson<'a>>,
    #[serde(default, borrow, rename = "Input Strides")]
    pub input_strides: Option<RawJson<'a>>,
    // ---- c10d's keys on an NCCL/RCCL kernel (read by `crate::ranks`; see `collective`).
    #[serde(default, borrow, rename = "Collective name")]
    pub collective_name: Text<'a>,
    #[serde(default, rename = "In msg nelems")]
    pub in_msg_nelems: Num,
    #[serde(default, rename = "Out msg nelems")]
    pub out_msg_nelems: Num,
    #[serde(default, rename = "Group size")]
    pub group_size: Num,
    #[serde(default, borrow)]
    pub dtype: Text<'a>,
    #[serde(default, borrow, rename = "Process Group Name")]
    pub pg_name: Text<'a>,
    #[serde(default, borrow, rename = "Process Group Description")]
    pub pg_desc: Text<'a>,
    #[serde(default, borrow, rename = "Process Group Ranks")]
    pub pg_ranks: Text<'a>,
    // ---- Inductor's own estimates on a Triton launch's op (`benchmark_kernel` on).
    #[serde(default)]
    pub kernel_num_gb: Num,
    #[serde(default)]
    pub kernel_flop: Num,
}

impl RawArgs<'_> {
    /// The collective keys of a kernel's args, `None` when it has none of them.
    pub fn collective(&self) -> Option<CollectiveArgs<'_>> {
        let c = CollectiveArgs {
            collective: self.collective_name.as_str(),
            in_nelems: self.in_msg_nelems.id(),
            out_nelems: self.out_msg_nelems.id(),
            group_size: self.group_size.id(),
            dtype: self.dtype.as_str(),
            group_name: self.pg_name.as_str(),
            group_desc: self.pg_desc.as_str(),
            group_ranks: self.pg_ranks.as_str(),
        };
        (c != CollectiveArgs::default()).then_some(c)
    }
}

/// `args` when it is an object; anything else reads as no args.
#[derive(Debug, Default)]
pub struct MaybeArgs<'a>(pub Option<RawArgs<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeArgs<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MaybeArgs<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawArgs::deserialize(de::value::MapAccessDeserializer::new(map)).map(|a| MaybeArgs(Some(a)))
            }
            absent_for!(MaybeArgs(None); seqs);
            absent_for!(MaybeArgs(None); strings);
            absent_for!(MaybeArgs(None); numbers);
            absent_for!(MaybeArgs(None); scalars);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One event: the keys every kept event kind needs.
#[derive(Debug, Default, Deserialize)]
pub struct RawEvent<'a> {
    #[serde(default, borrow)]
    pub ph: Text<'a>,
    #[serde(default, borrow)]
    pub cat: Text<'a>,
    #[serde(default, borrow)]
    pub name: Text<'a>,
    #[serde(default)]
    pub pid: Num,
    #[serde(default)]
    pub tid: Num,
    #[serde(default)]
    pub ts: Num,
    #[serde(default)]
    pub dur: Num,
    #[serde(default, borrow)]
    pub args: MaybeArgs<'a>,
}

/// One `deviceProperties[]` entry as written.
#[derive(Debug, Default, Deserialize)]
pub struct RawDevice<'a> {
    #[serde(default)]
    pub id: Num,
    #[serde(default, borrow)]
    pub name: Text<'a>,
    #[serde(default, rename = "warpSize")]
    pub warp_size: Num,
    #[serde(default, rename = "computeMajor")]
    pub compute_major: Num,
    #[serde(default, rename = "computeMinor")]
    pub compute_minor: Num,
    #[serde(default, rename = "numSms")]
    pub num_sms: Num,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_type_variations() {
        let e: RawEvent = serde_json::from_str(
            r#"{"ph":"X","pid":"Spans","tid":"PyTorch Profiler","ts":"12.5","name":7,"args":{"External id":3.0,"correlation":"9","kind":"Dispatch Task"}}"#,
        )
        .unwrap();
        assert_eq!(e.pid.int(), None);
        assert_eq!(e.ts.0, Some(12.5));
        assert_eq!(e.name.as_str(), None);
        let a = e.args.0.unwrap();
        assert_eq!(a.external_id.id(), Some(3));
        assert_eq!(a.correlation.id(), Some(9));
        assert_eq!(a.kind.as_str(), Some("Dispatch Task"));
        let e: RawEvent = serde_json::from_str(r#"{"name":"a\"b","args":[1,{"x":2}],"cat":null}"#).unwrap();
        assert_eq!(e.name.as_str(), Some("a\"b"));
        assert!(e.args.0.is_none());
        assert_eq!(e.cat.as_str(), None);
    }

    #[test]
    fn rejects_malformed_json() {
        assert!(serde_json::from_str::<RawEvent>(r#"{"name": "x", }"#).is_err());
        assert!(serde_json::from_str::<RawEvent>(r#"{"name": tru}"#).is_err());
    }
}
