#!/usr/bin/env bash
# Closed files' data waits in the client (writeback_delay_ms, here 6 s) as a
# local filesystem's dirty pages do, and every way of asking for it still
# gets it:
#  - right after closes, no data object has been written;
#  - files deleted before their turn are never written (the MDS has nothing
#    to purge for them either: `fs check` finds no orphan);
#  - the others are written once the delay has passed;
#  - fsync and unmount write at once;
#  - another mount's open sees the data (its open revokes the writer's lease);
#  - past dirty_limit the oldest go early;
#  - after a remount everything reads back, and `fs check` is clean.
# Object writes are read from the mount's metrics (SIGUSR1 into its log).
#
#   deferred_writeback.sh STRATA SCRATCH_DIR
set -euo pipefail

name=deferred_writeback
source "$(dirname "${BASH_SOURCE[0]}")/two_mount_cluster.sh"
log=$scratch/mount.log
: >"$log"
mount_it() {
  "$mount_sh" mount "$strata" "$conf" "$mnt" "$log" --set writeback_delay_ms=6000 \
    --set batch_delay_us=300000 "$@"
}
client=$(mount_it)

# A metric of the mount, fresh (SIGUSR1 prints them all into its log).
source "$here/mount_metric.sh"
metric() { mount_metric "$client" "$log" "$1"; }
writes() { metric 'strata_fuse_data_object_ops_total{op="write"}'; }
# DIR/fN for N in FIRST..LAST, 64 KiB each (past the inline limit: each
# goes to an object), made or checked by one process (a process per file
# would take longer than the delay).
files() { # make|check DIR FIRST LAST
  python3 - "$@" <<'PY' || fail "$2: files $3..$4 read wrong"
import os, sys
what, d, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(d, exist_ok=True)
bad = []
for i in range(first, last + 1):
    data = (f"file {i} " * 8192).encode()[:65536]
    p = os.path.join(d, f"f{i}")
    if what == "make":
        with open(p, "wb") as f:
            f.write(data)
    else:
        with open(p, "rb") as f:
            if f.read() != data:
                bad.append(p)
if bad:
    print("deferred_writeback: wrong content: " + " ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
}
make_files() { files make "$@"; }
check_files() { files check "$@"; }

# 1. Closed, not written; half deleted before their turn.
w0=$(writes)
make_files "$mnt/a" 1 40
t_closed=$(date +%s.%N)
[ "$(writes)" = "$w0" ] || fail "object writes right after the closes: $(($(writes) - w0))"
deferred=$(metric strata_fuse_writeback_deferred)
[ "$deferred" -ge 40 ] || fail "only $deferred write-outs deferred for 40 closed files"
rm "$mnt"/a/f{1..20}
dropped=$(metric strata_fuse_writeback_dropped_total)
[ "$dropped" -eq 20 ] || fail "$dropped of 20 deleted files dropped unwritten"
check_files "$mnt/a" 21 40 # read back from the client's buffers
[ "$(writes)" = "$w0" ] || fail "object writes before the delay: $(($(writes) - w0))"
echo "deferred_writeback: 40 files closed, 20 deleted: no object written, 20 dropped"

# 2. After the delay, the 20 left are written (and only they).
for _ in $(seq 1 100); do
  [ $(($(writes) - w0)) -ge 20 ] && [ "$(metric strata_fuse_writeback_deferred)" -eq 0 ] && break
  sleep 0.2
done
waited=$(python3 -c "import time; print(round(time.time() - $t_closed, 1))")
sleep 1 # nothing more may follow
w1=$(writes)
[ $((w1 - w0)) -eq 20 ] || fail "$((w1 - w0)) object writes after the delay, not 20"
echo "deferred_writeback: written after ${waited} s: $((w1 - w0)) objects"

# 3. fsync writes at once (syncfs never reaches a FUSE server: the kernel
#    sends FUSE_SYNCFS to virtiofs only).
make_files "$mnt/c" 1 5
python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd); os.close(fd)" "$mnt/c/f3"
w3=$(writes)
[ $((w3 - w1)) -eq 1 ] || fail "fsync of one file wrote $((w3 - w1)) objects, not 1"
echo "deferred_writeback: fsync of one of 5 closed files wrote it alone"

