#!/bin/sh
# Trace reader/comparison benchmark, natively and in wasm (Node).
#   bench/trace_bench.sh [SIZE_MB] [DIR]     (defaults: 1100 MB per trace, /tmp)
# Writes two synthetic traces (NVIDIA-like of SIZE_MB, AMD-like of the same layers) into DIR.
set -eu
SIZE=${1:-1100}
DIR=${2:-/tmp}
cd "$(dirname "$0")/.."
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release --example trace_bench
"$TARGET/release/examples/trace_bench" "$SIZE" "$DIR"
if command -v wasm-bindgen >/dev/null && command -v node >/dev/null; then
  cargo build --release --manifest-path bench/trace_wasm/Cargo.toml --target wasm32-unknown-unknown \
    --target-dir "$TARGET/trace_wasm"
  wasm-bindgen --target nodejs --out-dir "$DIR/fusionscope_trace_wasm" \
    "$TARGET/trace_wasm/wasm32-unknown-unknown/release/fusionscope_trace_wasm_bench.wasm"
  node bench/trace_wasm_bench.js "$DIR/fusionscope_trace_wasm" \
    "$DIR/fusionscope_bench_nvidia.json" "$DIR/fusionscope_bench_amd.json"
else
  echo "wasm-bindgen or node missing: wasm figures skipped"
fi
