#!/usr/bin/env bash
# The block-image figures of issue 13 (docs/BLOCK.md), each printed next to
# the baseline it is judged against, all measured in this one run (the
# machine is shared and noisy: compare ratios, not absolute numbers).
#
#   bench/block/run.sh [--strata BIN] [--backend xfs|btrfs|kv] [--journal file|tmpfs]
#                      [--seconds 8] [--workdir /var/tmp] [--no-map] [--json FILE]
#
# `strata up` (3 OSDs, each on its own loop image), the size=3 pool "rbd",
# a 1 GiB image served by `strata nbd serve` on a Unix socket, then fio's
# nbd engine:
#   4K and 8K random writes, each followed by a flush (--fsync=1), depth 1
#   and 32, over 256 MiB (64 objects)        vs `bench objects write` at the
#                                            same size and concurrency (goal
#                                            >= 0.8x), and Ceph 16.2's librbd
#                                            (4K: 322/s at depth 1, 1,273/s at 32)
#   16 MiB sequential writes, 1 and 4 jobs   vs `bench objects write --size 4M`
#                                            at 4x the jobs (goal >= 0.8x)
#   16 MiB sequential reads, 1 and 4 jobs    vs the writes (goal: reads >= writes)
#   128 KiB sequential reads, 1 job          vs the 16 MiB reads (goal >= 0.7x;
#                                            Ceph's krbd in seed 001: 8%)
#   sequential writes of 4x the journal      no second below 50% of the average
# and with --no-map left out, the same 4K and 16M figures through `strata
# image map` + losetup --direct-io=on (fio's libaio engine on the loop device).
# Needs root (loop devices), fio, and nbd support in fio (Debian's has it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
strata=$repo/build/bin/strata
backend=xfs
journal=file
secs=8
workdir=${STRATA_BENCH_WORKDIR:-/var/tmp}
json_out=""
map=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) strata=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --no-map) map=0; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/block/run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$strata" ]] || { echo "no strata binary at $strata (build first or pass --strata)" >&2; exit 2; }
command -v fio >/dev/null || { echo "bench/block/run.sh: needs fio" >&2; exit 2; }

W=$(mktemp -d "$workdir/strata-block-bench.XXXXXX")
C=$W/cluster
sock=$W/bench.sock
at=$W/map
loop=""
cleanup() {
  set +e
  [ -n "$loop" ] && losetup -d "$loop"
  "$strata" image unmap "$at" --conf "$C/strata.conf" >/dev/null 2>&1
  "$strata" nbd stop --socket "$sock" >/dev/null 2>&1
  "$strata" down --dir "$C" --purge >/dev/null 2>&1
  rm -rf "$W"
}
trap cleanup EXIT
R=$W/results
mkdir -p "$R" "$at"

echo "== strata up: 3 OSDs, $backend + $journal journal" >&2
"$strata" up --dir "$C" --osds 3 --backend "$backend" --journal "$journal" --size-gb 6 --mds 0 \
  >"$W/up.log"
conf=$C/strata.conf
st() { "$strata" "$@" --conf "$conf"; }
journal_bytes=$((256 << 20))  # `strata up`'s journal_size for the file journal

# shellcheck source=bench/lib.sh
source "$here/../lib.sh"

objects() {  # objects NAME SIZE CONC
  settle
  echo "== bench objects write pool=rbd size=$2 concurrency=$3" >&2
  st bench objects write --pool rbd --size "$2" --concurrency "$3" --seconds "$secs" \
    --prefix "base.$1." --format json >"$R/obj_$1.json"
}
objects 4k_c1 4K 1
objects 4k_c32 4K 32
objects 8k_c1 8K 1
objects 8k_c32 8K 32
objects 4m_c4 4M 4
objects 4m_c16 4M 16

st image create rbd/bench --size 1G
st nbd serve rbd/bench --socket "$sock" --fork >"$W/nbd.log" 2>&1
uri="nbd+unix:///rbd/bench?socket=$sock"

