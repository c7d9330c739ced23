#!/usr/bin/env bash
# Two `strata mount`s of the same file system on two mount points:
# two_clients.py checks close-to-open between them (one writes, renames
# and unlinks, the other lists, stats and reads).
#
#   two_clients.sh STRATA SCRATCH_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
[ $# -eq 2 ] || { echo "usage: two_clients.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
cleanup() (
  set +e
  "$mount_sh" umount "$strata" "$scratch/a"
  "$mount_sh" umount "$strata" "$scratch/b"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM

cleanup
mkdir -p "$scratch/a" "$scratch/b"
"$cluster_sh" up "$strata" "$cluster" --mds 1 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
"$mount_sh" mount "$strata" "$cluster/strata.conf" "$scratch/a" "$scratch/mount_a.log" >/dev/null
"$mount_sh" mount "$strata" "$cluster/strata.conf" "$scratch/b" "$scratch/mount_b.log" >/dev/null
/usr/bin/python3 "$here/two_clients.py" "$scratch/a" "$scratch/b" 25
"$mount_sh" umount "$strata" "$scratch/a"
"$mount_sh" umount "$strata" "$scratch/b"
"$here/fs_check_clean.sh" "$strata" "$cluster/strata.conf" default 60 >/dev/null
echo "two_clients: ok, fs check clean"
