#!/usr/bin/env bash
# `strata image map`: the image as one file over FUSE, a loop device on it
# (losetup --direct-io=on), mkfs.xfs, mount, untar, umount, xfs_repair -n
# clean; remount and compare; then unmap (the lock is released).
#
#   map_xfs.sh STRATA SCRATCH
set -euo pipefail
source "$(dirname "$0")/lib.sh" "$@"
e2e_up
at=$scratch/map
mnt=$scratch/xfs
mkdir -p "$at" "$mnt"

step "image create (320 MiB: mkfs.xfs's minimum is 300), image map"
st image create rbd/fsimg --size 320M
st image map rbd/fsimg --at "$at" --set lock_lease_ms=5000 >"$scratch/map.log" 2>&1 ||
  { cat "$scratch/map.log" >&2; e2e_fail "image map"; }
e2e_on_exit "$strata" image unmap "$at"
[ -f "$at/fsimg" ] || e2e_fail "no file $at/fsimg"
[ "$(stat -c %s "$at/fsimg")" = $((320 << 20)) ] || e2e_fail "the file's size is not the image's"

step "losetup --direct-io=on, mkfs.xfs, mount"
loop=$(losetup --direct-io=on -f --show "$at/fsimg")
e2e_on_exit losetup -d "$loop"
mkfs.xfs -q -f "$loop"
mount "$loop" "$mnt"
e2e_on_exit umount -l "$mnt"

step "untar a tree into it"
src=$scratch/src
rm -rf "$src"
mkdir -p "$src"
# ~16 MB in ~2,500 files and symlinks (the headers the build uses anyway).
cp -a /usr/share/zoneinfo /usr/include/linux /usr/include/boost/asio "$src/"
du -sh "$src" | sed 's/^/   source: /'
tar -C "$src" -cf "$scratch/tree.tar" .
tar -C "$mnt" -xf "$scratch/tree.tar"
sync
umount "$mnt"

step "xfs_repair -n is clean"
xfs_repair -n "$loop" >"$scratch/repair.log" 2>&1 || { cat "$scratch/repair.log" >&2; e2e_fail "xfs_repair -n"; }

step "remount: the tree is byte for byte the source"
mount "$loop" "$mnt"
diff -r --no-dereference "$src" "$mnt" >/dev/null || e2e_fail "the tree on the image differs from the source"
umount "$mnt"
losetup -d "$loop"

step "unmap: flushes, releases the lock, exits"
st image unmap "$at"
st image info rbd/fsimg | grep -q "lock: *none" || e2e_fail "the lock is still held after unmap"
used=$(st image du rbd/fsimg --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["used"])')
[ "$used" -lt $((320 << 20)) ] || e2e_fail "the image is not thin: $used bytes used"
echo "PASS"
