#!/usr/bin/env bash
# kill -9 of the FUSE client in the middle of an untar: after a remount,
# every file whose fsync (and its directory's) returned is there with its
# content, the interrupted tree can be removed and unpacked again, and
# `strata fs check` finds nothing wrong.
#
#   crash_fuse.sh STRATA SCRATCH_DIR
#
# A cluster from tests/scripts/cluster.sh, mounted with `strata mount`;
# everything is unmounted and torn down on exit, also after a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
py=/usr/bin/python3
[ $# -eq 2 ] || { echo "usage: crash_fuse.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
mnt=$scratch/mnt
input=$scratch/input
jobs_to_reap=()
cleanup() (
  set +e
  for p in "${jobs_to_reap[@]}"; do kill "$p" 2>/dev/null; done
  "$mount_sh" umount "$strata" "$mnt"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "crash_fuse: FAIL: $*" >&2
  exit 1
}

cleanup
rm -rf "$input"
mkdir -p "$mnt" "$input"
"$py" "$here/make_tree.py" "$input/tree" 1000 >/dev/null
tar -C "$input/tree" -cf "$input/tree.tar" .
"$cluster_sh" up "$strata" "$cluster" --mds 1 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
conf=$cluster/strata.conf
client=$("$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log")
echo "crash_fuse: mounted $mnt, client pid $client"

# The untar, and beside it a writer that prints a file's name only once
# the file and its directory are fsync'd (the acknowledged set).
mkdir "$mnt/untar" "$mnt/durable"
tar -C "$mnt/untar" -xf "$input/tree.tar" 2>/dev/null &
untar=$!
jobs_to_reap+=("$untar")
"$py" -u - "$mnt/durable" >"$input/acked" 2>/dev/null <<'EOF' &
import os, sys
d = sys.argv[1]
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
for i in range(100000):
    name = f"f{i:06d}"
    fd = os.open(os.path.join(d, name), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    os.write(fd, (name * (1 + i % 500)).encode())
    os.fsync(fd)
    os.close(fd)
    os.fsync(dfd)
    print(name)
EOF
writer=$!
jobs_to_reap+=("$writer")

# Kill once the writer has something acknowledged and the untar is running.
for _ in $(seq 1 600); do
  [ "$(wc -l <"$input/acked")" -ge 100 ] && break
  kill -0 "$writer" 2>/dev/null || fail "the fsync writer died before the kill"
  sleep 0.1
done
[ "$(wc -l <"$input/acked")" -ge 100 ] || fail "fewer than 100 fsync'd files after 60 s"
kill -0 "$untar" 2>/dev/null || echo "crash_fuse: note: the untar finished before the kill"
echo "crash_fuse: kill -9 $client with $(wc -l <"$input/acked") files acknowledged"
kill -9 "$client"
wait "$writer" 2>/dev/null || true
wait "$untar" 2>/dev/null || true
jobs_to_reap=()
# The dead mount answers ENOTCONN until it is detached.
fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
mountpoint -q "$mnt" && fail "$mnt is still mounted after fusermount3 -u -z"
ls "$mnt" >/dev/null || fail "$mnt is not a plain directory again after the lazy unmount"
acked=$(wc -l <"$input/acked")

client=$("$mount_sh" mount "$strata" "$conf" "$mnt" "$scratch/mount.log")
echo "crash_fuse: remounted, client pid $client; checking $acked acknowledged files"
"$py" - "$mnt/durable" "$input/acked" <<'EOF' || fail "acknowledged files lost or damaged"
import os, sys
d, acked = sys.argv[1], sys.argv[2]
names = [l.strip() for l in open(acked) if l.strip()]
bad = []
for name in names:
    i = int(name[1:])
    try:
        with open(os.path.join(d, name), "rb") as f:
            if f.read() != (name * (1 + i % 500)).encode():
                bad.append(name + " (content)")
    except OSError as e:
        bad.append(f"{name} ({e.strerror})")
if bad:
    print(f"{len(bad)} of {len(names)} acknowledged files: {bad[:10]}", file=sys.stderr)
    sys.exit(1)
EOF

# The interrupted tree goes away and comes back whole.
rm -rf "$mnt/untar" || fail "rm -rf of the interrupted untar"
mkdir "$mnt/untar"
tar -C "$mnt/untar" -xf "$input/tree.tar" || fail "untar after the crash"
tar -C "$mnt/untar" -df "$input/tree.tar" || fail "the tree unpacked after the crash differs"
"$mount_sh" umount "$strata" "$mnt"

# fs check: clean, once the MDS has applied its journal (it refuses
# while entries are pending; fs_check_clean.sh retries that).
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 ||
  fail "strata fs check default is not clean after the crash"
echo "crash_fuse: ok ($acked fsync'd files survived kill -9 of the client)"
