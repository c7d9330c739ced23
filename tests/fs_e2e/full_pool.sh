#!/usr/bin/env bash
# A filesystem on a cluster that fills up (three OSDs on 320 MiB XFS
# images, the full ratio at its default 0.95) gets its space back the way
# users get it back: by deleting files.
#  - 4 MiB files written with fsync until the cluster is full: the last
#    fsync fails with ENOSPC (not a hang); every earlier file reads back;
#  - rm -rf of the files on the full cluster returns, syncfs returns (the
#    MDS's journal and directory writes pass the full flags, up to the
#    OSDs' failsafe ratio), the purges free the space and the full flags
#    clear;
#  - meanwhile what would take space through the MDS (mkdir, a new file, an
#    xattr, a small file's inline bytes) fails with ENOSPC, not a hang;
#    chmod and rename still work;
#  - writes go through again; fs check clean.
#
#   full_pool.sh STRATA SCRATCH_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
[ $# -eq 2 ] || { echo "usage: full_pool.sh STRATA SCRATCH_DIR" >&2; exit 2; }
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
  echo "full_pool: FAIL: $*" >&2
  exit 1
}

cleanup
mkdir -p "$mnt"
"$cluster_sh" up "$strata" "$cluster" --mds 1 --backend xfs --journal file --size-mb 320 \
  --pg-num 8 --set journal_size=32M --set client_op_timeout_ms=30000 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
conf=$cluster/strata.conf
"$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log" >/dev/null
full_osds() { timeout 20 "$strata" status --conf "$conf" | grep -c 'full osd(s) refuse' || true; }
# await_full_osds TEST N SECS: until the number of full OSDs passes
# `[ COUNT TEST N ]` (-ge 1, -eq 0), at most SECS seconds.
await_full_osds() {
  local i
  for ((i = 0; i < $3 * 2; i++)); do
    [ "$(full_osds)" "$1" "$2" ] && return 0
    sleep 0.5
  done
  return 1
}

head -c $((4 << 20)) /dev/urandom >"$scratch/block"
head -c 100 /dev/urandom >"$scratch/small"
# A small file (its bytes inline in its inode) to grow once the cluster is full.
dd if="$scratch/small" of="$mnt/small" conv=fsync status=none
mkdir "$mnt/big"
written=0
rc=0
while [ $written -lt 200 ]; do
  timeout 120 dd if="$scratch/block" of="$mnt/big/f$written" bs=4M conv=fsync status=none \
    2>"$scratch/dd.err" || { rc=$?; break; }
  written=$((written + 1))
done
echo "full_pool: $written files of 4 MiB fsync'd, then: $(cat "$scratch/dd.err")"
[ $rc -ne 124 ] || fail "a write on the full cluster hung (no answer in 120 s)"
[ $rc -ne 0 ] || fail "200 files of 4 MiB went into 3 x 320 MiB disks"
grep -q 'No space left on device' "$scratch/dd.err" || fail "the failed write did not say ENOSPC"
[ $written -ge 10 ] || fail "only $written files before ENOSPC"
# The OSD that refused by its own count tells the monitor with its next
# report (a heartbeat interval), so health names it a moment after the
# writer's ENOSPC, not before.
await_full_osds -ge 1 10 || fail "ENOSPC, but 10 s later the cluster does not say it is full"
for f in 0 $((written / 2)) $((written - 1)); do
  cmp -s "$scratch/block" "$mnt/big/f$f" || fail "big/f$f, fsync'd before the cluster was full, reads back wrong"
done
cmp -s "$scratch/small" "$mnt/small" || fail "the small file reads back wrong"

# What would take space fails at once with ENOSPC, also where the MDS's
# own writes would have carried it (new entries, xattrs, inline data):
# the MDS refuses them while the map says an OSD is full, so they cannot
# fill the OSDs to their failsafe ratio, where not even a delete can be
# journaled (before session 22 an inline file's fsync hung there).
expect_enospc() {
  local what=$1
  shift
  local rc=0
  timeout 60 "$@" 2>"$scratch/enospc.err" || rc=$?
  [ $rc -ne 124 ] || fail "$what on the full cluster hung"
  [ $rc -ne 0 ] || fail "$what on the full cluster succeeded"
  grep -q 'No space left on device' "$scratch/enospc.err" ||
    fail "$what on the full cluster: not ENOSPC: $(cat "$scratch/enospc.err")"
}
# The client learns that the cluster is full from the OSDs' ENOSPC and from
# the MDS's replies (Reply.clusterFull); a statfs asks the MDS once its
# map has caught up. Changes it had answered before it knew are kept.
sleep 2
stat -f "$mnt" >/dev/null
expect_enospc "mkdir" mkdir "$mnt/newdir"
expect_enospc "a new small file" dd if="$scratch/small" of="$mnt/big/new" conv=fsync status=none
expect_enospc "setfattr" setfattr -n user.note -v x "$mnt/small"
head -c 8000 /dev/urandom >"$scratch/more"
expect_enospc "growing an inline file" \
  dd if="$scratch/more" of="$mnt/small" oflag=append conv=notrunc,fsync status=none
timeout 60 chmod 600 "$mnt/big/f0" || fail "chmod on the full cluster failed or hung"
timeout 60 mv "$mnt/big/f0" "$mnt/big/g0" || fail "rename on the full cluster failed or hung"
echo "full_pool: the full cluster refused new entries, xattrs and inline growth with ENOSPC"

# Deleting on the full cluster: the unlinks are journaled, the purges run.
timeout 60 rm -rf "$mnt/big" || fail "rm -rf on the full cluster failed or hung ($?)"
timeout 60 sync -f "$mnt" || fail "syncfs after the rm -rf failed or hung ($?)"
await_full_osds -eq 0 60 || fail "60 s after the rm -rf the cluster is still full"
echo "full_pool: the rm -rf freed the space; the full flags cleared"

timeout 60 dd if="$scratch/block" of="$mnt/after" bs=4M conv=fsync status=none ||
  fail "a write after the space came back failed ($?)"
timeout 60 mkdir "$mnt/newdir" || fail "mkdir after the space came back failed ($?)"
timeout 60 dd if="$scratch/more" of="$mnt/newdir/small" conv=fsync status=none ||
  fail "a small file after the space came back failed ($?)"
cmp -s "$scratch/more" "$mnt/newdir/small" || fail "the small file after the space came back reads back wrong"
cmp -s "$scratch/block" "$mnt/after" || fail "the write after the space came back reads back wrong"
"$mount_sh" umount "$strata" "$mnt"
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 || fail "strata fs check default"
echo "full_pool: ok"
