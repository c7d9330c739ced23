#!/usr/bin/env bash
# Configures and builds Strata with CMake + Ninja into BUILD_DIR (default
# ./build). Extra arguments go to cmake's configure step (after ours, so
# they win). Our own builds treat warnings as errors (STRATA_WERROR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${STRATA_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DSTRATA_WERROR=ON "$@" >/dev/null
ninja -C "$build" -j "$jobs"
