//! The page's file reader, run as a Web Worker: reads a `File` in slices off the page's
//! thread and reports progress (see `web::reader_worker`).

#[cfg(target_arch = "wasm32")]
fn main() {
    web::reader_worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    eprintln!("fusionscope-reader: this is the web page's worker; trunk builds it for wasm32 (see index.html)");
    std::process::ExitCode::from(2)
}
