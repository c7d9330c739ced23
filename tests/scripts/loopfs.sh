#!/usr/bin/env bash
# Loop-mounted file systems for tests (used as ctest fixtures).
#   loopfs.sh mount  xfs|btrfs IMAGE MOUNTPOINT [SIZE]   make a fresh image and mount it
#   loopfs.sh umount IMAGE MOUNTPOINT                     unmount, detach, delete the image
# Idempotent: mount first cleans up whatever a failed earlier run left behind.
set -euo pipefail

cleanup() {
  local image=$1 mnt=$2
  if mountpoint -q "$mnt" 2>/dev/null; then
    umount "$mnt" 2>/dev/null || umount -l "$mnt"
  fi
  # Detach any loop device still backed by this image.
  if [ -e "$image" ]; then
    losetup -j "$image" -O NAME -n 2>/dev/null | while read -r dev; do
      [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
    done
  fi
  rm -f "$image"
  rmdir "$mnt" 2>/dev/null || true
}

case "${1:-}" in
  mount)
    fs=$2 image=$3 mnt=$4 size=${5:-1G}
    cleanup "$image" "$mnt"
    mkdir -p "$(dirname "$image")" "$mnt"
    truncate -s "$size" "$image"
    case "$fs" in
      xfs) mkfs.xfs -q -f -m reflink=1 "$image" ;;
      btrfs) mkfs.btrfs -q -f "$image" >/dev/null ;;
      *) echo "loopfs.sh: unknown file system '$fs' (xfs or btrfs)" >&2; exit 2 ;;
    esac
    mount -o loop "$image" "$mnt"
    ;;
  umount)
    cleanup "$2" "$3"
    ;;
  *)
    echo "usage: loopfs.sh mount xfs|btrfs IMAGE MOUNTPOINT [SIZE] | umount IMAGE MOUNTPOINT" >&2
    exit 2
    ;;
esac
