//! The Yew web page (wasm only).