nbdfio() {  # nbdfio NAME fio-args...
  local name=$1
  shift
  settle
  echo "== fio nbd $name: $*" >&2
  fio --name="$name" --ioengine=nbd --uri="$uri" --output-format=json \
    --output="$R/fio_$name.json" "$@" >/dev/null
}
timed=(--time_based --runtime="$secs")
nbdfio w4k_d1 --rw=randwrite --bs=4k --iodepth=1 --fsync=1 --size=256M "${timed[@]}"
nbdfio w4k_d32 --rw=randwrite --bs=4k --iodepth=32 --fsync=1 --size=256M "${timed[@]}"
nbdfio w8k_d1 --rw=randwrite --bs=8k --iodepth=1 --fsync=1 --size=256M "${timed[@]}"
nbdfio w8k_d32 --rw=randwrite --bs=8k --iodepth=32 --fsync=1 --size=256M "${timed[@]}"
# Sequential writers flush at the end (--end_fsync): plain writes are
# answered before they land (the server's write-back), so without it the
# figure would count bytes not yet durable.
nbdfio w16m_j1 --rw=write --bs=16m --iodepth=1 --size=1G --end_fsync=1 "${timed[@]}"
nbdfio r16m_j1 --rw=read --bs=16m --iodepth=1 --size=1G "${timed[@]}"
nbdfio w16m_j4 --rw=write --bs=16m --iodepth=1 --numjobs=4 --size=256M --offset_increment=256M --end_fsync=1 \
  --group_reporting "${timed[@]}"
nbdfio r16m_j4 --rw=read --bs=16m --iodepth=1 --numjobs=4 --size=256M --offset_increment=256M \
  --group_reporting "${timed[@]}"
nbdfio r128k_j1 --rw=read --bs=128k --iodepth=1 --size=1G "${timed[@]}"
# 4x the journal of each OSD (every OSD holds a replica of every object).
settle
echo "== fio nbd long sequential write: $((4 * journal_bytes >> 20)) MiB" >&2
(cd "$R" && fio --name=long --ioengine=nbd --uri="$uri" --rw=write --bs=4m --iodepth=4 \
  --end_fsync=1 --size=$((4 * journal_bytes)) --write_bw_log=long --log_avg_msec=1000 \
  --output-format=json --output="$R/fio_long.json" >/dev/null)
st nbd stop --socket "$sock"

if [ "$map" = 1 ]; then
  st image map rbd/bench --at "$at" >"$W/map.log" 2>&1
  loop=$(losetup --direct-io=on -f --show "$at/bench")
  loopfio() {  # loopfio NAME fio-args...
    local name=$1
    shift
    settle
    echo "== fio loop-on-map $name: $*" >&2
    fio --name="$name" --filename="$loop" --ioengine=libaio --direct=1 --output-format=json \
      --output="$R/fio_map_$name.json" "$@" >/dev/null
  }
  loopfio w4k_d1 --rw=randwrite --bs=4k --iodepth=1 --fsync=1 --size=256M "${timed[@]}"
  loopfio w4k_d32 --rw=randwrite --bs=4k --iodepth=32 --fsync=1 --size=256M "${timed[@]}"
  loopfio w16m_j1 --rw=write --bs=16m --iodepth=1 --size=1G "${timed[@]}"
  loopfio r16m_j1 --rw=read --bs=16m --iodepth=1 --size=1G "${timed[@]}"
  losetup -d "$loop"
  loop=""
  st image unmap "$at"
fi

python3 - "$R" "$backend" "$journal" "$json_out" <<'PY'
import glob, json, os, sys
R, backend, journal, json_out = sys.argv[1:5]
def load(n): return json.load(open(os.path.join(R, n + ".json")))
obj = {os.path.basename(p)[4:-5]: json.load(open(p)) for p in glob.glob(os.path.join(R, "obj_*.json"))}
fio = {os.path.basename(p)[4:-5]: json.load(open(p)) for p in glob.glob(os.path.join(R, "fio_*.json"))}
def job(n):
    return fio[n]["jobs"][0]
def iops(n):
    j = job(n); return j["write"]["iops"] + j["read"]["iops"]
def mbps(n):
    j = job(n); return (j["write"]["bw_bytes"] + j["read"]["bw_bytes"]) / 1e6
