#!/usr/bin/env bash
# Installs the Debian packages dtc needs to build and test. Idempotent: when
# everything is already installed it prints nothing and touches nothing.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ git
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools   # LLVM/MLIR 22, lit, FileCheck
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libgtest-dev googletest
  libopenmpi-dev openmpi-bin                                # the MPI engine, mpirun
  libopenblas-dev                                           # matmuls of compiled steps (not libblas.so.3)
  python3 python3-numpy python3-onnx                       # test tooling (Debian's python3)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
