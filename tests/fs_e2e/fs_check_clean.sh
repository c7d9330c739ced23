#!/usr/bin/env bash
# `strata fs check NAME` until it can run, then require a clean result.
# fs check refuses (EBUSY, exit 2) while the metadata journal holds entries
# the MDS has not applied yet; the MDS applies them in the background, so
# that answer is retried (at most TIMEOUT seconds, default 60). Any other
# failure, or problems found, is final.
#
#   fs_check_clean.sh STRATA CONF [NAME] [TIMEOUT]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: fs_check_clean.sh STRATA CONF [NAME] [TIMEOUT]" >&2; exit 2; }
strata=$1 conf=$2 name=${3:-default} timeout=${4:-60}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
deadline=$((SECONDS + timeout))
while true; do
  rc=0
  "$strata" fs check "$name" --conf "$conf" >"$out" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    cat "$out"
    exit 0
  fi
  if [ "$rc" -eq 2 ] && grep -q "not yet applied" "$out" && [ "$SECONDS" -lt "$deadline" ]; then
    sleep 0.5
    continue
  fi
  echo "fs_check_clean: strata fs check $name exited $rc:" >&2
  cat "$out" >&2
  exit 1
done
