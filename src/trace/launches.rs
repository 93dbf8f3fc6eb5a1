//! A trace's launch calls by correlation id.
//!
//! **Why a sorted list, not a hash map.** A trace's calls come in file order, their ids
//! (counted up by the runtime) nearly sorted already, and the analyses look them up in kernel
//! order, which follows the same count. A hash map scattered both over memory: on the 1 GB
//! synthetic trace (375 k calls) its inserts alone were 0.15 s of reading it, natively as in
//! WebAssembly, a cache miss each. Pushed in order and sorted once at the end of the read
//! ([`Launches::settle`]), the calls are written in sequence and looked up by binary search
//! among neighbours of the previous lookup.

use std::borrow::Cow;
use std::ops::Index;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::intern::NameId;

/// A CUDA/HIP runtime or driver call with a correlation id: what a kernel without an op id is
/// traced back through.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub name: NameId,
    /// The kernel launched, where the call names it (ROCm's launch calls do; CUDA's do not).
    pub kernel: Option<NameId>,
    pub external_id: Option<u64>,
    /// Start, µs, and CPU thread: older traces (no shared op id) link the call to its op
    /// by the op's interval on the same thread.
    pub ts: f64,
    /// How long the call ran on the CPU, µs (0 where the profiler recorded no end): the host's
    /// cost of one launch.
    pub dur: f64,
    pub tid: i64,
}

/// Launch calls by correlation id: as a map, one call per id, the last one given for an id
/// winning (what a `HashMap::insert` per call gave).
#[derive(Debug, Clone, Default)]
pub struct Launches {
    calls: Vec<(u64, Launch)>,
    /// `calls` is sorted by id, each id once. Calls given out of order clear it until
    /// [`Launches::settle`].
    settled: bool,
}

impl Launches {
    /// Adds a call; one given for an id already held replaces it once settled.
    pub fn insert(&mut self, correlation: u64, launch: Launch) {
        let in_order = self.calls.last().is_none_or(|&(last, _)| last < correlation);
        self.settled = in_order && (self.settled || self.calls.is_empty());
        self.calls.push((correlation, launch));
    }

    /// Sorts the calls by id and keeps the last one given for each id, and gives back the room
    /// the list grew into: what the end of a read does, once.
    pub fn settle(&mut self) {
        if !self.settled {
            // Stable: calls of one id stay in the order given; the last of them is kept.
            self.calls.sort_by_key(|&(c, _)| c);
            self.calls.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    *kept = *later;
                }
                same
            });
            self.settled = true;
        }
        self.calls.shrink_to_fit();
    }

    /// The call with this correlation id.
    pub fn get(&self, correlation: &u64) -> Option<&Launch> {
        if self.settled {
            let at = self.calls.binary_search_by_key(correlation, |&(c, _)| c).ok()?;
            return Some(&self.calls[at].1);
        }
        // Not settled (a trace built by hand and not finished): the last call given wins.
        self.calls.iter().rev().find(|(c, _)| c == correlation).map(|(_, l)| l)
    }

    /// The calls, by id once settled.
    pub fn values(&self) -> impl Iterator<Item = &Launch> + '_ {
        self.calls.iter().map(|(_, l)| l)
    }

    /// The (id, call) pairs, by id once settled.
    pub fn iter(&self) -> impl Iterator<Item = (&u64, &Launch)> + '_ {
        self.calls.iter().map(|(c, l)| (c, l))
    }

    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Calls the list has room for, for memory accounting.
    pub fn capacity(&self) -> usize {
        self.calls.capacity()
    }

    /// The calls sorted by id, each id once: borrowed when settled.
    fn settled_calls(&self) -> Cow<'_, [(u64, Launch)]> {
        if self.settled {
            return Cow::Borrowed(&self.calls);
        }
        let mut settled = self.clone();
        settled.settle();
        Cow::Owned(settled.calls)
    }
}

/// Equal as maps: the same call for every id.
impl PartialEq for Launches {
    fn eq(&self, other: &Self) -> bool {
        self.settled_calls() == other.settled_calls()
    }
}

impl Index<&u64> for Launches {
    type Output = Launch;

    /// The call with this id; panics if there is none, as a map's index does.
    fn index(&self, correlation: &u64) -> &Launch {
        self.get(correlation).unwrap_or_else(|| panic!("no launch call with correlation id {correlation}"))
    }
}

impl IntoIterator for Launches {
    type Item = (u64, Launch);
    type IntoIter = std::vec::IntoIter<(u64, Launch)>;

    fn into_iter(self) -> Self::IntoIter {
        self.calls.into_iter()
    }
}

impl FromIterator<(u64, Launch)> for Launches {
    fn from_iter<I: IntoIterator<Item = (u64, Launch)>>(calls: I) -> Self {
        let mut launches = Launches::default();
        calls.into_iter().for_each(|(c, l)| launches.insert(c, l));
        launches.settle();
        launches
    }
}

/// As the (id, call) pairs, by id.
impl Serialize for Launches {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.settled_calls().iter())
    }
}

impl<'de> Deserialize<'de> for Launches {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<(u64, Launch)>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intern::NameTable;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn call(names: &mut NameTable, ts: f64) -> Launch {
        Launch { name: names.intern("cudaLaunchKernel"), kernel: None, external_id: None, ts, dur: 1.0, tid: 1 }
    }

    proptest! {
        /// Whatever order the calls come in, with ids repeated, the list answers as the map of
        /// the calls given did, before and after settling, and settled its values are by id.
        #[test]
        fn answers_as_a_map_of_the_calls(ids in proptest::collection::vec(0u64..40, 0..60)) {
            let mut names = NameTable::new();
            let (mut launches, mut map) = (Launches::default(), HashMap::new());
            for (i, &c) in ids.iter().enumerate() {
                let l = call(&mut names, i as f64);
                launches.insert(c, l);
                map.insert(c, l);
            }
            for c in 0..41 {
                prop_assert_eq!(launches.get(&c), map.get(&c));
            }
            launches.settle();
            prop_assert_eq!(launches.len(), map.len());
            for c in 0..41 {
                prop_assert_eq!(launches.get(&c), map.get(&c));
            }
            let ts: Vec<f64> = launches.values().map(|l| l.ts).collect();
            let mut by_id: Vec<(u64, f64)> = map.iter().map(|(&c, l)| (c, l.ts)).collect();
            by_id.sort_by_key(|&(c, _)| c);
            prop_assert_eq!(ts, by_id.into_iter().map(|(_, t)| t).collect::<Vec<_>>());
        }
    }

    #[test]
    fn calls_in_order_need_no_sorting_and_survive_the_wire() {
        let mut names = NameTable::new();
        let mut launches = Launches::default();
        for c in [3, 5, 9] {
            launches.insert(c, call(&mut names, c as f64));
        }
        assert!(launches.settled, "ids given in increasing order are settled as they come");
        assert_eq!(launches[&5].ts, 5.0);
        assert_eq!(launches.get(&4), None);
        launches.insert(4, call(&mut names, 4.0));
        assert!(!launches.settled);
        let back: Launches = serde_json::from_str(&serde_json::to_string(&launches).unwrap()).unwrap();
        assert!(back.settled);
        assert_eq!(back.values().map(|l| l.ts).collect::<Vec<_>>(), [3.0, 4.0, 5.0, 9.0]);
    }
}
