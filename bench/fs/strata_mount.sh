#!/usr/bin/env bash
# Mounting and unmounting Strata's FUSE frontend for bench/fs and the fs_e2e
# tests, tolerant of how `strata mount` runs (it may return once mounted,
# leaving a daemon, or stay in the foreground).
#
#   strata_mount.sh mount  STRATA CONF MNT [LOG] [strata mount options...]
#                          mount, wait until MNT is a mount point; prints the
#                          pid of the process serving it
#   strata_mount.sh umount STRATA MNT     `strata umount`, then fusermount3 -u,
#                                         then a lazy unmount; waits for the server
#   strata_mount.sh pid    MNT            the pid serving MNT (empty if none)
#   strata_mount.sh rss    PID            "VmRSS VmHWM" of PID in MiB ("- -" if gone)
#   strata_mount.sh mds-pid DIR           the active MDS of cluster DIR (mds.a.pid,
#                                         else any mds*.pid with a live process)
set -euo pipefail

die() {
  echo "strata_mount.sh: $*" >&2
  exit 1
}

# The process serving MNT: one holding /dev/fuse whose command line names
# MNT (the `strata mount` daemon, or its foreground process).
pid_serving() {
  local mnt p
  mnt=$(realpath -m "$1")
  # pgrep reads every command line in one process (a loop of forks over
  # /proc takes minutes on a loaded machine); then the exact argument and
  # the /dev/fuse descriptor decide.
  for p in $(pgrep -f -- "$mnt" || true); do
    { tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qxF -e "$mnt" -e "$mnt/" || continue
    # One find, not a readlink per descriptor: a FUSE server may hold
    # tens of thousands (passthrough_ll keeps one per inode).
    if [ -n "$(find "/proc/$p/fd" -lname /dev/fuse -print -quit 2>/dev/null)" ]; then
      echo "$p"
      return
    fi
  done
}

mount_strata() {
  local strata=$1 conf=$2 mnt=$3 log=/dev/null
  shift 3
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    log=$1
    shift
  fi
  mkdir -p "$mnt"
  mnt=$(realpath "$mnt")
  ulimit -n "$(ulimit -Hn)"
  "$strata" mount "$mnt" --conf "$conf" "$@" </dev/null >>"$log" 2>&1 &
  local job=$! rc
  for _ in $(seq 1 600); do
    if mountpoint -q "$mnt"; then
      local pid
      for _ in $(seq 1 50); do
        pid=$(pid_serving "$mnt")
        [ -n "$pid" ] && break
        sleep 0.1
      done
      echo "${pid:-$job}"
      return
    fi
    if ! kill -0 "$job" 2>/dev/null; then
      wait "$job" && rc=0 || rc=$?
      # It may have returned just before the kernel showed the mount.
      mountpoint -q "$mnt" && continue
      die "strata mount $mnt exited ($rc) without mounting; its output: $(tail -n 5 "$log" 2>/dev/null)"
    fi
    sleep 0.1
  done
  kill "$job" 2>/dev/null || true
  die "strata mount $mnt: not mounted after 60 s"
}

umount_strata() {
  local strata=$1 mnt=$2 pid
  pid=$(pid_serving "$mnt")
  if mountpoint -q "$mnt" 2>/dev/null; then
    "$strata" umount "$mnt" >/dev/null 2>&1 || fusermount3 -u "$mnt" 2>/dev/null ||
      fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt"
  fi
  [ -n "$pid" ] || return 0
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "strata_mount.sh: $pid still serving $mnt 30 s after the unmount; SIGKILL" >&2
  kill -9 "$pid" 2>/dev/null || true
}

rss_of() {
  local pid=$1
  if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
    awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 }
         END { printf "%.0f %.0f\n", r / 1024, h / 1024 }' "/proc/$pid/status"
  else
    echo "- -"
  fi
}

mds_pid() {
  local dir=$1 f p
  for f in "$dir/mds.a.pid" "$dir"/mds*.pid; do
    [ -f "$f" ] || continue
    p=$(tr -dc '0-9' <"$f")
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

case "${1:-}" in
  mount)
    [ $# -ge 4 ] || die "usage: mount STRATA CONF MNT [LOG] [options...]"
    shift
    mount_strata "$@"
    ;;
  umount)
    [ $# -eq 3 ] || die "usage: umount STRATA MNT"
    umount_strata "$2" "$3"
    ;;
  pid)
    [ $# -eq 2 ] || die "usage: pid MNT"
    pid_serving "$2"
    ;;
  rss)
    [ $# -eq 2 ] || die "usage: rss PID"
    rss_of "$2"
    ;;
  mds-pid)
    [ $# -eq 2 ] || die "usage: mds-pid DIR"
    mds_pid "$2"
    ;;
  *)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
