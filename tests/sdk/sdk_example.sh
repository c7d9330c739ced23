#!/usr/bin/env bash
# Proof that the installed SDK is enough to write a plugin.
#   sdk_example.sh build BUILD_TREE EXAMPLE_SRC OUT [CTEST_NAME]
#       installs the build tree's SDK component into OUT/prefix, then
#       configures and builds the example against that prefix alone
#       (CMAKE_PREFIX_PATH=OUT/prefix, its own build dir OUT/build, Ninja);
#       with CTEST_NAME, checks that the example's ctest lists that test.
#   sdk_example.sh conformance OUT PLUGIN_FILE_NAME
#       runs the installed OUT/prefix/bin/strata-conformance on the built
#       plugin.
set -euo pipefail

case "${1:-}" in
  build)
    build_tree=$2 example=$3 out=$4
    rm -rf "$out"
    mkdir -p "$out"
    cmake --install "$build_tree" --prefix "$out/prefix" --component sdk >"$out/install.log"
    # The kit's README comes with the kit.
    [ -s "$out/prefix/share/doc/strata-conformance/README.md" ] ||
      { echo "the SDK install lacks share/doc/strata-conformance/README.md" >&2; exit 1; }
    # No cache from the main build leaks in: a fresh configure that only
    # knows the prefix.
    cmake -S "$example" -B "$out/build" -G Ninja -DCMAKE_PREFIX_PATH="$out/prefix" \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/configure.log"
    cmake --build "$out/build" -j 2
    # The example must have been compiled against the installed headers, not
    # against the source tree it happens to live in.
    source_sdk=$(cd "$(dirname "$0")/../../sdk/include" && pwd)
    if grep -rq -- "$source_sdk" "$out/build/build.ninja"; then
      echo "the example was built against $source_sdk instead of $out/prefix" >&2
      exit 1
    fi
    # strata_sdk_add_conformance_test() registered the kit with the
    # example's own ctest (for an example that has one: CTEST_NAME).
    # (Captured first: grep -q closing the pipe early would fail the
    # pipeline under pipefail.)
    if [[ -n ${5:-} ]]; then
      listed=$(cd "$out/build" && ctest -N)
      grep -q -- "$5" <<<"$listed" ||
        { echo "the example's ctest has no test $5" >&2; exit 1; }
    fi
    ls "$out"/build/libstrata_*.so
    ;;
  conformance)
    out=$2 plugin=$3
    exec "$out/prefix/bin/strata-conformance" --kind backend --plugin "$out/build/$plugin"
    ;;
  *)
    echo "usage: sdk_example.sh build BUILD_TREE EXAMPLE_SRC OUT [CTEST_NAME] | conformance OUT PLUGIN_FILE_NAME" >&2
    exit 2
    ;;
esac
