//! A trace comparison in the compact form share links carry (format 2): every distinct kernel
//! name once, in a table, referred to by index; rows as arrays in a fixed column order instead
//! of objects with keys; sides in the order of the platforms. It holds exactly the
//! [`Comparison`] it was made from ([`CompactComparison::expand`] gives it back, equal), so the
//! view a link opens is the view that was shared; only the encoding is smaller. With the kernel
//! lists trimmed as [`crate::trim_comparison`] does, every comparison of the shared
//! traces fits the 8 KB a typical link should stay under (tested below).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use analysis::compare::{CategoryRow, FusionDifference, LayerAlignment, LayerRow, Method, OpRow, OpSide, RowSide};
use analysis::summary::{KernelStat, PlatformEntry, SideStats};
use analysis::{Category, Comparison};

/// A kernel name with its classification (kept, not recomputed, so that a link shows what the
/// page that made it showed).
type NameEntry = (String, Category, Vec<Category>);
/// `[name index, count, total µs]`, or the name index alone for a side's only kernel (whose
/// count and time are the side's: the usual mapping row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum KernelCell {
    Whole(u32),
    Part(u32, u64, f64),
}
/// `[count, time µs, mean µs, share %, kernels]`.
type StatsCell = (u64, f64, f64, f64, Vec<KernelCell>);
/// `[op on this side (null: none, "": the row's), calls, stats]`.
type OpSideCell = (Option<String>, u64, StatsCell);

/// A mapping row's side: `0` for a side with no op and no kernel (most rows of unrelated
/// traces have one), else its cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum OpSideSlot {
    Empty(u8),
    Side(OpSideCell),
}

fn is_empty_side(s: &OpSide) -> bool {
    s.op.is_none() && s.calls == 0 && s.stats == EMPTY_STATS
}

const EMPTY_STATS: SideStats = SideStats { count: 0, time_us: 0.0, mean_us: 0.0, share_pct: 0.0, kernels: Vec::new() };

