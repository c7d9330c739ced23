#!/usr/bin/env bash
# The directory store tests make their stores in, as a ctest fixture.
#   store_root.sh setup   ROOT [xfs|btrfs IMAGE]   fresh ROOT (loop-mounted when a fs is given)
#   store_root.sh cleanup ROOT [xfs|btrfs IMAGE]   remove everything, unmount
# Cleanup also removes what a test killed by its timeout could not: the
# tmpfs journals (in /dev/shm) its stores' identity files point at, and btrfs
# subvolumes (read-only snapshots cannot be deleted file by file).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
loopfs=$here/../scripts/loopfs.sh

remove_stores() {
  local root=$1
  [ -d "$root" ] || return 0
  for ini in "$root"/*/strata_store.ini; do
    [ -e "$ini" ] || continue
    jp=$(sed -n 's/^journal_path = //p' "$ini")
    case "$jp" in /dev/shm/strata-journal-*) rm -f -- "$jp" ;; esac
  done
  if [ "$(stat -f -c %T "$root" 2>/dev/null)" = btrfs ] && command -v btrfs >/dev/null; then
    btrfs subvolume list -o "$root" 2>/dev/null | awk '{print $NF}' | sort -r |
      while read -r sub; do
        # Paths are relative to the file system's top level, which is ROOT.
        btrfs subvolume delete "$root/$sub" >/dev/null 2>&1 || true
      done
  fi
  find "$root" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} + 2>/dev/null || true
}

cmd=${1:-} root=${2:-}
fs=${3:-} image=${4:-}
case "$cmd" in
  setup)
    if [ -n "$fs" ]; then
      # 8G (a sparse image: only what is written takes disk): the store
      # tests of both journals share it two at a time, some write over 1 GB,
      # and btrfs returns space late; at 2G a RocksDB beside them now and
      # then hit ENOSPC and aborted on its own assertion.
      "$loopfs" mount "$fs" "$image" "$root" 8G
    else
      mkdir -p "$root" && remove_stores "$root"
    fi
    ;;
  cleanup)
    remove_stores "$root"
    if [ -n "$fs" ]; then "$loopfs" umount "$image" "$root"; fi
    ;;
  *)
    echo "usage: store_root.sh setup|cleanup ROOT [xfs|btrfs IMAGE]" >&2
    exit 2
    ;;
esac
