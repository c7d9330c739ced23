# Shared by the network-namespace cluster tests: a monitor and three OSDs,
# each in its own network namespace ("host"), joined by a bridge; torn down
# on exit even when a test fails. Skips (exit 77) where namespaces cannot be
# made. Needs STRATA and WRITER. Before sourcing, a test may set
# NETNS_GLOBAL_CONF / NETNS_MON_CONF: lines appended to [global] / [mon].
set -euo pipefail
: "${STRATA:?}" "${WRITER:?}"

tag=st$$
if ! ip netns add "$tag-probe" 2>/dev/null; then
  echo "SKIP: cannot create network namespaces here (need root and CONFIG_NET_NS)"
  exit 77
fi
ip netns del "$tag-probe"

T=$(mktemp -d /var/tmp/strata-netns-test.XXXXXX)
CONF=$T/strata.conf
BR=br-$tag
NS=("$tag-mon" "$tag-h0" "$tag-h1" "$tag-h2")
IPS=(10.231.0.10 10.231.0.1 10.231.0.2 10.231.0.3)
PIDS=()

netns_cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }; done
  fi
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
  if [ -n "${STRATA_TEST_KEEP:-}" ]; then echo "== kept $T (STRATA_TEST_KEEP)"; else rm -rf "$T"; fi
  exit "$rc"
}
trap netns_cleanup EXIT

ip link add "$BR" type bridge
ip link set "$BR" up
for i in "${!NS[@]}"; do
  n=${NS[$i]}
  ip netns add "$n"
  ip link add "v$i-$tag" type veth peer name eth0 netns "$n"
  ip link set "v$i-$tag" master "$BR" up
  ip -n "$n" addr add "${IPS[$i]}/24" dev eth0
  ip -n "$n" link set eth0 up
  ip -n "$n" link set lo up
done

python3 - "$T/keyring" <<'PY'
import base64, os, sys
with open(sys.argv[1], "w") as f:
    for e in ["mon", "osd.0", "osd.1", "osd.2", "client.admin"]:
        f.write(f"[{e}]\nkey = {base64.b64encode(os.urandom(32)).decode()}\n\n")
os.chmod(sys.argv[1], 0o600)
PY
cat >"$CONF" <<CFG
[global]
fsid = 6a1c2d3e-0000-4000-8000-$(printf '%012d' $$)
mon_addr = ${IPS[0]}:6789
keyring = $T/keyring
heartbeat_interval_ms = 200
heartbeat_grace_ms = 1500
${NETNS_GLOBAL_CONF:-}

[mon]
mon_data = $T/mon
${NETNS_MON_CONF:-}

[osd]
backend = kv
journal = file
journal_size = 64M
CFG
for i in 0 1 2; do
  cat >>"$CONF" <<CFG

[osd.$i]
store_dir = $T/osd.$i
osd_addr = ${IPS[$((i + 1))]}
osd_host = host$i
CFG
done

run_in() {  # run_in NS LOG CMD...: a daemon in a namespace
  local n=$1 log=$2
  shift 2
  ip netns exec "$n" "$@" >"$log" 2>&1 &
  PIDS+=($!)
}

# Starts the monitor and the three OSDs (after mkfs).
netns_cluster_up() {
  "$STRATA" mon --conf "$CONF" --mkfs
  run_in "${NS[0]}" "$T/mon.log" "$STRATA" mon --conf "$CONF"
  for i in 0 1 2; do
    "$STRATA" osd --id "$i" --conf "$CONF" --mkfs
    run_in "${NS[$((i + 1))]}" "$T/osd.$i.log" "$STRATA" osd --id "$i" --conf "$CONF"
  done
}

# A command as the client, from the monitor's namespace.
client() { ip netns exec "${NS[0]}" "$@"; }
st() { client "$STRATA" status --conf "$CONF" --format json --timeout 5; }
# status_value EXPR: a Python expression over the status JSON `s`.
status_value() {
  st 2>/dev/null | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)" 2>/dev/null
}
wait_for() {  # wait_for EXPR SECONDS (wall time, however slow status is)
  local expr=$1 end=$((SECONDS + $2))
  while ((SECONDS < end)); do
    [ "$(status_value "$expr")" = True ] && return 0
    sleep 0.2
  done
  echo "timed out waiting for: $expr"; st || true
  return 1
}
clean='s["pgs"]["total"] > 0 and s["pgs"]["by_state"].get("active+clean", 0) == s["pgs"]["total"]'
