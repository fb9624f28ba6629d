#!/usr/bin/env bash
# Configures (once) and builds dtc in build/ with Ninja (and ccache when
# installed). Extra arguments are passed to ninja (e.g. a target name).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C build "$@"