def lat(n, pct):
    j = job(n); side = j["write"] if j["write"]["iops"] > 0 else j["read"]
    p = side.get("clat_ns", {}).get("percentile", {})
    key = {50: "50.000000", 99: "99.000000"}[pct]
    return p.get(key, 0) / 1e6
obj_ops = lambda n: obj[n]["ops_per_sec"]
obj_mb = lambda n: obj[n]["bytes"] / obj[n]["seconds"] / 1e6
rows = []
def row(what, value, unit, base, goal, note=""):
    ratio = value / base if base else None
    verdict = "" if goal is None or ratio is None else ("met" if ratio >= goal else "MISSED")
    rows.append(dict(what=what, value=value, unit=unit, baseline=base, ratio=ratio, goal=goal,
                     verdict=verdict, note=note))
for bs, ceph in (("4k", {1: 322, 32: 1273}), ("8k", {1: None, 32: None})):
    for d in (1, 32):
        n = f"w{bs}_d{d}"
        note = f"p50 {lat(n, 50):.2f} ms p99 {lat(n, 99):.2f} ms"
        if ceph[d]: note += f"; {iops(n) / ceph[d]:.1f}x Ceph librbd"
        row(f"{bs.upper()} randwrite+fsync depth {d} / objects {bs.upper()} c{d}", iops(n), "IOPS",
            obj_ops(f"{bs}_c{d}"), 0.8, note)
row("16M seq write 1 job / objects 4M c4", mbps("w16m_j1"), "MB/s", obj_mb("4m_c4"), 0.8)
row("16M seq write 4 jobs / objects 4M c16", mbps("w16m_j4"), "MB/s", obj_mb("4m_c16"), 0.8)
row("16M seq read 1 job / 16M write 1 job", mbps("r16m_j1"), "MB/s", mbps("w16m_j1"), 1.0)
row("16M seq read 4 jobs / 16M write 4 jobs", mbps("r16m_j4"), "MB/s", mbps("w16m_j4"), 1.0)
row("128K seq read 1 job / 16M read 1 job", mbps("r128k_j1"), "MB/s", mbps("r16m_j1"), 0.7)
# The long write's per-second bandwidth (KiB/s per 1 s window).
bw = []
for p in glob.glob(os.path.join(R, "long_bw*.log")):
    for line in open(p):
        parts = [x.strip() for x in line.split(",")]
        if len(parts) >= 2: bw.append(int(parts[1]))
if bw:
    avg = sum(bw) / len(bw)
    row(f"long write ({len(bw)} s): slowest second / average", min(bw) / 1024 * 1.024, "MB/s",
        avg / 1024 * 1.024, 0.5)
for n, base_n in (("map_w4k_d1", "w4k_d1"), ("map_w4k_d32", "w4k_d32")):
    if n in fio:
        row(f"mapped file+loop {n[4:]} / NBD", iops(n), "IOPS", iops(base_n), None,
            f"p50 {lat(n, 50):.2f} ms p99 {lat(n, 99):.2f} ms")
for n, base_n in (("map_w16m_j1", "w16m_j1"), ("map_r16m_j1", "r16m_j1")):
    if n in fio:
        row(f"mapped file+loop {n[4:]} / NBD", mbps(n), "MB/s", mbps(base_n), None)
print(f"\nStrata block bench ({backend} + {journal} journal, 3 OSDs, size=3, fio nbd engine)\n")
print(f"{'measure':52} {'value':>9} {'unit':5} {'baseline':>9} {'ratio':>6}  goal")
for r in rows:
    ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
    base = f"{r['baseline']:.0f}" if r["baseline"] else "-"
    goal = f">={r['goal']:g} {r['verdict']}" if r["goal"] is not None else ""
    print(f"{r['what']:52} {r['value']:9.0f} {r['unit']:5} {base:>9} {ratio:>6}  {goal}")
    if r["note"]: print(f"{'':54}{r['note']}")
if json_out:
    json.dump({"rows": rows, "fio": fio, "objects": obj}, open(json_out, "w"), indent=1)
PY
