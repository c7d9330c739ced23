#!/usr/bin/env bash
# A local cluster for integration tests, made with `strata up` and test
# friendly timers (short heartbeats, quick down/out), on the kv backend
# unless told otherwise (no root, no loop devices).
#
#   cluster.sh up    STRATA DIR [strata up options...]   start (waits for active+clean)
#   cluster.sh down  STRATA DIR                          stop, unmount, remove DIR
#   cluster.sh pid   DIR NAME                            pid of "mon" or "osd.N" (empty if dead)
#   cluster.sh kill9 DIR NAME                            SIGKILL one daemon
#   cluster.sh start STRATA DIR                          start whatever is stopped again
#
# Options given to `up` come after the defaults, so they win (e.g. --backend xfs;
# --mds 1 for a filesystem: by default no MDS and no filesystem).
set -euo pipefail

usage() {
  sed -n '2,12p' "$0" >&2
  exit 2
}

pid_of() {
  local dir=$1 name=$2 pid
  [ -f "$dir/$name.pid" ] || return 0
  pid=$(cat "$dir/$name.pid")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

case "${1:-}" in
  up)
    [ $# -ge 3 ] || usage
    strata=$2 dir=$3
    shift 3
    exec "$strata" up --dir "$dir" --backend kv --journal tmpfs --osds 3 --pg-num 16 --mds 0 \
      --timeout 120 \
      --set heartbeat_interval_ms=100 --set heartbeat_grace_ms=1000 \
      --set mon_osd_down_out_interval_ms=5000 "$@"
    ;;
  start)
    [ $# -eq 3 ] || usage
    exec "$2" up --dir "$3" --timeout 120
    ;;
  down)
    [ $# -eq 3 ] || usage
    exec "$2" down --dir "$3" --purge
    ;;
  pid)
    [ $# -eq 3 ] || usage
    pid_of "$2" "$3"
    ;;
  kill9)
    [ $# -eq 3 ] || usage
    pid=$(pid_of "$2" "$3")
    [ -n "$pid" ] || { echo "cluster.sh: $3 is not running in $2" >&2; exit 1; }
    kill -9 "$pid"
    ;;
  *)
    usage
    ;;
esac
