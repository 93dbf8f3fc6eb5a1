//! The `fusionscope` binary: the command line natively, the web page when built for wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start();
}
