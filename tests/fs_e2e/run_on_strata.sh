#!/usr/bin/env bash
# The fs_e2e suite on a Strata mount: a cluster from tests/scripts/cluster.sh
# (`strata up`, which also starts an MDS and makes the file system
# "default"), `strata mount`, suite.sh, then unmount and tear down, also
# after a failure or a signal.
#
#   run_on_strata.sh STRATA SCRATCH_DIR [suite cases...]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
[ $# -ge 2 ] || { echo "usage: run_on_strata.sh STRATA SCRATCH_DIR [cases...]" >&2; exit 2; }
strata=$1
scratch=$2
shift 2
cluster=$scratch/cluster
mnt=$scratch/mnt
# A subshell, so that its set +e stays in it.
cleanup() (
  set +e
  "$mount_sh" umount "$strata" "$mnt"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM

# Whatever an interrupted earlier run left behind goes first.
cleanup
mkdir -p "$scratch" "$mnt"
"$cluster_sh" up "$strata" "$cluster" --mds 1 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
# allow_other: posix_checks.py's set-id case writes as another user. The
# client checks permissions itself (default_permissions=false, the default:
# with allow_other the kernel then checks nothing, and keeps no entries).
"$mount_sh" mount "$strata" "$cluster/strata.conf" "$mnt" "$scratch/mount.log" \
  --set allow_other=true >/dev/null
rc=0
"$here/suite.sh" "$mnt" "$@" || rc=$?
# `strata umount` itself must work: detach, and the client writes out,
# makes its changes safe at the MDS and exits (exit 0).
if ! "$strata" umount "$mnt"; then
  echo "run_on_strata: strata umount $mnt failed; the mount's log:" >&2
  tail -n 20 "$scratch/mount.log" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
# The kernel's permission checks (default_permissions=true) on the cases
# they change.
if [ $# -eq 0 ] || [[ " $* " == *" posix "* ]]; then
  "$mount_sh" mount "$strata" "$cluster/strata.conf" "$mnt" "$scratch/mount-kernel-checks.log" \
    --set allow_other=true --set default_permissions=true >/dev/null
  own=$mnt/kernel-checks
  rm -rf "$own"
  mkdir -p "$own"
  if ! python3 "$here/posix_checks.py" "$own" permissions set_id_bits attributes open_flags \
    rename >"$scratch/kernel-checks.log" 2>&1; then
    echo "run_on_strata: with default_permissions=true:" >&2
    cat "$scratch/kernel-checks.log" >&2
    [ "$rc" -ne 0 ] || rc=1
  fi
  sed 's/^/default_permissions=true: /' "$scratch/kernel-checks.log"
  "$mount_sh" umount "$strata" "$mnt"
fi
exit "$rc"
