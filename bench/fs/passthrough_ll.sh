#!/usr/bin/env bash
# libfuse's own passthrough_ll example, the FUSE baseline of bench/fs and of
# the fs_e2e suite: the best a FUSE file system does on this machine (every
# request is a local syscall, no network, no replication).
#
#   passthrough_ll.sh build OUTDIR                  compile OUTDIR/passthrough_ll
#                                                   (once; again if the source changes)
#   passthrough_ll.sh mount BIN SOURCE MNT [LOG] [-o OPTS]...
#                                                   mount SOURCE at MNT, print the pid
#   passthrough_ll.sh umount MNT [PID]              unmount, wait for PID to exit
#
# The source comes from libfuse3-dev (/usr/share/doc/libfuse3-dev/examples,
# or $PASSTHROUGH_LL_SRC). It holds one open fd per inode it has seen, so
# mount raises the soft open-file limit to the hard one first. The daemon
# runs in the foreground of a background job (-f), so that its pid is known
# (for its memory) and LOG receives its stderr (with -o debug / -d: one line
# per request, which bench/fs counts).
set -euo pipefail

src=${PASSTHROUGH_LL_SRC:-/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c}

die() {
  echo "passthrough_ll.sh: $*" >&2
  exit 1
}

build() {
  local out=$1 bin=$1/passthrough_ll
  [ -f "$src" ] || die "no $src: install libfuse3-dev (and check that dpkg does not path-exclude /usr/share/doc)"
  [ -f "$(dirname "$src")/passthrough_helpers.h" ] || die "no passthrough_helpers.h next to $src"
  if [ -x "$bin" ] && [ "$bin" -nt "$src" ]; then
    echo "$bin"
    return
  fi
  mkdir -p "$out"
  # Its own flags, not the project's -Werror: this is libfuse's code.
  # shellcheck disable=SC2046
  cc -O2 -Wall -o "$bin.tmp" "$src" $(pkg-config fuse3 --cflags --libs) -lpthread ||
    die "compiling $src failed"
  mv "$bin.tmp" "$bin"
  echo "$bin"
}

mount_pt() {
  local bin=$1 source=$2 mnt=$3 log=/dev/null
  shift 3
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    log=$1
    shift
  fi
  mkdir -p "$mnt"
  ulimit -n "$(ulimit -Hn)"
  "$bin" -f -o "source=$source" "$@" "$mnt" </dev/null 2>"$log" >&2 &
  local pid=$!
  for _ in $(seq 1 200); do
    if mountpoint -q "$mnt"; then
      echo "$pid"
      return
    fi
    kill -0 "$pid" 2>/dev/null || die "passthrough_ll exited before mounting $mnt (log: $log)"
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  die "passthrough_ll did not mount $mnt within 10 s"
}

umount_pt() {
  local mnt=$1 pid=${2:-}
  if mountpoint -q "$mnt" 2>/dev/null; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || umount -l "$mnt"
  fi
  if [ -n "$pid" ]; then
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || return 0
      sleep 0.05
    done
    kill "$pid" 2>/dev/null || true
  fi
}

case "${1:-}" in
  build)
    [ $# -eq 2 ] || die "usage: build OUTDIR"
    build "$2"
    ;;
  mount)
    [ $# -ge 4 ] || die "usage: mount BIN SOURCE MNT [LOG] [-o OPTS]..."
    shift
    mount_pt "$@"
    ;;
  umount)
    [ $# -ge 2 ] || die "usage: umount MNT [PID]"
    umount_pt "$2" "${3:-}"
    ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
