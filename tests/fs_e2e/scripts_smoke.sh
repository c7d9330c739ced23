#!/usr/bin/env bash
# The fs_e2e, bench/fs, bench/block and tests/rbd/e2e scripts parse (bash
# -n, python3 -m py_compile), and the bench entry points answer --help / a
# usage error without mounting anything.
#   scripts_smoke.sh REPO_ROOT
set -euo pipefail
root=$1
py=/usr/bin/python3
status=0
for f in "$root"/bench/fs/*.sh "$root"/tests/fs_e2e/*.sh "$root"/bench/block/*.sh \
  "$root"/tests/rbd/e2e/*.sh; do
  bash -n "$f" || { echo "does not parse: $f"; status=1; }
done
for f in "$root"/tests/fs_e2e/*.py; do
  "$py" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f" ||
    { echo "does not parse: $f"; status=1; }
done
help=$("$root/bench/fs/run.sh" --help)
grep -q -- '--strata BIN' <<<"$help" || { echo "run.sh --help lacks --strata"; status=1; }
rc=0
"$root/tests/fs_e2e/suite.sh" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { echo "suite.sh without a directory exits $rc, wanted 2"; status=1; }
rc=0
"$root/bench/fs/run.sh" --no-such-option >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { echo "run.sh with a bad option exits $rc, wanted 2"; status=1; }
help=$("$root/bench/block/run.sh" --help)
grep -q -- '--strata BIN' <<<"$help" || { echo "block run.sh --help lacks --strata"; status=1; }
rc=0
"$root/bench/block/run.sh" --no-such-option >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { echo "block run.sh with a bad option exits $rc, wanted 2"; status=1; }
exit $status
