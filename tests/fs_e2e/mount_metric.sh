# Sourced by fs_e2e scripts: a mount's metrics, printed into its log on
# SIGUSR1 (MountClient::metrics).
#
#   mount_metric PID LOG NAME   the value of metric NAME (exact, labels
#                               included) from a fresh print; 0 if absent
mount_metric() {
  local pid=$1 log=$2 name=$3 before after
  # Every print has the round-trip counter: a new one marks a fresh print.
  before=$(grep -c '^strata_fuse_mds_round_trips_total ' "$log" || true)
  kill -USR1 "$pid"
  for _ in $(seq 1 100); do
    after=$(grep -c '^strata_fuse_mds_round_trips_total ' "$log" || true)
    [ "$after" -gt "$before" ] && break
    sleep 0.05
  done
  awk -v n="$name" '$1 == n { v = $2 } END { print (v == "" ? 0 : v) }' "$log"
}
