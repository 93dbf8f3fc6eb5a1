//! Reading a link's inflated JSON straight into [`super::SharedState`], in two passes over at most
//! [`limits::SHARE_STATE_BYTES`]:
//!
//! 1. [`view_tag`] reads only the envelope's `state.view` tag (everything else is skipped
//!    without being kept), so that a view this page does not know is reported as made by a
//!    newer version, wherever the tag stands in the object;
//! 2. [`envelope`] reads the envelope with that tag known: the view's fields go directly into
//!    its variant of [`SharedView`] (the `view` key among them is ignored).
//!
//! Nothing is first read into a `serde_json::Value` or buffered whole: serde's own
//! internally-tagged enums buffer the object into an untyped tree to find the tag, which for a
//! link is as large as the state itself many times over. Nesting cannot exhaust the stack:
//! values a pass does not read are skipped by serde_json without recursion, the views' types
//! nest less than 10 levels (so deeper input fails at the first wrong type), and serde_json's
//! default recursion limit of 128 levels bounds whatever else recurses.

use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::state::SharedView;
use analysis::pipeline::TraceTime;
use analysis::time::gap::Gap;
use analysis::{Comparison, TraceSummary};
use fusion::json::GraphFile;
use fusion::transformer::TransformerConfig;
use hardware::ChipChoice;
use simcsv::SimSetup;
use workload::ModelSpec;

/// The envelope as read: the format it says it is, the view and what is selected in it.
pub(super) struct Envelope {
    pub v: u32,
    pub state: SharedView,
    pub selected_op: Option<String>,
    pub chip: Option<ChipChoice>,
    pub tab: Option<String>,
}

/// The `view` tag of the envelope's state, if it has one (first pass).
pub(super) fn view_tag(json: &[u8]) -> Result<Option<String>, serde_json::Error> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(default)]
        state: Option<PeekState>,
    }
    #[derive(Deserialize)]
    struct PeekState {
        #[serde(default)]
        view: Option<String>,
    }
    let peek: Peek = serde_json::from_slice(json)?;
    Ok(peek.state.and_then(|s| s.view))
}

/// The envelope, its state read as the view `tag` (second pass).
pub(super) fn envelope(json: &[u8], tag: &str) -> Result<Envelope, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let envelope = EnvelopeSeed { tag }.deserialize(&mut de)?;
    de.end()?;
    Ok(envelope)
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    V,
    State,
    SelectedOp,
    Chip,
    Tab,
    #[serde(other)]
    Other,
}

struct EnvelopeSeed<'t> {
    tag: &'t str,
}

impl<'de> DeserializeSeed<'de> for EnvelopeSeed<'_> {
    type Value = Envelope;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Envelope, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EnvelopeSeed<'_> {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a share-link state: an object with `v` and `state`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let (mut v, mut state, mut selected_op, mut chip, mut tab) = (None, None, None, None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::V if v.is_none() => v = Some(map.next_value()?),
                Key::State if state.is_none() => state = Some(map.next_value_seed(ViewSeed { tag: self.tag })?),
                Key::SelectedOp if selected_op.is_none() => selected_op = Some(map.next_value()?),
                Key::Chip if chip.is_none() => chip = Some(map.next_value()?),
                Key::Tab if tab.is_none() => tab = Some(map.next_value()?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
                Key::V => return Err(de::Error::duplicate_field("v")),
                Key::State => return Err(de::Error::duplicate_field("state")),
                Key::SelectedOp => return Err(de::Error::duplicate_field("selected_op")),
                Key::Chip => return Err(de::Error::duplicate_field("chip")),
                Key::Tab => return Err(de::Error::duplicate_field("tab")),
            }
        }
        Ok(Envelope {
            v: v.ok_or_else(|| de::Error::missing_field("v"))?,
            state: state.ok_or_else(|| de::Error::missing_field("state"))?,
            selected_op: selected_op.flatten(),
            chip: chip.flatten(),
            tab: tab.flatten(),
        })
    }
}

/// Reads a state object as the view `tag`.
struct ViewSeed<'t> {
    tag: &'t str,
}

impl<'de> DeserializeSeed<'de> for ViewSeed<'_> {
    type Value = SharedView;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SharedView, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ViewSeed<'_> {
    type Value = SharedView;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the fields of a \"{}\" view", self.tag)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SharedView, A::Error> {
        ViewFields::deserialize(Tagged { tag: self.tag, map })
    }
}

/// [`SharedView`]'s variants and fields for serde: a remote definition that the compiler checks
/// against `SharedView` field by field, read as an enum whose variant is the known tag and whose
/// fields are the state object's entries ([`Tagged`]).
#[derive(Deserialize)]
#[serde(remote = "SharedView", rename_all = "snake_case")]
enum ViewFields {
    Transformer {
        config: TransformerConfig,
    },
    Graph {
        file_name: String,
        graph: GraphFile,
    },
    TraceSummary {
        file_name: String,
        summary: TraceSummary,
        #[serde(default)]
        trimmed: bool,
        #[serde(default)]
        time: Option<Box<TraceTime>>,
        #[serde(default)]
        overview: Option<Box<analysis::findings::Overview>>,
    },
    TraceComparison {
        files: (String, String),
        #[serde(with = "crate::compact::compact_or_full")]
        comparison: Comparison,
        #[serde(default)]
        trimmed: bool,
        #[serde(default)]
        gap: Option<Box<Gap>>,
        #[serde(default)]
        fusion: Option<Box<[analysis::trace_fusion::TraceFusion; 2]>>,
        #[serde(default)]
        overview: Option<Box<analysis::findings::Overview>>,
    },
    Model {
        spec: ModelSpec,
    },
    OpTrace {
        file_name: String,
        text: String,
    },
    SimTable {
        file_name: String,
        text: String,
        setup: SimSetup,
        #[serde(default)]
        notes: Vec<String>,
    },
    Ranks {
        drawn: view::ranks::RanksDrawn,
    },
}

/// A state object's remaining entries as an enum: the variant is the tag read in the first
/// pass, its fields the entries.
struct Tagged<'t, A> {
    tag: &'t str,
    map: A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Tagged<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for Tagged<'_, A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), A::Error> {
        let variant = seed.deserialize(self.tag.into_deserializer())?;
        Ok((variant, self))
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Tagged<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        Err(de::Error::custom("a shared view has fields"))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, A::Error> {
        Err(de::Error::custom("a shared view has named fields"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, A::Error> {
        Err(de::Error::custom("a shared view has named fields"))
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.map)
    }
}
