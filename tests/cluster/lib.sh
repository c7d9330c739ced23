# Shared by the cluster fault tests: a real cluster made by `strata up`
# (separate mon and OSD processes on 127.0.0.1), torn down on exit even when
# a test fails. Needs STRATA (the strata binary) and WRITER (cluster_writer).
set -euo pipefail
: "${STRATA:?path of the strata binary}" "${WRITER:?path of cluster_writer}"

T=$(mktemp -d /var/tmp/strata-cluster-test.XXXXXX)
C=$T/cluster
CONF=$C/strata.conf
# The test's own output is kept too: a failure report ends with the daemon
# logs, and CI shows only its last lines, so the cause is repeated after them.
exec > >(tee -a "$T/test.out") 2>&1
set -E
trap 'FAILED_AT="line $LINENO: $BASH_COMMAND"' ERR

cluster_cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    sleep 0.2  # tee's last lines
    local own_lines
    own_lines=$(wc -l <"$T/test.out")
    echo "== test failed (rc $rc); daemon logs:"
    for f in "$C"/*.log; do
      [ -f "$f" ] || continue
      echo "--- $f (last 40 lines)"
      tail -n 40 "$f"
    done
    echo "== the test's last lines (rc $rc${FAILED_AT:+, failed at $FAILED_AT}):"
    head -n "$own_lines" "$T/test.out" | tail -n 8
  fi
  if [ -n "${STRATA_TEST_KEEP:-}" ]; then
    "$STRATA" down --dir "$C" >/dev/null 2>&1 || true
    echo "== kept $T (STRATA_TEST_KEEP)"
  else
    "$STRATA" down --dir "$C" --purge >/dev/null 2>&1 || true
    rm -rf "$T"
  fi
  exit "$rc"
}
trap cluster_cleanup EXIT

# cluster_up OSDS [strata up options...]: short heartbeats so that failures
# are seen in a few seconds.
cluster_up() {
  local osds=$1
  shift
  "$STRATA" up --dir "$C" --osds "$osds" --timeout 120 \
    --set heartbeat_interval_ms=200 --set heartbeat_grace_ms=1500 "$@"
}

osd_pid() { cat "$C/osd.$1.pid"; }
kill_osd() {
  local pid
  pid=$(osd_pid "$1")
  kill -9 "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  echo "== killed osd.$1 (pid $pid) with SIGKILL"
}

# restart_dead: `strata up` on an existing DIR starts the daemons that are
# not running and waits for active+clean.
restart_dead() { "$STRATA" up --dir "$C" --timeout 120 >/dev/null; }

status_json() { "$STRATA" status --conf "$CONF" --format json; }

# status_field EXPR: evaluates a Python expression over the status JSON `s`.
status_field() {
  status_json | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}

# wait_for EXPR SECONDS: until the Python expression over the status is True.
wait_for() {
  local expr=$1 secs=$2 i
  for ((i = 0; i < secs * 5; i++)); do
    if [ "$(status_field "$expr" 2>/dev/null || echo False)" = "True" ]; then return 0; fi
    sleep 0.2
  done
  echo "== timed out after ${secs}s waiting for: $expr"
  status_json || true
  return 1
}

all_clean='s["pgs"]["total"] > 0 and s["pgs"]["by_state"].get("active+clean", 0) == s["pgs"]["total"]'

# stop_daemons: SIGTERM to the monitor and every OSD, leaving their file
# systems mounted (for offline checks); `strata down` at exit unmounts.
stop_daemons() {
  local f pid
  for f in "$C"/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "== $f: pid $pid ignored SIGTERM"; return 1; }
  done
  return 0
}

# replicas_agree [SKIP_OSD...]: stops the cluster and compares, PG by PG,
# every copy of every object (name, size, data digest) across the OSD
# stores, except those of the OSDs named (e.g. one that never came back).
replicas_agree() {
  stop_daemons
  python3 - "$C" "$STRATA" "$@" <<'PY'
import glob, os, re, subprocess, sys
cdir, strata = sys.argv[1], sys.argv[2]
skip = {f"osd.{i}" for i in sys.argv[3:]}
copies = {}   # (pg, object) -> {osd: line}
pgs = {}      # pg -> set of osds holding it
for conf_store in sorted(glob.glob(os.path.join(cdir, "osd.*"))):
    store = os.path.join(conf_store, "store")
    if not os.path.isdir(store):
        continue
    osd = os.path.basename(conf_store)
    if osd in skip:
        continue
    out = subprocess.run([strata, "store", "dump", "--dir", store, "--digest", "--limit", "0"],
                         check=True, capture_output=True, text=True).stdout
    coll = None
    for line in out.splitlines():
        m = re.match(r"collection (pg\.\S+)$", line)
        if m:
            coll = m.group(1); pgs.setdefault(coll, set()).add(osd); continue
        if line.startswith("collection "):
            coll = None; continue
        m = re.match(r"  (\S+) size (\d+) .* digest ([0-9a-f]+)$", line)
        if coll and m and not m.group(1).startswith("_"):
            copies.setdefault((coll, m.group(1)), {})[osd] = (m.group(2), m.group(3))
bad = 0
for (pg, obj), by_osd in sorted(copies.items()):
    holders = pgs[pg]
    if set(by_osd) != holders or len(set(by_osd.values())) != 1:
        bad += 1
        if bad <= 10:
            print(f"replica mismatch {pg}/{obj}: {by_osd} (PG on {sorted(holders)})")
print(f"compared {len(copies)} objects over {len(pgs)} PG collections: {bad} differ")
sys.exit(1 if bad or not copies else 0)
PY
}
