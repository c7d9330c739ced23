#!/usr/bin/env bash
# `strata store bench` end to end: the command line becomes the bench's
# options, the config its stores; one kv+file pair, creates only, reported
# as JSON with exit code 0.
#   store_bench_cli.sh STRATA PLUGIN_DIR
set -euo pipefail
strata=$1
plugins=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-store-bench-cli.XXXXXX")
trap 'rm -rf "$dir"' EXIT
out=$("$strata" store bench --plugin-path "$plugins" --dir "$dir" --pairs kv:file \
  --workloads creates --seconds 0.3 --journal-size 32M --fio /nonexistent/fio --format json)
echo "$out"
grep -q '"backend":"kv","journal":"file","status":"ok"' <<<"$out"
grep -q '"creates":{"creates_per_sec":' <<<"$out"
# The pair's store was removed after the run.
if compgen -G "$dir/strata-bench-*" >/dev/null; then
  echo "the pair's store was left in $dir" >&2
  exit 1
fi
