#!/usr/bin/env bash
# Robustness check of the ONNX importer: builds the libFuzzer target with
# clang (build-fuzz/) and fuzzes it for SECONDS (default 120) from the
# committed corpus (fuzz/corpus) and the importer's test models. Inputs that
# crash it are written to fuzz/crashers/; commit them (the lit test
# test/Import/ONNX/fuzz-regressions.mlir replays corpus and crashers).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
scripts/install-deps.sh
if ! command -v clang++-22 >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-22 libclang-rt-22-dev >/dev/null
fi
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B build-fuzz \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDTC_ENABLE_FUZZER=ON >/dev/null
fi
ninja -C build-fuzz dtc-onnx-import-fuzzer
mkdir -p build-fuzz/corpus fuzz/crashers
build-fuzz/bin/dtc-onnx-import-fuzzer build-fuzz/corpus fuzz/corpus \
  test/Import/ONNX/Inputs -max_total_time="$seconds" -max_len=65536 \
  -rss_limit_mb=4096 -timeout=20 -artifact_prefix=fuzz/crashers/ \
  -print_final_stats=1 2>&1 | tail -25
