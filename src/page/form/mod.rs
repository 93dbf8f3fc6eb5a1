//! The page's forms of whole numbers: what was typed is kept as text, so that a bad value can
//! be quoted back in a message that starts with its field's label, and the page keeps showing
//! the figures of the last valid inputs meanwhile.
//!
//! [`Numbers`] holds the text of each [`NumberField`] of a form and validates it the same way
//! for every form: [`transformer`] (the built-in block; every field required), [`model`]
//! ("Model × chip") and [`sim`] (the workload compared with a simulator table), whose sizes
//! may be left empty to take the model config's value. The page draws every field with one
//! component (`web::components::number_input`).

use std::marker::PhantomData;

pub mod model;
pub mod sim;
pub mod transformer;

/// One whole-number input of a form.
pub trait NumberField: Copy + Eq + std::fmt::Debug + 'static {
    /// Every field, in the order the form shows them.
    const ALL: &'static [Self];

    /// How the field is named on the page; messages about it start with this.
    fn label(self) -> &'static str;

    /// The field's part of its input's element id (`seq-len`), after the form's prefix.
    fn key(self) -> &'static str;
}

/// The element id of a field's input in a form whose ids start with `prefix`.
pub fn input_id<F: NumberField>(prefix: &str, field: F) -> String {
    format!("{prefix}{}", field.key())
}

/// The text typed into each field of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbers<F> {
    /// One per field, in the order of [`NumberField::ALL`].
    texts: Vec<String>,
    fields: PhantomData<F>,
}

impl<F: NumberField> Numbers<F> {
    /// A form with each field's text given by `text`.
    pub fn from_fn(text: impl Fn(F) -> String) -> Self {
        Numbers { texts: F::ALL.iter().map(|&f| text(f)).collect(), fields: PhantomData }
    }

    /// A form showing these values; `None` leaves the field empty.
    pub fn of_values(value: impl Fn(F) -> Option<u64>) -> Self {
        Self::from_fn(|f| value(f).map(|v| v.to_string()).unwrap_or_default())
    }

    pub fn get(&self, field: F) -> &str {
        &self.texts[index(field)]
    }

    pub fn set(&mut self, field: F, text: String) {
        self.texts[index(field)] = text;
    }

    /// The same form with one field changed.
    pub fn with(&self, field: F, text: String) -> Self {
        let mut out = self.clone();
        out.set(field, text);
        out
    }

    /// The field's value: a whole number of at least 1, or a message naming the field.
    pub fn required(&self, field: F) -> Result<u64, String> {
        parse_count(field.label(), self.get(field))
    }

    /// Like [`Numbers::required`], but an empty field is `None` (the default applies).
    pub fn optional(&self, field: F) -> Result<Option<u64>, String> {
        let text = self.get(field);
        if text.trim().is_empty() {
            Ok(None)
        } else {
            self.required(field).map(Some)
        }
    }
}

fn index<F: NumberField>(field: F) -> usize {
    F::ALL.iter().position(|&f| f == field).expect("NumberField::ALL lists every field")
}

/// A whole number of at least 1, or a message that starts with the field's label.
pub fn parse_count(label: &str, text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("{label} is empty: enter a whole number of at least 1."));
    }
    match text.parse::<u64>() {
        Ok(0) => Err(format!("{label} must be at least 1 (got 0).")),
        Ok(v) => Ok(v),
        Err(_) if text.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("{label} is too large: \"{text}\" does not fit in 64 bits."))
        }
        Err(_) => Err(format!("{label} must be a whole number of at least 1 (got \"{text}\").")),
    }
}

/// The sizes of a workload, shared by "Model × chip" and the simulator comparison (the same
/// quantities, so the same labels and messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadField {
    Batch,
    SeqLen,
    OutputLen,
    Tp,
}

impl NumberField for WorkloadField {
    const ALL: &'static [Self] =
        &[WorkloadField::Batch, WorkloadField::SeqLen, WorkloadField::OutputLen, WorkloadField::Tp];