/// `[category, time ratio, stats per platform]`.
type CategoryCells = (Category, Option<f64>, Vec<Option<StatsCell>>);
/// `[op, method, side per platform]`.
type OpRowCells = (String, Method, Vec<Option<OpSideSlot>>);
/// `[fused platform, fused side, fused kernel, components, unfused kernels, count, time per
/// side, confidence, evidence]`.
type FusionCells = (String, String, u32, Vec<Category>, Vec<u32>, u64, BTreeMap<String, f64>, f64, String);
/// An aligned layer's row: `[category, [kernel indices, time µs] or null per platform, difference]`.
type LayerRowCells = (Category, Vec<Option<(Vec<u32>, f64)>>, Option<String>);
/// A layer alignment, each per-side value in the order of the platforms: `[phases, labels,
/// layers per step, kernels per layer, time per layer, rotation, rows]`.
type LayerCells = (
    Vec<Option<usize>>,
    Vec<Option<String>>,
    Vec<Option<usize>>,
    Vec<Option<usize>>,
    Vec<Option<f64>>,
    usize,
    Vec<LayerRowCells>,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactComparison {
    pub platforms: Vec<PlatformEntry>,
    pub time_ratio: String,
    names: Vec<NameEntry>,
    categories: Vec<CategoryCells>,
    op_mapping: Vec<OpRowCells>,
    fusion_differences: Vec<FusionCells>,
    /// Links trim it away ([`crate::trim_comparison`]); kept for a comparison compacted whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    layer_alignment: Vec<LayerCells>,
}

/// Interns kernel names while compacting.
#[derive(Default)]
struct Names {
    entries: Vec<NameEntry>,
    index: BTreeMap<NameEntry, u32>,
    /// The first entry of each name (for names outside kernel lists, which have no class).
    by_name: BTreeMap<String, u32>,
}

impl Names {
    fn id(&mut self, name: &str, category: Category, components: &[Category]) -> u32 {
        let entry = (name.to_string(), category, components.to_vec());
        if let Some(&i) = self.index.get(&entry) {
            return i;
        }
        let i = self.entries.len() as u32;
        self.entries.push(entry.clone());
        self.index.insert(entry, i);
        self.by_name.entry(name.to_string()).or_insert(i);
        i
    }

    /// A name seen outside kernel lists (fusion differences): only its text matters.
    fn plain(&mut self, name: &str) -> u32 {
        match self.by_name.get(name) {
            Some(&i) => i,
            None => self.id(name, Category::Other, &[]),
        }
    }

    fn stats(&mut self, s: &SideStats) -> StatsCell {
        let whole = s.kernels.len() == 1;
        let kernels = s
            .kernels
            .iter()
            .map(|k| {
                let i = self.id(&k.name, k.category, &k.components);
                if whole && k.count == s.count && k.time_us == s.time_us {
                    KernelCell::Whole(i)
                } else {
                    KernelCell::Part(i, k.count, k.time_us)
                }
            })
            .collect();
        (s.count, s.time_us, s.mean_us, s.share_pct, kernels)
    }
}

/// Why a compact comparison cannot be expanded (an edited link).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the shared comparison refers to kernel name {0}, which it does not hold")]
pub struct MissingName(u32);

impl CompactComparison {
    pub fn new(c: &Comparison) -> Self {
        let keys: Vec<&str> = c.platforms.iter().map(|p| p.key.as_str()).collect();
        let mut names = Names::default();
        let categories = c
            .categories
            .iter()
            .map(|r| (r.category, r.time_ratio, keys.iter().map(|k| r.sides.get(*k).map(|s| names.stats(s))).collect()))
            .collect();
        let op_mapping = c
            .op_mapping
            .iter()
            .map(|r| {
                let side = |names: &mut Names, s: &OpSide| {
                    if is_empty_side(s) {
                        return OpSideSlot::Empty(0);
                    }
                    let op = match &s.op {
                        Some(op) if *op == r.op && !op.is_empty() => Some(String::new()),
                        other => other.clone(),
                    };
                    OpSideSlot::Side((op, s.calls, names.stats(&s.stats)))
                };
                (r.op.clone(), r.method, keys.iter().map(|k| r.sides.get(*k).map(|s| side(&mut names, s))).collect())
            })
            .collect();
        let fusion_differences = c
            .fusion_differences
            .iter()
            .map(|d| {
                (
                    d.fused_platform.clone(),
                    d.fused_side.clone(),
                    names.plain(&d.fused_kernel),
                    d.components.clone(),
                    d.unfused_kernels.iter().map(|n| names.plain(n)).collect(),
                    d.count,
                    d.time_us.clone(),
                    d.confidence,
                    d.evidence.clone(),
                )
            })
            .collect();
        let layer_alignment = c.layer_alignment.iter().map(|a| layer_cells(a, &keys, &mut names)).collect();
        CompactComparison {
            platforms: c.platforms.clone(),
            time_ratio: c.time_ratio.clone(),
            names: names.entries,
            categories,
            op_mapping,
            fusion_differences,
            layer_alignment,
        }
    }

    /// The comparison it holds.
    pub fn expand(&self) -> Result<Comparison, MissingName> {
        let name = |i: u32| self.names.get(i as usize).ok_or(MissingName(i));
        let stats = |s: &StatsCell| -> Result<SideStats, MissingName> {
            let kernels =
                s.4.iter()
                    .map(|k| {
                        let (i, count, time_us) = match *k {
                            KernelCell::Whole(i) => (i, s.0, s.1),
                            KernelCell::Part(i, count, time_us) => (i, count, time_us),
                        };
                        let (n, category, components) = name(i)?;
                        Ok(KernelStat {
                            name: n.clone(),
                            count,
                            time_us,
                            category: *category,
                            components: components.clone(),
                        })
                    })
                    .collect::<Result<_, _>>()?;
            Ok(SideStats { count: s.0, time_us: s.1, mean_us: s.2, share_pct: s.3, kernels })
        };
        let keys: Vec<String> = self.platforms.iter().map(|p| p.key.clone()).collect();
        let by_key = |cells: &[Option<StatsCell>]| -> Result<BTreeMap<String, SideStats>, MissingName> {
            let mut m = BTreeMap::new();
            for (k, c) in keys.iter().zip(cells) {
                if let Some(c) = c {
                    m.insert(k.clone(), stats(c)?);
                }
            }
            Ok(m)
        };
        let categories = self
            .categories
            .iter()
            .map(|(category, time_ratio, cells)| {
                Ok(CategoryRow { category: *category, time_ratio: *time_ratio, sides: by_key(cells)? })
            })
            .collect::<Result<_, MissingName>>()?;
        let op_mapping = self
            .op_mapping
            .iter()
            .map(|(op, method, cells)| {
                let mut sides = BTreeMap::new();
                for (k, c) in keys.iter().zip(cells) {
                    let side = match c {
                        None => continue,
                        Some(OpSideSlot::Empty(_)) => OpSide { op: None, calls: 0, stats: EMPTY_STATS },
                        Some(OpSideSlot::Side((side_op, calls, s))) => {
                            let side_op = match side_op {
                                Some(o) if o.is_empty() => Some(op.clone()),
                                other => other.clone(),
                            };
                            OpSide { op: side_op, calls: *calls, stats: stats(s)? }
                        }
                    };
                    sides.insert(k.clone(), side);
                }
                Ok(OpRow { op: op.clone(), method: *method, sides })
            })
            .collect::<Result<_, MissingName>>()?;
        let fusion_differences = self
            .fusion_differences
            .iter()
            .map(|d| {
                Ok(FusionDifference {
                    fused_platform: d.0.clone(),
                    fused_side: d.1.clone(),
                    fused_kernel: name(d.2)?.0.clone(),
                    components: d.3.clone(),
                    unfused_kernels: d.4.iter().map(|&i| name(i).map(|n| n.0.clone())).collect::<Result<_, _>>()?,
                    count: d.5,
                    time_us: d.6.clone(),
                    confidence: d.7,
                    evidence: d.8.clone(),
                })
            })
            .collect::<Result<_, MissingName>>()?;
        Ok(Comparison {
            platforms: self.platforms.clone(),
            time_ratio: self.time_ratio.clone(),
            categories,
            op_mapping,
            fusion_differences,
            layer_alignment: self
                .layer_alignment
                .iter()
                .map(|a| expand_layer(a, &keys, &name))
                .collect::<Result<_, MissingName>>()?,
        })
    }
}

/// The values of `map` in the order of `keys` (`None` where a key is missing).
fn by_keys<T: Clone>(map: &BTreeMap<String, T>, keys: &[&str]) -> Vec<Option<T>> {
    keys.iter().map(|k| map.get(*k).cloned()).collect()
}

/// A map from `keys` to the values present.
fn keyed<T: Clone>(values: &[Option<T>], keys: &[String]) -> BTreeMap<String, T> {
    keys.iter().zip(values).filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v))).collect()
}

