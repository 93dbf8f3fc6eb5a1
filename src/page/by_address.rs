//! Values shared by the state and the components, compared by address (identity), not by
//! value. (Share links are the `share` crate: another idea.)

use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

/// An immutable value (a graph, an analysis) shared between the state and the components.
///
/// Equality is identity: an analysis is only ever recomputed when its source changes, so the
/// same allocation means the same value. Components then skip re-rendering on an unrelated
/// change (selecting an op, a notice) without comparing a 100,000-op report field by field,
/// which is what `Rc`'s own `PartialEq` would do.
pub struct ByAddress<T>(Rc<T>);

impl<T> ByAddress<T> {
    pub fn new(value: T) -> Self {
        ByAddress(Rc::new(value))
    }
}

impl<T> Clone for ByAddress<T> {
    fn clone(&self) -> Self {
        ByAddress(Rc::clone(&self.0))
    }
}

impl<T> Deref for ByAddress<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> PartialEq for ByAddress<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: fmt::Debug> fmt::Debug for ByAddress<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