# 4. Another mount's open sees data that is still only in this client.
"$mount_sh" mount "$strata" "$conf" "$other" "$scratch/other.log" >/dev/null
make_files "$mnt/d" 1 5
check_files "$other/d" 1 5
check_files "$other/c" 1 5
"$mount_sh" umount "$strata" "$other"
echo "deferred_writeback: another mount reads what was only buffered here"

# 5. Unmount writes what is left; after a remount everything is there.
make_files "$mnt/e" 1 10
# Files written, closed and renamed into place, as rsync does: the kernel's
# setattrs of their mtime and ctime are kept here with their sizes (no MDS
# request each) and the MDS ends with the very times this mount showed.
# While a file's create waits in the unsent batch (batch_delay_us: 300 ms
# here), its bytes, its rename and the rename's ctime all go into it: one
# MDS request per file, three merged.
lt0=$(metric strata_fuse_local_times_total)
m0=$(metric strata_fuse_mds_async_merged_total)
python3 - "$mnt/e" <<'PY'
import os, sys
for i in range(5):
    tmp = os.path.join(sys.argv[1], f".r{i}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"renamed into place %d\n" % i)
    os.close(fd)
    os.rename(tmp, os.path.join(sys.argv[1], f"r{i}"))
PY
lt1=$(metric strata_fuse_local_times_total)
m1=$(metric strata_fuse_mds_async_merged_total)
[ $((lt1 - lt0)) -ge 5 ] || fail "only $((lt1 - lt0)) setattrs of times kept locally for 5 renamed files"
[ $((m1 - m0)) -ge 15 ] ||
  fail "only $((m1 - m0)) requests merged into the creates of 5 files renamed into place (want 15: bytes, rename, its ctime)"
times_before=$(cd "$mnt/e" && stat -c '%n %y %z %s' r0 r1 r2 r3 r4)
# Once every write-out is done, the client holds no closed file's state
# (a write-out started by the ctime a rename leaves once kept each file's
# state and inline bytes for ever: ~80 MB per rsync of the bench's tree).
for _ in $(seq 1 100); do
  [ "$(metric strata_fuse_writeback_deferred)" -eq 0 ] && [ "$(metric strata_fuse_data_files)" -eq 0 ] && break
  sleep 0.2
done
held=$(metric strata_fuse_data_files)
[ "$held" -eq 0 ] || fail "$held closed files' states still held after their write-outs"
"$mount_sh" umount "$strata" "$mnt"
: >"$log"
client=$(mount_it --set dirty_limit=256K)
for d in a:21:40 c:1:5 d:1:5 e:1:10; do
  IFS=: read -r dir first last <<<"$d"
  check_files "$mnt/$dir" "$first" "$last"
done
times_after=$(cd "$mnt/e" && stat -c '%n %y %z %s' r0 r1 r2 r3 r4)
[ "$times_after" = "$times_before" ] ||
  fail "renamed files' times changed across the remount: before
$times_before
after
$times_after"
echo "deferred_writeback: after unmount and remount every file reads back, renamed files with their times ($((lt1 - lt0)) setattrs kept locally)"

# 6. Past dirty_limit (256 KiB: four files) the oldest go before their time.
w4=$(writes)
make_files "$mnt/f" 1 30
t_made=$(date +%s%N)
# Well before the 6 s delay.
while [ $(($(writes) - w4)) -lt 20 ] && [ $((($(date +%s%N) - t_made) / 1000000)) -lt 4000 ]; do
  sleep 0.1
done
early=$(($(writes) - w4))
took=$((($(date +%s%N) - t_made) / 1000000))
[ "$early" -ge 20 ] || fail "only $early of 30 files written within $took ms past dirty_limit"
echo "deferred_writeback: past dirty_limit, $early of 30 files written within $took ms of the closes"

"$mount_sh" umount "$strata" "$mnt"
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 >/dev/null
echo "deferred_writeback: ok, fs check clean"
