//! The page's state as Yew keeps it.

use std::rc::Rc;

use page::{Action, State};
use yew::Reducible;

/// The page's state as Yew keeps it: [`State::apply`] is the whole reducer. (A wrapper, as the
/// state is the `page` crate's and Yew's trait is Yew's.)
pub struct PageState(pub State);

impl std::ops::Deref for PageState {
    type Target = State;

    fn deref(&self) -> &State {
        &self.0
    }
}

impl Reducible for PageState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(PageState(self.0.apply(action)))
    }
}
