#!/usr/bin/env bash
# The fs_e2e suite on libfuse's passthrough_ll: proves the suite itself on a
# real FUSE mount (every case must pass there), independently of Strata.
#
#   run_on_passthrough.sh SCRATCH_DIR
#
# Builds passthrough_ll into SCRATCH_DIR/bin (bench/fs/passthrough_ll.sh),
# mounts SCRATCH_DIR/source at SCRATCH_DIR/mnt with -o xattr (without it
# passthrough_ll answers ENOTSUP to every xattr call, and the cp_xattr case
# fails), allow_other (the set-id and permission cases act as another user)
# and default_permissions (passthrough_ll runs every call as its own user:
# without the kernel's checks the permission case would fail), runs suite.sh
# there, and always unmounts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pt=$here/../../bench/fs/passthrough_ll.sh
[ $# -eq 1 ] || { echo "usage: run_on_passthrough.sh SCRATCH_DIR" >&2; exit 2; }
scratch=$1
mnt=$scratch/mnt
pid=""
cleanup() {
  "$pt" umount "$mnt" "$pid" || true
  rm -rf "$scratch/source"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A leftover mount from an interrupted run goes first.
"$pt" umount "$mnt" 2>/dev/null || true
bin=$("$pt" build "$scratch/bin")
rm -rf "$scratch/source"
mkdir -p "$scratch/source" "$mnt"
pid=$("$pt" mount "$bin" "$scratch/source" "$mnt" "$scratch/passthrough_ll.log" -o xattr,allow_other,default_permissions)
# Files made through it belong to its own user (root), whoever made them.
FS_E2E_SERVER_OWNS_FILES=1 "$here/suite.sh" "$mnt"
