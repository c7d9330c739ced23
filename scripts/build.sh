#!/usr/bin/env bash
# Configures and builds Strata with CMake + Ninja into BUILD_DIR (default
# ./build). Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${STRATA_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja "$@" >/dev/null
ninja -C "$build" -j "$jobs"
