//! Interned names: a trace repeats a few thousand distinct kernel and op names (some over a
//! kilobyte of C++ template text) hundreds of thousands of times, so each distinct name is
//! stored once and events carry a 4-byte [`NameId`].

use rustc_hash::FxHashMap;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Index of a name in its [`NameTable`]. Only meaningful with the table that issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NameId(u32);

impl NameId {
    /// Position in the table, for side tables indexed by name (e.g. cached classifications).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Distinct strings, each stored once, in order of first appearance.
#[derive(Debug, Default, Clone)]
pub struct NameTable {
    names: Vec<Box<str>>,
    ids: FxHashMap<Box<str>, NameId>,
    /// Bytes of the distinct names held (each is held twice: in `names` and as a key).
    bytes: usize,
}

impl NameTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, adding it on first sight.
    pub fn intern(&mut self, name: &str) -> NameId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = NameId(u32::try_from(self.names.len()).expect("fewer than 2^32 distinct names"));
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
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
        self.ids.get(name).copied()
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

    /// Bytes held by the stored names (both copies), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        2 * self.names.iter().map(|n| n.len()).sum::<usize>()
            + self.names.capacity() * std::mem::size_of::<Box<str>>()
            + self.ids.capacity() * (std::mem::size_of::<Box<str>>() + std::mem::size_of::<NameId>() + 1)
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
    }
}
