#!/usr/bin/env bash
# kill -9 of the active MDS in the middle of an untar, with a standby: the
# standby takes over (replays the journal), the mount's session follows the
# map and replays its unsafe requests, the untar finishes, the tree is
# whole, and `strata fs check` finds nothing wrong. Then the same with the
# only MDS restarted under its own id.
#
#   mds_failover.sh STRATA SCRATCH_DIR
#
# Everything is unmounted and torn down on exit, also after a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
py=/usr/bin/python3
[ $# -eq 2 ] || { echo "usage: mds_failover.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
mnt=$scratch/mnt
input=$scratch/input
untar=
restarted=
cleanup() (
  set +e
  [ -n "$restarted" ] && kill "$restarted" 2>/dev/null
  [ -n "$untar" ] && kill "$untar" 2>/dev/null
  "$mount_sh" umount "$strata" "$mnt"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "mds_failover: FAIL: $*" >&2
  tail -n 20 "$cluster"/mds.*.log >&2 || true
  exit 1
}

active_mds() {
  "$strata" fs status default --conf "$conf" 2>/dev/null |
    sed -n 's/.*mds\.\([a-z0-9]*\).*active.*/\1/p' | head -n 1
}

# One round: untar, kill -9 the active MDS once the untar is under way,
# optionally restart it, and wait for the untar to finish.
round() {
  local dir=$1 restart=$2 victim
  mkdir "$mnt/$dir"
  tar -C "$mnt/$dir" -xf "$input/tree.tar" &
  untar=$!
  for _ in $(seq 1 100); do
    [ "$(find "$mnt/$dir" 2>/dev/null | wc -l)" -ge 200 ] && break
    sleep 0.05
  done
  victim=$(active_mds)
  [ -n "$victim" ] || fail "no active MDS found"
  kill -0 "$untar" 2>/dev/null || echo "mds_failover: note: the untar finished before the kill"
  echo "mds_failover: kill -9 mds.$victim with $(find "$mnt/$dir" 2>/dev/null | wc -l) names unpacked"
  "$cluster_sh" kill9 "$cluster" "mds.$victim"
  if [ "$restart" = restart ]; then
    # Started by hand, not by `strata up`: its pid file is stale, so
    # cleanup stops it by this pid.
    "$strata" mds --id "$victim" --conf "$conf" >>"$cluster/mds.$victim.log" 2>&1 &
    restarted=$!
  fi
  wait "$untar" || fail "the untar failed across the MDS kill ($dir)"
  untar=
  tar -C "$mnt/$dir" -df "$input/tree.tar" || fail "the tree differs after the MDS kill ($dir)"
  echo "mds_failover: $dir ok, now active: mds.$(active_mds)"
}

cleanup
rm -rf "$input"
mkdir -p "$mnt" "$input"
"$py" "$here/make_tree.py" "$input/tree" 1500 >/dev/null
tar -C "$input/tree" -cf "$input/tree.tar" .
"$cluster_sh" up "$strata" "$cluster" --mds 2 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
conf=$cluster/strata.conf
"$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log" >/dev/null

# statfs answers the cluster's figures (cached by the MDS, refreshed every 5 s).
df -P "$mnt" | tail -n 1
stat -f -c 'blocks %b free %f avail %a files %c ffree %d' "$mnt"
[ "$(stat -f -c %b "$mnt")" -gt 0 ] || fail "statfs: no blocks"
# rmdir removes the directory's objects (fs check at the end says so).
for i in 1 2 3; do mkdir -p "$mnt/gone/a$i/b" && touch "$mnt/gone/a$i/b/f"; done
rm -rf "$mnt/gone"

round failover no-restart
round restart restart
"$mount_sh" umount "$strata" "$mnt"
"$strata" fs check default --conf "$conf" || fail "strata fs check found problems"
echo "mds_failover: ok"
