#!/usr/bin/env bash
# Runs `strata store bench` for every backend x journal pair on file systems
# made for the purpose: a loop-mounted XFS image (and a btrfs image when a
# btrfs backend is on the plugin path), so that the figures and the fio
# baselines they are compared with come from the same, otherwise idle, file
# system. Everything it makes (images, loop devices, mounts) is removed on
# exit, also after a failure or Ctrl-C.
#
#   bench/store/run_on_loop_xfs.sh [--strata BIN] [--plugin-path DIRS]
#       [--image-size 16G] [--pairs xfs:file,kv:tmpfs,...] [--workdir DIR]
#       [-- extra `strata store bench` options, e.g. --seconds 5 --format json]
#
# Needs root (losetup, mount), mkfs.xfs, and mkfs.btrfs for btrfs pairs.
# Images are sparse files under --workdir (default $STRATA_BENCH_WORKDIR or
# /var/tmp, which is on disk where /tmp may be tmpfs). The exit code is the
# bench's: 0 unless a pair failed to run (missed goals are reported, not
# fatal: the machine may be shared and noisy).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

strata=""
plugin_path=""
image_size=16G
pairs=""
workdir=${STRATA_BENCH_WORKDIR:-/var/tmp}
bench_args=()

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) strata=$2; shift 2 ;;
    --plugin-path) plugin_path=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; bench_args+=("$@"); break ;;
    *) bench_args+=("$1"); shift ;;
  esac
done

die() { echo "run_on_loop_xfs: $*" >&2; exit 2; }

if [[ -z "$strata" ]]; then
  for candidate in "$repo/build/bin/strata" "$(command -v strata || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then strata=$candidate; break; fi
  done
fi
[[ -n "$strata" && -x "$strata" ]] || die "no strata binary: build it or pass --strata BIN"
[[ $(id -u) -eq 0 ]] || die "needs root for losetup and mount"
for tool in losetup mount umount mkfs.xfs; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install xfsprogs mount)"
done
command -v fio >/dev/null || echo "run_on_loop_xfs: fio not found: baselines will be skipped" >&2

plugin_args=()
[[ -n "$plugin_path" ]] && plugin_args=(--plugin-path "$plugin_path")

# Every backend x journal pair the plugin path offers, unless --pairs says.
if [[ -z "$pairs" ]]; then
  listing=$("$strata" plugins list "${plugin_args[@]}")
  backends=$(awk '$1 == "backend" { print $2 }' <<<"$listing")
  journals=$(awk '$1 == "journal" { print $2 }' <<<"$listing")
  [[ -n "$backends" && -n "$journals" ]] ||
    die "no backend or journal plugins found (pass --plugin-path DIRS)"
  for b in $backends; do
    for j in $journals; do pairs+="${pairs:+,}$b:$j"; done
  done
fi
need_btrfs=0
[[ ",$pairs" == *",btrfs:"* ]] && need_btrfs=1
if [[ $need_btrfs -eq 1 ]] && ! command -v mkfs.btrfs >/dev/null; then
  echo "run_on_loop_xfs: mkfs.btrfs not found: btrfs pairs will be skipped" >&2
  need_btrfs=0
fi

mkdir -p "$workdir"
work=$(mktemp -d "$workdir/strata-bench.XXXXXX")
loops=()
mounts=()
cleanup() {
  set +e
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"
  done
  for loop in "${loops[@]}"; do losetup -d "$loop"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# make_fs TYPE NAME: a sparse image formatted as TYPE, loop-mounted at
# $work/NAME; sets $mounted to the mount point. (A global rather than
# $(...) output: a subshell would lose the cleanup lists.)
make_fs() {
  local type=$1 name=$2
  local image="$work/$name.img" mnt="$work/$name" loop
  truncate -s "$image_size" "$image"
  case "$type" in
    xfs) mkfs.xfs -q -f "$image" ;;
    btrfs) mkfs.btrfs -q -f "$image" >/dev/null ;;
  esac
  # Direct I/O on the backing file keeps the host's page cache out of the
  # picture, so that a flush on the loop device reaches the disk below it
  # for fio and the store alike.
  loop=$(losetup --find --show --direct-io=on "$image" 2>/dev/null) ||
    loop=$(losetup --find --show "$image")
  loops+=("$loop")
  mkdir -p "$mnt"
  mount "$loop" "$mnt"
  mounts+=("$mnt")
  mounted=$mnt
}

mounted=""
make_fs xfs xfs
xfs_dir=$mounted
btrfs_args=()
if [[ $need_btrfs -eq 1 ]]; then
  make_fs btrfs btrfs
  btrfs_args=(--btrfs-dir "$mounted")
fi

echo "run_on_loop_xfs: pairs $pairs; images in $work" >&2
set +e
"$strata" store bench "${plugin_args[@]}" --dir "$xfs_dir" "${btrfs_args[@]}" --pairs "$pairs" \
  "${bench_args[@]}"
rc=$?
set -e
exit $rc
