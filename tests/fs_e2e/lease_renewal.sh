#!/usr/bin/env bash
# Files in use keep their leases: with the MDS's leases at 8 s, files
# written and then read again every 5 s are still opened without an MDS
# round trip 15 s later (the client renews the leases of files it opened or
# closed within a lease), while a file left alone lets its lease run out
# and its next open asks the MDS again (seed 002: nothing idle is pinned).
# Round trips are read from the mount's metrics (SIGUSR1 into its log).
#
#   lease_renewal.sh STRATA SCRATCH_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
[ $# -eq 2 ] || { echo "usage: lease_renewal.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
mnt=$scratch/mnt
cleanup() (
  set +e
  "$mount_sh" umount "$strata" "$mnt"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "lease_renewal: FAIL: $*" >&2
  exit 1
}

cleanup
mkdir -p "$mnt"
"$cluster_sh" up "$strata" "$cluster" --mds 1 --set mds_lease_ms=8000 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
log=$scratch/mount.log
: >"$log"
client=$("$mount_sh" mount "$strata" "$cluster/strata.conf" "$mnt" "$log")

# The client's synchronous opens so far (its metrics, printed on SIGUSR1).
source "$here/mount_metric.sh"
sync_opens() { mount_metric "$client" "$log" 'strata_fuse_mds_requests_by_kind_total{kind="open",mode="sync"}'; }

mkdir "$mnt/busy" "$mnt/idle"
for i in $(seq 1 40); do echo "busy $i" >"$mnt/busy/f$i"; done
echo idle >"$mnt/idle/f"
cat "$mnt/idle/f" >/dev/null
for round in 1 2 3; do
  sleep 5
  before=$(sync_opens)
  for i in $(seq 1 40); do
    [ "$(cat "$mnt/busy/f$i")" = "busy $i" ] || fail "busy/f$i reads wrong"
  done
  after=$(sync_opens)
  echo "lease_renewal: round $round (t=$((round * 5)) s): $((after - before)) of 40 opens asked the MDS"
done
# 15 s after the files were written, with 8 s leases: only renewals kept
# them, so the last round must have been answered locally.
[ $((after - before)) -eq 0 ] || fail "opens at 15 s went to the MDS: the leases of files in use lapsed"

# The idle file was not renewed: its lease ran out, its open asks.
before=$(sync_opens)
[ "$(cat "$mnt/idle/f")" = idle ] || fail "idle/f reads wrong"
after=$(sync_opens)
[ $((after - before)) -eq 1 ] || fail "the idle file's open did not ask the MDS ($((after - before)))"

"$mount_sh" umount "$strata" "$mnt"
echo "lease_renewal: ok"