fn layer_cells(a: &LayerAlignment, keys: &[&str], names: &mut Names) -> LayerCells {
    let rows = a
        .rows
        .iter()
        .map(|r| {
            let sides = keys
                .iter()
                .map(|k| {
                    r.sides
                        .get(*k)
                        .and_then(Option::as_ref)
                        .map(|s| (s.kernels.iter().map(|n| names.plain(n)).collect(), s.time_us))
                })
                .collect();
            (r.category, sides, r.difference.clone())
        })
        .collect();
    (
        by_keys(&a.phases, keys),
        by_keys(&a.labels, keys),
        by_keys(&a.layers_per_step, keys),
        by_keys(&a.kernels_per_layer, keys),
        by_keys(&a.time_per_layer_us, keys),
        a.rotation,
        rows,
    )
}

fn expand_layer<'n>(
    a: &LayerCells,
    keys: &[String],
    name: &dyn Fn(u32) -> Result<&'n NameEntry, MissingName>,
) -> Result<LayerAlignment, MissingName> {
    let rows =
        a.6.iter()
            .map(|(category, sides, difference)| {
                let mut map = BTreeMap::new();
                for (k, side) in keys.iter().zip(sides) {
                    let side = match side {
                        Some((kernels, time_us)) => Some(RowSide {
                            kernels: kernels.iter().map(|&i| name(i).map(|n| n.0.clone())).collect::<Result<_, _>>()?,
                            time_us: *time_us,
                        }),
                        None => None,
                    };
                    map.insert(k.clone(), side);
                }
                Ok(LayerRow { category: *category, sides: map, difference: difference.clone() })
            })
            .collect::<Result<_, MissingName>>()?;
    Ok(LayerAlignment {
        phases: keyed(&a.0, keys),
        labels: keyed(&a.1, keys),
        layers_per_step: keyed(&a.2, keys),
        kernels_per_layer: keyed(&a.3, keys),
        time_per_layer_us: keyed(&a.4, keys),
        rotation: a.5,
        rows,
    })
}

