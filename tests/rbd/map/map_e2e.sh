#!/bin/bash
# The one-file FUSE export end to end, on an in-memory device: the file
# behaves as a disk image for dd (O_DIRECT), losetup --direct-io=on gives a
# block device with direct I/O on, an XFS made on it holds an untarred tree
# that xfs_repair finds clean and diff finds identical after a remount,
# punching a hole reads back zeros, unmounting from outside ends the
# exporting program with status 0, and so does SIGTERM while a loop device
# still holds the file (the connection is aborted, the loop device fails).
#
#   map_e2e.sh MAP_MEM_EXPORT SCRATCH_DIR
#
# Needs root, /dev/fuse, fusermount3, losetup, xfsprogs (exits 77, skipped,
# without them). Everything it makes is undone on every exit path.
set -euo pipefail

exe=$1
scratch=$2
if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! command -v fusermount3 mkfs.xfs losetup >/dev/null; then
  echo "SKIP: needs root, /dev/fuse, fusermount3, mkfs.xfs and losetup"
  exit 77
fi

mnt=$scratch/mnt      # the FUSE mount with the one file
xfs=$scratch/xfs      # the XFS on the loop device
file=$mnt/disk
size=$((512 << 20))
pid=""
loopdev=""

mounted() { grep -q " $1 " /proc/mounts; }

cleanup() {
  local rc=$?
  set +e
  if mounted "$xfs"; then umount "$xfs" || umount -l "$xfs"; fi
  if [ -n "$loopdev" ]; then losetup -d "$loopdev"; fi
  if mounted "$mnt"; then fusermount3 -u -z "$mnt"; fi
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  if [ "$rc" != 0 ]; then
    echo "--- map_mem_export's output:"
    cat "$scratch/export.out" "$scratch/export.err" 2>/dev/null
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

step() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }

# A scratch tree left by a killed run may still hold mounts: undo them.
if mounted "$xfs"; then umount -l "$xfs"; fi
if mounted "$mnt"; then fusermount3 -u -z "$mnt"; fi
rm -rf "$scratch"
mkdir -p "$mnt" "$xfs" "$scratch/src"

# Starts map_mem_export on $mnt (512 MiB, requests completed on 2 threads)
# and waits for its "ready".
start_export() {
  "$exe" "$mnt" 512M --name disk --async-threads 2 >"$scratch/export.out" 2>"$scratch/export.err" &
  pid=$!
  for _ in $(seq 100); do
    grep -q '^ready$' "$scratch/export.out" && break
    kill -0 "$pid" 2>/dev/null || fail "map_mem_export ended before it was ready"
    sleep 0.1
  done
  grep -q '^ready$' "$scratch/export.out" || fail "map_mem_export not ready after 10 s"
  mounted "$mnt" || fail "$mnt is not mounted"
}

step "export a 512 MiB sparse in-memory device (requests completed on 2 threads)"
start_export

step "one file, 0644, root's, of the device's size"
ls -la "$mnt"
[ "$(ls -A "$mnt")" = disk ] || fail "the mount holds more than the one file"
[ "$(stat -c %s "$file")" = "$size" ] || fail "size $(stat -c %s "$file") != $size"
[ "$(stat -c '%a %U %F' "$file")" = "644 root regular file" ] || fail "$(stat -c '%a %U %F' "$file")"
[ "$(awk -v m="$mnt" '$2 == m { print $1, $3 }' /proc/mounts)" = "strata:mem fuse.strata-image" ] ||
  fail "fsname/subtype: $(grep " $mnt " /proc/mounts)"
if touch "$mnt/other" 2>/dev/null; then fail "creating a second file succeeded"; fi

