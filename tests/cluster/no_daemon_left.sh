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
source "$(dirname "$0")/../support/kill_left_daemons.sh"
kill_left_daemons "$1" '*/var/tmp/strata-cluster-test.*' "a cluster test"
