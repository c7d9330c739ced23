# Sourced by the block e2e scripts: a cluster from tests/scripts/cluster.sh
# (3 OSDs, kv backend, tmpfs journal, no MDS) in SCRATCH/cluster, the
# `strata` command bound to it, and cleanup of everything the script
# registered (NBD servers, maps, loop devices, mounts) on every exit path.
#
#   source lib.sh STRATA SCRATCH
#   e2e_up                    start the cluster (pool "rbd" comes with `strata up`)
#   e2e_on_exit CMD...        run CMD at exit (last registered, first run)
#   st ARGS...                strata ARGS --conf the cluster's config
#   e2e_serve NAME SOCK [ARGS...]   `nbd serve --fork` an image on a socket
#   e2e_fail MSG              print and exit 1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_sh=$here/../../scripts/cluster.sh
strata=$1
scratch=$2
cluster=$scratch/cluster
conf=$cluster/strata.conf
e2e_exit_cmds=()

st() { "$strata" "$@" --conf "$conf"; }

e2e_on_exit() { e2e_exit_cmds=("$*" "${e2e_exit_cmds[@]}"); }

e2e_cleanup() {
  set +e
  for c in "${e2e_exit_cmds[@]}"; do eval "$c" >/dev/null 2>&1; done
  "$cluster_sh" down "$strata" "$cluster" >/dev/null 2>&1
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM

e2e_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

e2e_up() {
  "$cluster_sh" down "$strata" "$cluster" >/dev/null 2>&1 || true
  mkdir -p "$scratch"
  "$cluster_sh" up "$strata" "$cluster" "$@" >"$scratch/up.log" 2>&1 ||
    { tail -n 30 "$scratch/up.log" >&2; exit 1; }
}

# Serves image rbd/NAME on socket SOCK in the background; stopped at exit.
e2e_serve() {
  local name=$1 sock=$2
  shift 2
  rm -f "$sock"
  st nbd serve "rbd/$name" --socket "$sock" --fork "$@" >>"$scratch/nbd.log" 2>&1 ||
    { tail -n 20 "$scratch/nbd.log" >&2; e2e_fail "nbd serve rbd/$name"; }
  e2e_on_exit "$strata" nbd stop --socket "$sock"
}

# The NBD URI of image rbd/NAME on socket SOCK.
e2e_uri() { echo "nbd+unix:///rbd/$1?socket=$2"; }

step() { echo "== $*"; }
