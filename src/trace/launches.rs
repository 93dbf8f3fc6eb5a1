//! A trace's launch calls by correlation id.
//!
//! **Why a sorted list, not a hash map.** A trace's calls come in file order, their ids
//! (counted up by the runtime) nearly sorted already, and the analyses look them up in kernel
//! order, which follows the same count. A hash map scattered both over memory: on the 1 GB
//! synthetic trace (375 k calls) its inserts alone were 0.15 s of reading it, natively as in
//! WebAssembly, a cache miss each. Pushed in order and sorted once at the end of the read
//! ([`Launches::settle`]), the calls are written in sequence and looked up from where an even
//! spread of their ids puts each one.

use std::borrow::Cow;
use std::ops::Index;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::intern::NameId;
use super::search::partition_point_from;

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
        self.index_of(correlation).map(|at| &self.calls[at].1)
    }

    /// Where the call with this correlation id comes in [`Launches::iter`], for analyses that
    /// keep their own figures per call side by side.
    pub fn index_of(&self, correlation: &u64) -> Option<usize> {
        if self.settled {
            return position(&self.calls, *correlation);
        }
        // Not settled (a trace built by hand and not finished): the last call given wins.
        self.calls.iter().rposition(|(c, _)| c == correlation)
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

/// Where `correlation` is in `calls` (sorted by id, each once). Ids are counted up by the
/// runtime, so they spread nearly evenly between the first and the last: the search starts
/// where an even spread puts the id ([`crate::search`]). On the 1 GB synthetic trace the
/// analyses' lookups (each kernel's call, several times over) took 6 % of the `trace`
/// command as binary searches over all 428,850 calls; from there, under 1 %.
fn position(calls: &[(u64, Launch)], correlation: u64) -> Option<usize> {
    let (first, last) = (calls.first()?.0, calls.last()?.0);
    if correlation < first || correlation > last {
        return None;
    }
    // A guess needs no exact arithmetic: f64's (an integer division of u128 is a call of its
    // own, slower than the rest of the lookup).
    let share = (correlation - first) as f64 / (last - first).max(1) as f64;
    let guess = (share * (calls.len() - 1) as f64) as usize;
    let at = partition_point_from(calls, guess, |&(c, _)| c < correlation);
    (calls.get(at)?.0 == correlation).then_some(at)
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

    proptest! {
        /// Ids spread unevenly (runs of neighbours far apart, the ends of `u64`) are found as
        /// a map finds them, and so are the ids beside each.
        #[test]
        fn uneven_ids_are_found(
            runs in proptest::collection::vec((any::<u64>(), 1u64..20), 1..8),
            edges in proptest::collection::vec(prop_oneof![Just(0u64), Just(1), Just(u64::MAX - 1), Just(u64::MAX)], 0..4),
        ) {
            let mut names = NameTable::new();
            let ids: Vec<u64> = runs
                .iter()
                .flat_map(|&(base, n)| (0..n).map(move |i| base.saturating_add(i * 3)))
                .chain(edges)
                .collect();
            let (mut launches, mut map) = (Launches::default(), HashMap::new());
            for (i, &c) in ids.iter().enumerate() {
                let l = call(&mut names, i as f64);
                launches.insert(c, l);
                map.insert(c, l);
            }
            launches.settle();
            for &c in &ids {
                for probe in [c.wrapping_sub(1), c, c.wrapping_add(1)] {
                    prop_assert_eq!(launches.get(&probe), map.get(&probe));
                }
            }
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
