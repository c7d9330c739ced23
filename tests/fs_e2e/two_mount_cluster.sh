# Sourced by fs_e2e scripts that run one cluster and up to two mounts of
# it (SCRATCH/mnt and SCRATCH/other): checks the arguments (STRATA
# SCRATCH_DIR), clears what an interrupted run left, starts the cluster
# (tests/scripts/cluster.sh, one MDS) and tears everything down on exit.
# Before sourcing, set `name` (the script's name, for usage and FAIL lines).
# Sets: here cluster_sh mount_sh strata scratch cluster mnt other conf;
# defines cleanup() and fail().
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
cluster_sh=$here/../scripts/cluster.sh
mount_sh=$here/../../bench/fs/strata_mount.sh
[ $# -eq 2 ] || { echo "usage: $name.sh STRATA SCRATCH_DIR" >&2; exit 2; }
strata=$1
scratch=$2
cluster=$scratch/cluster
mnt=$scratch/mnt
other=$scratch/other
cleanup() (
  set +e
  "$mount_sh" umount "$strata" "$mnt"
  "$mount_sh" umount "$strata" "$other"
  "$cluster_sh" down "$strata" "$cluster" >/dev/null
)
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "$name: FAIL: $*" >&2
  exit 1
}

cleanup
mkdir -p "$mnt" "$other"
"$cluster_sh" up "$strata" "$cluster" --mds 1 >"$scratch/up.log" 2>&1 ||
  { tail -n 30 "$scratch/up.log" >&2; exit 1; }
conf=$cluster/strata.conf
