#!/usr/bin/env bash
# The cleanup of the cluster fault scripts' fixture, run after the last of
# them (also when some failed): no daemon of this build tree's strata binary
# is still running on one of their cluster directories (lib.sh tears each
# cluster down on every exit path). One that is gets SIGKILL, and the test
# fails naming it.
#
# Being a fixture's cleanup also makes ctest count the fault scripts as
# prerequisites, which it schedules before the tests nothing depends on: the
# scripts, ctest's longest one-at-a-time chain, start with the store suites
# instead of after them.
# Usage: no_daemon_left.sh STRATA_BINARY
set -euo pipefail
strata=$(readlink -f "$1")
left=0
for proc in /proc/[0-9]*; do
  exe=$(readlink "$proc/exe" 2>/dev/null) || continue
  [ "$exe" = "$strata" ] || continue
  cmd=$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) || continue
  case "$cmd" in
    *"/var/tmp/strata-cluster-test."*)
      echo "left running by a cluster test, killed: pid ${proc#/proc/}: $cmd"
      kill -9 "${proc#/proc/}" 2>/dev/null || true
      left=1
      ;;
  esac
done
exit "$left"
