#!/usr/bin/env bash
# Bad input on a `strata mount`, one cluster for all cases: 256-byte names
# (ENAMETOOLONG), writes and truncates past fs_max_file_size (EFBIG, with
# the limit set to 1 MiB in an [mds] section and the MDS restarted:
# `strata up --set fs_max_file_size=...` puts it under [osd], whose mkfs
# refuses it), and a full pool (ENOSPC,
# not a hang: osd.2 restarted with osd_failsafe_full_ratio tiny, then
# restarted without it). After each the file system must keep working, and
# at the end `strata fs check` must find it clean.
#
#   bad_input.sh STRATA SCRATCH_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
py=/usr/bin/python3
[ $# -eq 2 ] || { echo "usage: bad_input.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
conf=$cluster/strata.conf
mnt=$scratch/mnt
max=1048576
cleanup() (
  set +e
  "$mount_sh" umount "$strata" "$mnt"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "bad_input: FAIL: $*" >&2
  exit 1
}
# Runs a command for at most $1 seconds; exit 124 when it had to be
# stopped. A process stuck in a FUSE request ignores even SIGKILL, so the
# mount's client is killed first (its requests then fail with ENOTCONN).
bounded() {
  local secs=$1 job rc=0
  shift
  "$@" &
  job=$!
  for _ in $(seq 1 $((secs * 10))); do
    kill -0 "$job" 2>/dev/null || { wait "$job" || rc=$?; return "$rc"; }
    sleep 0.1
  done
  echo "bad_input: $* still running after $secs s: killing the mount's client" >&2
  kill -9 "$("$mount_sh" pid "$mnt")" 2>/dev/null || true
  fusermount3 -u -z "$mnt" 2>/dev/null || true
  kill -9 "$job" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  return 124
}
# A case that failed is reported; the next cases still run.
failed=()
failed_case() {
  echo "bad_input: FAIL: $*" >&2
  failed+=("$*")
}
# Stops daemon $1 (SIGTERM, its store stays) and starts it again with the
# config as it is now; waits until the cluster is up again.
restart() {
  local pid
  pid=$("$cluster_sh" pid "$cluster" "$1")
  [ -n "$pid" ] && kill "$pid"
  for _ in $(seq 1 300); do
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  "$cluster_sh" start "$strata" "$cluster" >>"$scratch/up.log" 2>&1 ||
    { tail -n 20 "$scratch/up.log" >&2; fail "restarting $1"; }
}

cleanup
mkdir -p "$mnt"
"$cluster_sh" up "$strata" "$cluster" --mds 1 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
printf '\n[mds]\nfs_max_file_size = %s\n' "$max" >>"$conf"
restart mds.a
# Without the kernel's writeback cache: with it, write(2) lands in the page
# cache (FUSE cannot give the kernel a size limit) and EFBIG comes at fsync
# or close instead of at the write; this checks the write-time refusal.
"$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log" --set writeback_cache=false >/dev/null

bounded 60 "$py" "$here/bad_input.py" "$mnt" names || failed_case "names (exit $?)"
bounded 60 "$py" "$here/bad_input.py" "$mnt" efbig $max || failed_case "max file size (exit $?)"

# A full pool: osd.2 (in every PG's acting set) past its failsafe ratio.
cp "$conf" "$scratch/strata.conf.orig"
grep -q '^\[osd\.2\]$' "$conf" || fail "strata.conf has no [osd.2] section"
sed -i '/^\[osd\.2\]$/a osd_failsafe_full_ratio = 0.000001' "$conf"
restart osd.2
rc=0
bounded 60 "$py" "$here/bad_input.py" "$mnt" enospc || rc=$?
cp "$scratch/strata.conf.orig" "$conf"
restart osd.2
if [ "$rc" -eq 124 ]; then
  failed_case "a write on a full pool hung (no answer in 60 s)"
elif [ "$rc" -ne 0 ]; then
  failed_case "a write on a full pool (exit $rc)"
fi
cat >"$scratch/after_full.py" <<'PY'
import os, sys
d = os.path.join(sys.argv[1], "after_full")
os.mkdir(d)
with open(os.path.join(d, "f"), "wb") as f:
    f.write(b"room again" * 1000)
    os.fsync(f.fileno())
assert open(os.path.join(d, "f"), "rb").read() == b"room again" * 1000
PY
if [ "$rc" -eq 124 ] || ! mountpoint -q "$mnt"; then
  failed_case "no mount left to try after the full pool"
else
  bounded 60 "$py" "$scratch/after_full.py" "$mnt" ||
    failed_case "the file system does not work after the pool had room again (exit $?)"
fi
"$mount_sh" umount "$strata" "$mnt"
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 || failed_case "strata fs check default"
[ ${#failed[@]} -eq 0 ] || fail "${#failed[@]} cases: ${failed[*]}"
echo "bad_input: ok"
