//! Reading and writing the hand-written JSON forms of the time report's parts (`waits`,
//! `launch_cost`, `critical_path`) through `serde_json::Value`: derived serde code is built once
//! per serializer and deserializer the page uses, several KB of its download for a few keys.

use serde_json::{Map, Value};

/// An object of `fields` in their order.
pub(crate) fn object(fields: Vec<(&str, Value)>) -> Map<String, Value> {
    fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A number field.
pub(crate) fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k)?.as_f64()
}

/// A count field.
pub(crate) fn n(v: &Value, k: &str) -> Option<u64> {
    v.get(k)?.as_u64()
}

/// A text field.
pub(crate) fn text(v: &Value, k: &str) -> Option<String> {
    Some(v.get(k)?.as_str()?.to_string())
}
