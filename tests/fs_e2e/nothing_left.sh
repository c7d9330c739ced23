#!/usr/bin/env bash
# The cleanup of the fs_e2e fixture, run after the last strata mount test
# (also when some failed or were killed by ctest's timeout, which skips
# their own traps): nothing of them is left behind under SCRATCH_DIR. A
# FUSE mount there is unmounted lazily (a dead server's mount hangs
# whatever walks into it, `rm -rf` of the build tree included), a daemon
# of this strata binary on a cluster there gets SIGKILL (and its cluster
# `strata down --purge`, which also frees its tmpfs journals), and the test
# fails naming them.
#
#   nothing_left.sh STRATA SCRATCH_DIR
set -euo pipefail
source "$(dirname "$0")/../support/kill_left_daemons.sh"
scratch=$(readlink -m "$2")
left=0
while read -r _ mnt type _; do
  case "$mnt" in
    "$scratch"/*)
      echo "left mounted by an fs_e2e test ($type), unmounted: $mnt"
      umount -l "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
      left=1
      ;;
  esac
done </proc/mounts
if ! kill_left_daemons "$1" "*$scratch/*" "an fs_e2e test"; then
  left=1
  # Their clusters' tmpfs journals (1 GiB each in /dev/shm) outlive a
  # SIGKILL: `strata down --purge` removes them with the rest.
  find "$scratch" -maxdepth 4 -name strata.conf -printf '%h\n' 2>/dev/null |
    while read -r cluster; do
      "$1" down --dir "$cluster" --purge >/dev/null 2>&1 || true
    done
fi
exit "$left"
