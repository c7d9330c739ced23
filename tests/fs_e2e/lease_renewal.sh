#!/usr/bin/env bash
# Files in use keep their leases: with the MDS's leases at 8 s, files
# written and then read again every 5 s are still opened without an MDS
# round trip 15 s later (the client renews the leases of files it opened or
# closed within a lease), while a file left alone lets its lease run out
# and its next open asks the MDS again (seed 002: nothing idle is pinned).
# A tree the client had whole and then left until its leases ran out is
# walked again (lookups by name, as a no-op rsync does) at one round trip
# a directory: each directory's first lookup reads its listing.
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
round_trips() { mount_metric "$client" "$log" strata_fuse_mds_round_trips_total; }

# Made here, so complete in the client's cache; left alone from now on.
dirs=8
files=25
names=()
mkdir "$mnt/walk"
for d in $(seq 1 $dirs); do
  mkdir "$mnt/walk/d$d"
  for f in $(seq 1 $files); do
    echo "walk $d $f" >"$mnt/walk/d$d/f$f"
    names+=("$mnt/walk/d$d/f$f")
  done
done

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

# The walk tree: unused for 17 s or more by now (renewals stop one lease
# after the last use, so its leases ran out). Every name looked up again.
sleep 2
before=$(round_trips)
sizes=$(stat -c %s "${names[@]}" | sort -u)
after=$(round_trips)
[ "$sizes" = "$(echo "walk 1 1" | wc -c)" ] || [ "$(echo "$sizes" | wc -l)" -le 2 ] ||
  fail "the walk tree's files have sizes $sizes"
walked=$((after - before))
echo "lease_renewal: $((dirs * files)) names in $dirs directories looked up after their leases" \
  "ran out: $walked MDS round trips"
# One a directory (and walk/ itself), a renewal or two besides; without
# the listing at the first lookup it was 3 a directory.
[ "$walked" -le $((dirs + 4)) ] || fail "$walked round trips to walk $dirs directories again"
for d in 1 $dirs; do
  [ "$(cat "$mnt/walk/d$d/f$files")" = "walk $d $files" ] || fail "walk/d$d/f$files reads wrong"
done

"$mount_sh" umount "$strata" "$mnt"
echo "lease_renewal: ok"
