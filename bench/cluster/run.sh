#!/usr/bin/env bash
# The cluster figures of issue 4, each printed next to the baseline it is
# judged against, all measured in this one run (the machine is shared and
# noisy: compare ratios, not absolute numbers between runs).
#
#   bench/cluster/run.sh [--strata BIN] [--backend xfs|btrfs|kv] [--journal file|tmpfs]
#                        [--seconds 8] [--workdir /var/tmp] [--json FILE]
#
# 1. Baseline: `strata store bench` (creates = new 4 KiB objects at depth 16,
#    write4m with its fio O_DIRECT 4M baseline) on a loop XFS made for it.
# 2. `strata up` with 3 OSDs of --backend (each on its own loop image), a
#    size=1 pool and the size=3 pool "data"; then `strata bench objects`:
#      4K writes, concurrency 16, size=1 and size=3   vs store creates
#      4K writes at depth 1 and 32, size=3            vs Ceph 16.2 (322/s, 1,273/s)
#      16M writes and sequential reads, 1 stream      vs Ceph 16.2 (320 / 669 MB/s)
#      4M writes and sequential reads, 16 streams     vs fio 4M O_DIRECT
#      4K random reads at depth 1                     latency p50/p99
# Needs root (loop devices). Exit code 0 unless a step failed to run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
strata=$repo/build/bin/strata
backend=xfs
journal=file
secs=8
workdir=${STRATA_BENCH_WORKDIR:-/var/tmp}
json_out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) strata=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/cluster/run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$strata" ]] || { echo "no strata binary at $strata (build first or pass --strata)" >&2; exit 2; }

W=$(mktemp -d "$workdir/strata-cluster-bench.XXXXXX")
C=$W/cluster
cleanup() {
  "$strata" down --dir "$C" --purge >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT
R=$W/results
mkdir -p "$R"

echo "== baseline: strata store bench ($backend:$journal, creates + write4m) on a loop XFS" >&2
"$repo/bench/store/run_on_loop_xfs.sh" --strata "$strata" --pairs "$backend:$journal" --image-size 8G \
  --workdir "$W" -- --workloads creates,write4m --seconds "$secs" --format json >"$R/store.json"

echo "== strata up: 3 OSDs, $backend + $journal journal" >&2
"$strata" up --dir "$C" --osds 3 --backend "$backend" --journal "$journal" --size-gb 6 >"$W/up.log"
conf=$C/strata.conf
"$strata" pool create one --size 1 --min-size 1 --pg-num 32 --conf "$conf" >/dev/null

# shellcheck source=bench/lib.sh
source "$here/../lib.sh"

bench() {  # bench NAME MODE POOL SIZE CONC [extra...]
  local name=$1 mode=$2 pool=$3 size=$4 conc=$5
  shift 5
  settle
  local prefix=()
  [[ $mode == write ]] && prefix=(--prefix "$name.")
  echo "== bench objects $mode pool=$pool size=$size concurrency=$conc $*" >&2
  "$strata" bench objects "$mode" --pool "$pool" --size "$size" --concurrency "$conc" \
    --seconds "$secs" "${prefix[@]}" --format json --conf "$conf" "$@" >"$R/$name.json"
}
bench w4k_s1_c16 write one 4K 16
bench w4k_s3_c16 write data 4K 16
bench w4k_s3_c1 write data 4K 1 --no-cleanup
bench r4k_s3_c1 rand data 4K 1   # the objects of the write just before
bench w4k_s3_c32 write data 4K 32
bench w16m_s3_c1 write data 16M 1 --no-cleanup
bench r16m_s3_c1 seq data 16M 1
bench w4m_s3_c16 write data 4M 16 --no-cleanup
bench r4m_s3_c16 seq data 4M 16

python3 - "$R" "$backend" "$json_out" "$journal" <<'PY'
import json, os, sys
R, backend, json_out, journal = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def load(n): return json.load(open(os.path.join(R, n + ".json")))
store = load("store")["pairs"][0]["workloads"]
creates = store["creates"]["creates_per_sec"]
fio4m = store.get("fio seq4m", {}).get("mb_per_sec")
b = {n[:-5]: load(n[:-5]) for n in os.listdir(R) if n != "store.json"}
mb = lambda r: r["bytes"] / r["seconds"] / 1e6
rows = []
def row(what, value, base, goal, unit):
    ratio = value / base if base else None
    ok = "" if goal is None or ratio is None else ("met" if ratio >= goal else "MISSED")
    rows.append(dict(what=what, value=value, unit=unit, baseline=base, ratio=ratio, goal=goal, verdict=ok))
row("4K write c16 size=1 / store creates c16", b["w4k_s1_c16"]["ops_per_sec"], creates, 0.70, "ops/s")
row("4K write c16 size=3 / store creates c16", b["w4k_s3_c16"]["ops_per_sec"], creates, 0.30, "ops/s")
row("4K write c1 size=3 / Ceph 322/s", b["w4k_s3_c1"]["ops_per_sec"], 322, 5.0, "ops/s")
row("4K write c32 size=3 / Ceph 1,273/s", b["w4k_s3_c32"]["ops_per_sec"], 1273, 5.0, "ops/s")
row("16M write 1 stream size=3 / Ceph 320 MB/s", mb(b["w16m_s3_c1"]), 320, 2.0, "MB/s")
row("16M seq read 1 stream / Ceph 669 MB/s", mb(b["r16m_s3_c1"]), 669, None, "MB/s")
row("4M write c16 size=3 / fio 4M O_DIRECT", mb(b["w4m_s3_c16"]), fio4m, None, "MB/s")
row("4M seq read c16 / 4M write c16", mb(b["r4m_s3_c16"]), mb(b["w4m_s3_c16"]), 1.0, "MB/s")
print(f"\nStrata cluster bench ({backend} + {journal} journal, 3 OSDs on one machine)\n")
print(f"{'measure':48} {'value':>10} {'unit':6} {'baseline':>10} {'ratio':>7}  goal")
for r in rows:
    ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
    base = f"{r['baseline']:.0f}" if r["baseline"] else "-"
    goal = f">={r['goal']:g} {r['verdict']}" if r["goal"] is not None else ""
    print(f"{r['what']:48} {r['value']:10.0f} {r['unit']:6} {base:>10} {ratio:>7}  {goal}")
lat = lambda n: b[n]["latency_ms"]
print(f"\n4K write depth 1, size=3: p50 {lat('w4k_s3_c1')['p50']:.3f} ms, p99 {lat('w4k_s3_c1')['p99']:.3f} ms"
      f"  (Ceph: 3 ms, 13 ms; goal p50 < 0.6 ms)")
print(f"4K read depth 1 (client -> primary round trip): p50 {lat('r4k_s3_c1')['p50']:.3f} ms, "
      f"p99 {lat('r4k_s3_c1')['p99']:.3f} ms")
if json_out:
    json.dump({"rows": rows, "bench": b, "store": store}, open(json_out, "w"), indent=1)
PY
