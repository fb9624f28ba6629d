#!/usr/bin/env bash
# Installs what is needed, builds everything and runs the whole test suite
# (lit, GoogleTest and the ONNX node conformance runner) under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
