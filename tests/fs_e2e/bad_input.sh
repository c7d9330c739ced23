#!/usr/bin/env bash
# Bad input on a `strata mount`, one cluster for all cases: 256-byte names
# (ENAMETOOLONG), writes and truncates past fs_max_file_size (EFBIG, with
# the limit set to 1 MiB by `strata up --set`), and a full pool (ENOSPC,
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
# Stops osd.2 (SIGTERM, its store stays) and starts it again with the
# config as it is now; waits until the cluster is up again.
restart_osd2() {
  local pid
  pid=$("$cluster_sh" pid "$cluster" osd.2)
  [ -n "$pid" ] && kill "$pid"
  for _ in $(seq 1 300); do
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  "$cluster_sh" start "$strata" "$cluster" >>"$scratch/up.log" 2>&1 ||
    { tail -n 20 "$scratch/up.log" >&2; fail "restarting osd.2"; }
}

cleanup
mkdir -p "$mnt"
"$cluster_sh" up "$strata" "$cluster" --set fs_max_file_size=$max >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
"$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log" >/dev/null

timeout 60 "$py" "$here/bad_input.py" "$mnt" names || fail "names (exit $?)"
timeout 60 "$py" "$here/bad_input.py" "$mnt" efbig $max || fail "max file size (exit $?)"

# A full pool: the last section of strata.conf is [osd.2].
cp "$conf" "$scratch/strata.conf.orig"
tail -n 3 "$conf" | grep -q '^\[osd\.2\]' || fail "strata.conf does not end with [osd.2]"
echo "osd_failsafe_full_ratio = 0.000001" >>"$conf"
restart_osd2
rc=0
timeout 120 "$py" "$here/bad_input.py" "$mnt" enospc || rc=$?
cp "$scratch/strata.conf.orig" "$conf"
restart_osd2
[ "$rc" -eq 124 ] && fail "a write on a full pool hung (no answer in 120 s)"
[ "$rc" -eq 0 ] || fail "a write on a full pool (exit $rc)"
timeout 120 "$py" - "$mnt" <<'PY' || fail "the file system does not work after the pool had room again"
import os, sys
d = os.path.join(sys.argv[1], "after_full")
os.mkdir(d)
with open(os.path.join(d, "f"), "wb") as f:
    f.write(b"room again" * 1000)
    os.fsync(f.fileno())
assert open(os.path.join(d, "f"), "rb").read() == b"room again" * 1000
PY

"$mount_sh" umount "$strata" "$mnt"
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 || fail "strata fs check default"
echo "bad_input: ok"