    fn label(self) -> &'static str {
        match self {
            WorkloadField::Batch => "Batch size",
            WorkloadField::SeqLen => "Input length",
            WorkloadField::OutputLen => "Output length",
            WorkloadField::Tp => "Tensor parallelism",
        }
    }

    fn key(self) -> &'static str {
        match self {
            WorkloadField::Batch => "batch",
            WorkloadField::SeqLen => "seq-len",
            WorkloadField::OutputLen => "output-len",
            WorkloadField::Tp => "tp",
        }
    }
}

impl WorkloadField {
    /// The name of the workload generator's parameter (as its errors say it).
    pub fn param_name(self) -> &'static str {
        match self {
            WorkloadField::Batch => "batch",
            WorkloadField::SeqLen => "seq_len",
            WorkloadField::OutputLen => "output_len",
            WorkloadField::Tp => "tp",
        }
    }

    /// The form's workload parameters (empty fields take the config's values).
    pub fn params(numbers: &Numbers<WorkloadField>) -> Result<workload::WorkloadParams, String> {
        Ok(workload::WorkloadParams {
            batch: numbers.optional(WorkloadField::Batch)?,
            seq_len: numbers.optional(WorkloadField::SeqLen)?,
            output_len: numbers.optional(WorkloadField::OutputLen)?,
            tp: numbers.optional(WorkloadField::Tp)?,
        })
    }

    /// The form showing these parameters.
    pub fn numbers(p: &workload::WorkloadParams) -> Numbers<WorkloadField> {
        Numbers::of_values(|f| match f {
            WorkloadField::Batch => p.batch,
            WorkloadField::SeqLen => p.seq_len,
            WorkloadField::OutputLen => p.output_len,
            WorkloadField::Tp => p.tp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::WorkloadParams;

    #[test]
    fn every_bad_value_is_named_by_its_field() {
        for (text, expect) in [
            ("", "Batch size is empty: enter a whole number of at least 1."),
            ("0", "Batch size must be at least 1 (got 0)."),
            (" 12x", "Batch size must be a whole number of at least 1 (got \"12x\")."),
            ("-3", "Batch size must be a whole number of at least 1 (got \"-3\")."),
            (
                "99999999999999999999999",
                "Batch size is too large: \"99999999999999999999999\" does not fit in 64 bits.",
            ),
        ] {
            let n = Numbers::<WorkloadField>::from_fn(|_| text.to_string());
            assert_eq!(n.required(WorkloadField::Batch).unwrap_err(), expect, "{text:?}");
        }
        assert_eq!(parse_count("S", " 42 "), Ok(42));
    }

    #[test]
    fn empty_optional_fields_take_the_default_and_others_are_checked() {
        let n = Numbers::<WorkloadField>::from_fn(|_| String::new()).with(WorkloadField::Tp, "2".into());
        assert_eq!(WorkloadField::params(&n), Ok(WorkloadParams { tp: Some(2), ..WorkloadParams::default() }));
        let bad = n.with(WorkloadField::OutputLen, "x".into());
        assert!(WorkloadField::params(&bad).unwrap_err().starts_with("Output length must be"));
    }

    #[test]
    fn params_and_numbers_round_trip() {
        let p = WorkloadParams { batch: Some(4), seq_len: None, output_len: Some(128), tp: Some(8) };
        let n = WorkloadField::numbers(&p);
        assert_eq!(n.get(WorkloadField::SeqLen), "");
        assert_eq!(n.get(WorkloadField::Tp), "8");
        assert_eq!(WorkloadField::params(&n), Ok(p));
    }

    #[test]
    fn ids_are_the_prefix_and_the_key() {
        assert_eq!(input_id("in-model-", WorkloadField::SeqLen), "in-model-seq-len");
        assert_eq!(input_id("sim-", WorkloadField::Tp), "sim-tp");
        let keys: Vec<&str> = WorkloadField::ALL.iter().map(|f| f.key()).collect();
        assert_eq!(keys, ["batch", "seq-len", "output-len", "tp"]);
    }
}
