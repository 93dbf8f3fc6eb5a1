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

/// A blob of `len` bytes that differ from their neighbours (so a piece out of place shows).
fn pattern_blob(len: usize) -> (Vec<u8>, web_sys::Blob) {
    let bytes: Vec<u8> = (0..len).map(|i| (i.wrapping_mul(31) ^ (i >> 11)) as u8).collect();
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes.as_slice()));
    (bytes, web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap())
}

/// Every piece the worker's file reader hands out, concatenated, and the largest piece.
async fn read_all(mut pieces: fusionscope::web::file_bytes::FileBytes) -> (Vec<u8>, u32) {
    let (mut all, mut largest) = (Vec::new(), 0);
    while let Some(piece) = pieces.next().await.unwrap() {
        assert!(piece.length() > 0, "an empty piece");
        largest = largest.max(piece.length());
        all.extend(piece.to_vec());
    }
    assert!(pieces.next().await.unwrap().is_none(), "nothing after the end");
    (all, largest)
}

/// The worker takes a file's bytes from its stream into one reused buffer (Chromium's blob
/// streams are byte streams), else by slices: both hand out the file's bytes in order, in
/// pieces of at most 4 MiB, and nothing for an empty file.
#[wasm_bindgen_test]
async fn a_file_is_read_whole_and_in_order_either_way() {
    use fusionscope::web::file_bytes::FileBytes;
    let (bytes, blob) = pattern_blob(9 * 1024 * 1024 + 123);
    let stream = FileBytes::new(&blob);
    assert!(stream.is_stream(), "Chromium's blob stream is a byte stream");
    for pieces in [stream, FileBytes::by_slices(&blob)] {
        let (read, largest) = read_all(pieces).await;
        assert_eq!(read.len(), bytes.len());
        assert!(read == bytes, "the bytes read differ from the file's");
        assert!(largest <= 4 * 1024 * 1024, "a piece of {largest} bytes");
    }
    let (_, empty) = pattern_blob(0);
    assert!(read_all(FileBytes::new(&empty)).await.0.is_empty());
    assert!(read_all(FileBytes::by_slices(&empty)).await.0.is_empty());
}