step "dd with O_DIRECT: write 8 MiB at 5 MiB, read it back, compare"
head -c $((8 << 20)) /dev/urandom >"$scratch/random"
dd if="$scratch/random" of="$file" bs=1M seek=5 oflag=direct conv=notrunc status=none
dd if="$file" of="$scratch/back" bs=1M skip=5 count=8 iflag=direct status=none
cmp "$scratch/random" "$scratch/back"
# Unaligned, through the page-cache-less path too.
dd if="$scratch/random" of="$file" bs=1000 count=3 seek=7 conv=notrunc,fsync status=none
dd if="$file" of="$scratch/back" bs=1000 count=3 skip=7 status=none
cmp <(head -c 3000 "$scratch/random") "$scratch/back"
if dd if="$scratch/random" of="$file" bs=1M count=1 seek=512 oflag=direct conv=notrunc status=none 2>"$scratch/dd.err"; then
  fail "a write past the end succeeded"
fi
grep -q "No space left on device" "$scratch/dd.err" || fail "write past the end: $(cat "$scratch/dd.err")"
[ "$(dd if="$file" bs=1M skip=512 iflag=direct status=none | wc -c)" = 0 ] || fail "read past the end returned data"

step "losetup --direct-io=on"
loopdev=$(losetup --direct-io=on -f --show "$file")
echo "$loopdev"
dio=$(cat "/sys/block/${loopdev#/dev/}/loop/dio")
[ "$dio" = 1 ] || fail "the loop device did not get direct I/O (dio=$dio)"
[ "$(blockdev --getsize64 "$loopdev")" = "$size" ] || fail "loop device size"

step "mkfs.xfs, mount, untar, sync, umount"
tar -C /usr/share/doc -cf "$scratch/tree.tar" git valgrind
tar -C "$scratch/src" -xf "$scratch/tree.tar"
mkfs.xfs -q "$loopdev"
mount "$loopdev" "$xfs"
tar -C "$xfs" -xf "$scratch/tree.tar"
sync
umount "$xfs"

step "xfs_repair -n finds it clean"
xfs_repair -n "$loopdev" >"$scratch/repair.out" 2>&1 || { cat "$scratch/repair.out"; fail "xfs_repair -n"; }

step "remount, compare with the source"
mount "$loopdev" "$xfs"
diff -r --no-dereference "$scratch/src" "$xfs" || fail "the tree differs after a remount"
du -s "$xfs"
umount "$xfs"
losetup -d "$loopdev"
loopdev=""

step "fallocate --punch-hole reads back zeros, the rest is kept"
dd if="$scratch/random" of="$file" bs=1M seek=5 oflag=direct conv=notrunc,fsync status=none
fallocate --punch-hole -o $((6 << 20)) -l $((2 << 20)) "$file"
dd if="$file" of="$scratch/back" bs=1M skip=5 count=8 iflag=direct status=none
cmp -n $((2 << 20)) <(head -c $((2 << 20)) /dev/zero) <(tail -c +$(((1 << 20) + 1)) "$scratch/back")
cmp -n $((1 << 20)) "$scratch/random" "$scratch/back"
cmp <(tail -c +$(((3 << 20) + 1)) "$scratch/random") <(tail -c +$(((3 << 20) + 1)) "$scratch/back")

step "fusermount3 -u ends the program with status 0"
fusermount3 -u "$mnt"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then fail "map_mem_export still runs 10 s after the unmount"; fi
rc=0
wait "$pid" || rc=$?
pid=""
cat "$scratch/export.out"
[ "$rc" = 0 ] || fail "map_mem_export exited $rc"
grep -q "errors 0 " "$scratch/export.out" || fail "the export counted errors"

step "SIGTERM with a loop device still attached: the map ends anyway, status 0, its I/O fails"
start_export
loopdev=$(losetup --direct-io=on -f --show "$file")
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then fail "map_mem_export still runs 10 s after SIGTERM"; fi
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || fail "map_mem_export exited $rc after SIGTERM"
grep -q "is busy" "$scratch/export.err" || fail "no warning about the busy mount"
if mounted "$mnt"; then fail "$mnt is still mounted after SIGTERM"; fi
if dd if="$loopdev" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
  fail "the loop device still reads after the map ended"
fi
losetup -d "$loopdev"
loopdev=""
rm -rf "$scratch/src" "$scratch/tree.tar" "$scratch/random" "$scratch/back"  # kept on failure
echo "PASS"
