#!/usr/bin/env bash
# `strata image map --device`: the image as /dev/nbdN through the kernel's
# NBD client; mkfs.xfs, mount, write, umount; unmap is refused while the
# device is mounted; unmap releases the device and the lock; a read-only
# map shows the same bytes. Needs the nbd driver and root: exits 77 (skip)
# without them, before starting anything.
#
#   kernel_map_xfs.sh STRATA SCRATCH
set -euo pipefail
if [ ! -b /dev/nbd0 ]; then
  echo "SKIP: no /dev/nbd0 (this kernel has no nbd driver loaded: modprobe nbd)"
  exit 77
fi
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: the kernel NBD ioctls need root"
  exit 77
fi
source "$(dirname "$0")/lib.sh" "$@"
e2e_up
mnt=$scratch/xfs
mkdir -p "$mnt"

step "image create (320 MiB), image map --device auto"
st image create rbd/kdisk --size 320M
dev=$(st image map rbd/kdisk --device auto --set lock_lease_ms=5000 2>"$scratch/map.log") ||
  { cat "$scratch/map.log" >&2; e2e_fail "image map"; }
e2e_on_exit "$strata" image unmap "$dev"
[ -b "$dev" ] || e2e_fail "image map printed '$dev', not a block device"
name=${dev#/dev/}
[ -f "/sys/block/$name/pid" ] || e2e_fail "/sys/block/$name/pid missing: the device does not run"
[ "$(blockdev --getsize64 "$dev")" = $((320 << 20)) ] || e2e_fail "$dev's size is not the image's"
st image info rbd/kdisk | grep -q "lock: *none" && e2e_fail "a read-write map holds no lock"

step "mkfs.xfs, mount, write 32 MiB, umount"
mkfs.xfs -q -f "$dev"
mount "$dev" "$mnt"
e2e_on_exit umount -l "$mnt"
head -c $((32 << 20)) /dev/urandom >"$scratch/data"
cp "$scratch/data" "$mnt/data"
sync
sum=$(sha256sum <"$mnt/data")

step "unmap is refused while mounted"
if st image unmap "$dev" 2>"$scratch/unmap.log"; then e2e_fail "unmap of a mounted device succeeded"; fi
grep -q "in use" "$scratch/unmap.log" || { cat "$scratch/unmap.log" >&2; e2e_fail "unmap's refusal does not say why"; }
umount "$mnt"

step "unmap: disconnects, flushes, releases the lock"
st image unmap "$dev"
[ ! -e "/sys/block/$name/pid" ] || e2e_fail "$dev still runs after unmap"
st image info rbd/kdisk | grep -q "lock: *none" || e2e_fail "the lock is still held after unmap"

step "map --read-only: the same bytes"
dev=$(st image map rbd/kdisk --device "$dev" --read-only 2>"$scratch/map.log") ||
  { cat "$scratch/map.log" >&2; e2e_fail "image map --read-only"; }
[ "$(blockdev --getro "$dev")" = 1 ] || e2e_fail "a read-only map is writable"
mount -o ro,norecovery "$dev" "$mnt"
[ "$(sha256sum <"$mnt/data")" = "$sum" ] || e2e_fail "the file read back differs"
umount "$mnt"
st image unmap "$dev"
echo "PASS"