/// Serde for a share link's comparison field: written compact, read in either form (format-1
/// links, and format-2 links made before the compact form, hold the full [`Comparison`] object).
///
/// The form is told by the keys, read once and straight into their types (serde's untagged
/// enums would first copy the whole comparison into an untyped tree to try each form): the
/// compact form writes `names` before any rows, so rows after a `names` key are compact rows
/// and rows without one are full rows.
pub mod compact_or_full {
    use std::fmt;

    use serde::de::{self, IgnoredAny, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{CategoryCells, CompactComparison, FusionCells, LayerCells, NameEntry, OpRowCells};
    use analysis::compare::{CategoryRow, FusionDifference, LayerAlignment, OpRow};
    use analysis::summary::PlatformEntry;
    use analysis::Comparison;

    pub fn serialize<S: Serializer>(c: &Comparison, s: S) -> Result<S::Ok, S::Error> {
        CompactComparison::new(c).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Comparison, D::Error> {
        d.deserialize_map(Either)
    }

    #[derive(Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum Key {
        Platforms,
        TimeRatio,
        Names,
        Categories,
        OpMapping,
        FusionDifferences,
        LayerAlignment,
        #[serde(other)]
        Other,
    }

    /// Rows in the form the keys before them said.
    enum Rows<C, F> {
        Compact(Vec<C>),
        Full(Vec<F>),
    }

    fn rows<'de, A: MapAccess<'de>, C: Deserialize<'de>, F: Deserialize<'de>>(
        map: &mut A,
        compact: bool,
    ) -> Result<Rows<C, F>, A::Error> {
        Ok(if compact { Rows::Compact(map.next_value()?) } else { Rows::Full(map.next_value()?) })
    }

    struct Either;

    impl<'de> Visitor<'de> for Either {
        type Value = Comparison;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a trace comparison, compact or full")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Comparison, A::Error> {
            let mut platforms: Option<Vec<PlatformEntry>> = None;
            let mut time_ratio: Option<String> = None;
            let mut names: Option<Vec<NameEntry>> = None;
            let mut categories: Option<Rows<CategoryCells, CategoryRow>> = None;
            let mut op_mapping: Option<Rows<OpRowCells, OpRow>> = None;
            let mut fusion_differences: Option<Rows<FusionCells, FusionDifference>> = None;
            let mut layer_alignment: Option<Rows<LayerCells, LayerAlignment>> = None;
            let mut any_rows = false;
            while let Some(key) = map.next_key::<Key>()? {
                let compact = names.is_some();
                match key {
                    Key::Platforms if platforms.is_none() => platforms = Some(map.next_value()?),
                    Key::TimeRatio if time_ratio.is_none() => time_ratio = Some(map.next_value()?),
                    Key::Names if names.is_none() && !any_rows => names = Some(map.next_value()?),
                    Key::Names if names.is_none() => {
                        return Err(de::Error::custom("the comparison's `names` come after its rows"))
                    }
                    Key::Categories if categories.is_none() => categories = Some(rows(&mut map, compact)?),
                    Key::OpMapping if op_mapping.is_none() => op_mapping = Some(rows(&mut map, compact)?),
                    Key::FusionDifferences if fusion_differences.is_none() => {
                        fusion_differences = Some(rows(&mut map, compact)?)
                    }
                    Key::LayerAlignment if layer_alignment.is_none() => {
                        layer_alignment = Some(rows(&mut map, compact)?)
                    }
                    Key::Other => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    _ => return Err(de::Error::custom("the comparison has a key twice")),
                }
                any_rows |= matches!(key, Key::Categories | Key::OpMapping | Key::FusionDifferences);
            }
            let platforms = platforms.ok_or_else(|| de::Error::missing_field("platforms"))?;
            let time_ratio = time_ratio.ok_or_else(|| de::Error::missing_field("time_ratio"))?;
            let categories = categories.ok_or_else(|| de::Error::missing_field("categories"))?;
            let op_mapping = op_mapping.ok_or_else(|| de::Error::missing_field("op_mapping"))?;
            let fusion_differences =
                fusion_differences.ok_or_else(|| de::Error::missing_field("fusion_differences"))?;
            let layer_alignment = layer_alignment.unwrap_or(if names.is_some() {
                Rows::Compact(Vec::new())
            } else {
                Rows::Full(Vec::new())
            });
            match (names, categories, op_mapping, fusion_differences, layer_alignment) {
                (
                    Some(names),
                    Rows::Compact(categories),
                    Rows::Compact(op_mapping),
                    Rows::Compact(fusion_differences),
                    Rows::Compact(layer_alignment),
                ) => CompactComparison {
                    platforms,
                    time_ratio,
                    names,
                    categories,
                    op_mapping,
                    fusion_differences,
                    layer_alignment,
                }
                .expand()
                .map_err(de::Error::custom),
                (
                    None,
                    Rows::Full(categories),
                    Rows::Full(op_mapping),
                    Rows::Full(fusion_differences),
                    Rows::Full(layer_alignment),
                ) => Ok(Comparison {
                    platforms,
                    time_ratio,
                    categories,
                    op_mapping,
                    fusion_differences,
                    layer_alignment,
                }),
                _ => Err(de::Error::custom("the comparison mixes the compact and the full form")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::{compare, Input};
    use formats::read_trace;

    fn comparison() -> Comparison {
        let read = |rel: &str| {
            let path = format!("{}/tests/data/traces/{rel}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            read_trace(&std::fs::read(path).unwrap()).unwrap()
        };
        let (n, a) = (read("nvidia/hf_bert-small_eager_h100.json.gz"), read("amd/hf_bert-small_eager_mi300x.json.gz"));
        compare(Input::new(&n, Some("n")), Input::new(&a, Some("a")))
    }

    #[test]
    fn expands_to_the_same_comparison_with_every_kernel() {
        let c = comparison();
        let compact = CompactComparison::new(&c);
        assert_eq!(compact.expand().unwrap(), c);
        let json = serde_json::to_string(&compact).unwrap();
        assert!(
            json.len() * 2 < serde_json::to_string(&c).unwrap().len(),
            "the compact form is less than half the size"
        );
        assert_eq!(serde_json::from_str::<CompactComparison>(&json).unwrap(), compact);
    }

    #[test]
    fn a_missing_name_is_an_error_not_a_panic() {
        let mut compact = CompactComparison::new(&comparison());
        compact.names.truncate(1);
        let e = compact.expand().unwrap_err();
        assert!(e.to_string().contains("does not hold"), "{e}");
    }
}
