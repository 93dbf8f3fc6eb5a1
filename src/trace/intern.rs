//! Interned names: a trace repeats a few thousand distinct kernel and op names (some over a
//! kilobyte of C++ template text) hundreds of thousands of times, so each distinct name is
//! stored once and events carry a 4-byte [`NameId`].

use std::hash::BuildHasher;
use std::num::NonZeroU32;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Index of a name in its [`NameTable`]. Only meaningful with the table that issued it.
///
/// Held as the index plus one, so that an `Option<NameId>` takes 4 bytes, as the id does: a
/// CPU op carries four optional texts (its recorded shapes). Written and read as the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(NonZeroU32);

impl NameId {
    /// The id of position `index`; `None` past the 2³² − 1 names an id can number.
    fn at(index: u32) -> Option<NameId> {
        index.checked_add(1).and_then(NonZeroU32::new).map(NameId)
    }

    /// Position in the table, for side tables indexed by name (e.g. cached classifications).
    pub fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

impl Serialize for NameId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0.get() - 1)
    }
}

impl<'de> Deserialize<'de> for NameId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        NameId::at(u32::deserialize(d)?).ok_or_else(|| D::Error::custom("a name id past the last one an id can number"))
    }
}

/// Distinct strings, each stored once, in order of first appearance.
///
/// The index holds only ids, each name being stored once (in `names`), and compares names
/// eight bytes at a time: in WebAssembly `str` equality is a byte-by-byte `memcmp`, which was a
/// twentieth of reading a trace (interning is a few lookups per event).
#[derive(Debug, Default, Clone)]
pub struct NameTable {
    names: Vec<Box<str>>,
    ids: HashTable<NameId>,
    /// Bytes of the distinct names held.
    bytes: usize,
}

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Whether two texts are equal, compared a word at a time.
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let ((words_a, rest_a), (words_b, rest_b)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    words_a.iter().zip(words_b).all(|(x, y)| u64::from_ne_bytes(*x) == u64::from_ne_bytes(*y)) && rest_a == rest_b
}

impl NameTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, adding it on first sight.
    pub fn intern(&mut self, name: &str) -> NameId {
        let h = hash(name);
        let names = &self.names;
        if let Some(&id) = self.ids.find(h, |id| same_text(&names[id.index()], name)) {
            return id;
        }
        let id = u32::try_from(self.names.len()).ok().and_then(NameId::at).expect("fewer than 2^32 - 1 distinct names");
        self.names.push(name.into());
        let names = &self.names;
        self.ids.insert_unique(h, id, |id| hash(&names[id.index()]));
        self.bytes += name.len();
        id
    }

    /// Bytes of the distinct names held so far: what a trace of many long, distinct names
    /// costs, which the reader holds to a budget.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<NameId> {
        self.ids.find(hash(name), |id| same_text(&self.names[id.index()], name)).copied()
    }

    pub fn resolve(&self, id: NameId) -> &str {
        &self.names[id.index()]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Bytes held by the stored names and their index, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.names.iter().map(|n| n.len()).sum::<usize>()
            + self.names.capacity() * std::mem::size_of::<Box<str>>()
            + self.ids.capacity() * (std::mem::size_of::<NameId>() + 1)
    }
}

/// As the list of names in id order (the index is rebuilt when read).
impl Serialize for NameTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.names.iter().map(|n| &**n))
    }
}

impl<'de> Deserialize<'de> for NameTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names: Vec<String> = Vec::deserialize(d)?;
        let mut table = NameTable::new();
        for name in &names {
            table.intern(name);
        }
        // A repeated name would shift every later id: the ids in the data would be wrong.
        if table.len() != names.len() {
            return Err(D::Error::custom("a name table lists a name twice"));
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_returns_one_id_per_distinct_name() {
        let mut t = NameTable::new();
        let a = t.intern("aten::mm");
        let b = t.intern("Cijk_Alik_Bljk");
        assert_eq!(t.intern("aten::mm"), a);
        assert_ne!(a, b);
        assert_eq!(t.resolve(b), "Cijk_Alik_Bljk");
        assert_eq!(t.len(), 2);
        assert_eq!(t.bytes(), "aten::mm".len() + "Cijk_Alik_Bljk".len(), "each distinct name counted once");
        assert_eq!(t.get("nope"), None);
        // An optional id costs no more than an id, and ids are written as their index.
        assert_eq!(std::mem::size_of::<Option<NameId>>(), 4);
        assert_eq!(serde_json::to_string(&[a, b]).unwrap(), "[0,1]");
        assert_eq!(serde_json::from_str::<NameId>("1").unwrap(), b);
    }

    proptest::proptest! {
        /// Names that share long prefixes and differ in one byte anywhere (in a word or in the
        /// tail the word comparison leaves) get one id each, found again by `get` and `intern`.
        #[test]
        fn one_id_per_distinct_name(
            base in "[a-c]{0,40}",
            edits in proptest::collection::vec((0usize..41, proptest::char::range('a', 'd')), 0..30),
        ) {
            let mut names: Vec<String> = vec![base.clone()];
            for (at, c) in edits {
                let mut name: Vec<char> = base.chars().collect();
                if at < name.len() {
                    name[at] = c;
                } else {
                    name.push(c);
                }
                names.push(name.into_iter().collect());
            }
            let mut t = NameTable::new();
            let ids: Vec<NameId> = names.iter().map(|n| t.intern(n)).collect();
            for (i, a) in names.iter().enumerate() {
                proptest::prop_assert_eq!(t.get(a), Some(ids[i]));
                proptest::prop_assert_eq!(t.resolve(ids[i]), a.as_str());
                for (j, b) in names.iter().enumerate() {
                    proptest::prop_assert_eq!(ids[i] == ids[j], a == b, "{:?} {:?}", a, b);
                }
            }
            let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
            proptest::prop_assert_eq!(t.len(), distinct.len());
        }
    }
}
