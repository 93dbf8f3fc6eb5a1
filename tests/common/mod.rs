//! Helpers shared by the integration tests (`mod common;` in each test file): running the
//! `fusionscope` binary as a user would, and reading the files under tests/data.
//!
//! Each test binary uses only some of them, hence the `dead_code` allowance. The data
//! helpers panic naming the file, at the caller's line (`#[track_caller]`).

#![allow(dead_code)]

pub mod tracelens;

use std::io::Read;
use std::path::Path;
use std::process::Command;

/// Absolute path of `rel` under tests/data, as a command-line argument:
/// `data("graphs/worked_example.json")`.
pub fn data(rel: &str) -> String {
    format!("{}/tests/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// The bytes of the file `rel` under tests/data.
#[track_caller]
pub fn data_bytes(rel: &str) -> Vec<u8> {
    let path = data(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text of the file `rel` under tests/data.
#[track_caller]
pub fn data_text(rel: &str) -> String {
    let path = data(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The bytes of a Kineto trace under tests/data/traces, as stored (mostly gzipped):
/// `trace_bytes("amd/torch_compile_triton_mi300x.json.gz")`.
#[track_caller]
pub fn trace_bytes(rel: &str) -> Vec<u8> {
    data_bytes(&format!("traces/{rel}"))
}

/// Decompresses gzip `bytes` (a whole .gz file).
#[track_caller]
pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).unwrap_or_else(|e| panic!("not gzip: {e}"));
    out
}

/// Runs the `fusionscope` binary with `args`: (exit code, stdout, stderr). The exit code is -1
/// when the process was killed by a signal, so that the caller's assertion shows its stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fusionscope")).args(args).output().expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

/// Runs the binary with `args` (which should include `--json`), asserts that it succeeded and
/// returns its stdout parsed as JSON.
#[track_caller]
pub fn json(args: &[&str]) -> serde_json::Value {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "{args:?}: stderr: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {stdout}"))
}

/// A folder of its own in the system's temporary folder, named `{name}…`, for the files a test
/// writes; removed with what it holds when dropped, whether the test passed or panicked, so
/// runs leave nothing behind.
pub fn temp_dir(name: &str) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("a temporary folder for {name}: {e}"));
    TempDir(dir)
}

/// A test's temporary folder ([`temp_dir`]), used as the path it is.
pub struct TempDir(tempfile::TempDir);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// The kind of the registry's trace format named `name` (`formats::registry`).
pub fn trace_kind(name: &str) -> fusionscope::import::FileKind {
    fusionscope::import::FileKind::Trace(
        fusionscope::formats::registry::BUILTIN.named(name).expect("a registry format"),
    )
}
