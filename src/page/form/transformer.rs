//! The built-in transformer block's inputs as typed: S, H, NH and the element size, each
//! required.

use super::{NumberField, Numbers};
use fusion::transformer::TransformerConfig;

/// One input of the transformer form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransformerField {
    SeqLen,
    Hidden,
    Heads,
    DtypeBytes,
}

impl NumberField for TransformerField {
    const ALL: &'static [Self] =
        &[TransformerField::SeqLen, TransformerField::Hidden, TransformerField::Heads, TransformerField::DtypeBytes];

    fn label(self) -> &'static str {
        match self {
            TransformerField::SeqLen => "Sequence length S",
            TransformerField::Hidden => "Hidden size H",
            TransformerField::Heads => "Heads NH",
            TransformerField::DtypeBytes => "Bytes per element",
        }
    }

    fn key(self) -> &'static str {
        match self {
            TransformerField::SeqLen => "seq-len",
            TransformerField::Hidden => "hidden",
            TransformerField::Heads => "heads",
            TransformerField::DtypeBytes => "dtype",
        }
    }
}

/// The element ids of the transformer form's inputs start with this.
pub const ID_PREFIX: &str = "in-";

/// The form as typed.
pub type TransformerForm = Numbers<TransformerField>;

impl From<TransformerConfig> for TransformerForm {
    fn from(c: TransformerConfig) -> Self {
        Numbers::of_values(|f| {
            Some(match f {
                TransformerField::SeqLen => c.seq_len,
                TransformerField::Hidden => c.hidden_dim,
                TransformerField::Heads => c.num_heads,
                TransformerField::DtypeBytes => c.dtype_bytes,
            })
        })
    }
}

/// The block's parameters, or a message naming the first field that is not a whole number ≥ 1.
pub fn config(form: &TransformerForm) -> Result<TransformerConfig, String> {
    Ok(TransformerConfig {
        seq_len: form.required(TransformerField::SeqLen)?,
        hidden_dim: form.required(TransformerField::Hidden)?,
        num_heads: form.required(TransformerField::Heads)?,
        dtype_bytes: form.required(TransformerField::DtypeBytes)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_block_round_trips_and_bad_fields_are_named() {
        let c = TransformerConfig::default();
        let form = TransformerForm::from(c);
        assert_eq!(config(&form), Ok(c));
        let bad = form.with(TransformerField::Heads, "x".into());
        assert_eq!(config(&bad).unwrap_err(), "Heads NH must be a whole number of at least 1 (got \"x\").");
        assert_eq!(super::super::input_id(ID_PREFIX, TransformerField::DtypeBytes), "in-dtype");
    }
}
