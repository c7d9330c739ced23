#!/usr/bin/env bash
# StrataSDK::client as a third party uses it:
#   sdk_client_program.sh BUILD_TREE PROGRAM_SRC OUT
# installs the build tree's SDK component into OUT/prefix, builds the
# program against that prefix alone, installs it into OUT/prefix/bin with
# `cmake --install`, and runs it from there without LD_LIBRARY_PATH.
set -euo pipefail
build_tree=$1 program=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
cmake --install "$build_tree" --prefix "$out/prefix" --component sdk >"$out/install.log"
cmake -S "$program" -B "$out/build" -G Ninja -DCMAKE_PREFIX_PATH="$out/prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_INSTALL_PREFIX="$out/prefix" >"$out/configure.log"
cmake --build "$out/build"
cmake --install "$out/build" >"$out/install-program.log"
# The package reports the ABI version of its headers (the program's
# compile-time check), and the installed program runs on its own.
ver=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$out"/prefix/lib*/cmake/StrataSDK/StrataSDKConfigVersion.cmake)
major=$(sed -n 's/^#define STRATA_ABI_MAJOR \([0-9]*\)$/\1/p' "$out/prefix/include/strata/plugin.h")
minor=$(sed -n 's/^#define STRATA_ABI_MINOR \([0-9]*\)$/\1/p' "$out/prefix/include/strata/plugin.h")
[[ $ver == "$major.$minor" ]] || { echo "StrataSDK package version $ver, ABI $major.$minor" >&2; exit 1; }
env -u LD_LIBRARY_PATH "$out/prefix/bin/strata-sdk-client-version"
