//! The page's components in a real browser (headless Chromium through wasm-bindgen-test):
//! `cargo test --target wasm32-unknown-unknown --test web_browser` (scripts/test runs it).

#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// Mounts the app in a fresh element and lets it render.
async fn mount() -> web_sys::Element {
    let root = document().create_element("div").unwrap();
    document().body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<fusionscope::web::app::App>::with_root(root.clone()).render();
    yew::platform::time::sleep(Duration::from_millis(50)).await;
    root
}

fn text_of(root: &web_sys::Element, selector: &str) -> String {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no {selector}")).text_content().unwrap()
}

async fn type_into(root: &web_sys::Element, id: &str, value: &str) {
    let input: web_sys::HtmlInputElement = root.query_selector(&format!("#{id}")).unwrap().unwrap().dyn_into().unwrap();
    input.set_value(value);
    let event = web_sys::Event::new("input").unwrap();
    input.dispatch_event(&event).unwrap();
    yew::platform::time::sleep(Duration::from_millis(50)).await;
}

#[wasm_bindgen_test]
async fn shows_the_transformer_figures() {
    let root = mount().await;
    assert!(text_of(&root, "[data-testid=unfused-total]").contains("2,348,810,240 bytes"));
    assert!(text_of(&root, "[data-testid=fused-total]").contains("1,962,934,272 bytes"));
    assert!(text_of(&root, "[data-testid=savings-pct]").contains("16.43 %"));
    assert_eq!(root.query_selector_all("[data-testid=groups-table] tbody tr").unwrap().length(), 9);
}

#[wasm_bindgen_test]
async fn bad_input_is_named_and_good_input_recomputes() {
    let root = mount().await;
    type_into(&root, "in-heads", "x").await;
    assert_eq!(text_of(&root, "#form-error"), "Heads NH must be a whole number of at least 1 (got \"x\").");
    // The last valid figures stay.
    assert!(text_of(&root, "[data-testid=unfused-total]").contains("2,348,810,240 bytes"));
    type_into(&root, "in-heads", "64").await;
    assert_eq!(text_of(&root, "#form-error"), "");
    // More heads: a larger score matrix, so more unfused traffic than with 32 heads.
    assert!(!text_of(&root, "[data-testid=unfused-total]").contains("2,348,810,240 bytes"));
}
