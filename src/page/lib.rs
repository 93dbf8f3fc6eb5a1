//! The page's state and logic, apart from the view: what the page shows ([`State`]), everything
//! that can happen to it ([`Action`]), the one place it changes ([`State::apply`]), share-link
//! restore, what opening a file does, the forms, and the messages of the analysis worker.
//!
//! Nothing here touches the browser, so all of it builds and is tested natively under
//! `cargo test`; the Yew components and the `Reducible` wrapper (`web`, wasm only) only draw
//! this state and dispatch actions.

pub mod action;
pub mod by_address;
pub mod form;
pub mod open;
pub mod protocol;
pub mod ranks;
mod reduce;
pub mod restore;
pub mod state;
pub mod time_inputs;
pub mod traces;

pub use action::Action;
pub use by_address::ByAddress;
pub use state::{Computed, Notice, Reading, SimView, Source, State};
pub use traces::{compare_on_page, LoadedTrace, PairSide, ResultsTab, TraceHeld, TraceView, Traces};
