#!/usr/bin/env bash
# `strata nbd serve` with real NBD clients: nbdinfo, qemu-img (convert,
# compare, map), nbdcopy (several connections), fio's nbd engine with
# crc32c verification (and again while an OSD is killed with -9: writes wait
# for the PG to peer, none fails), then kill -9 of the server: after a
# restart every flushed write is there.
#
#   nbd_clients.sh STRATA SCRATCH
set -euo pipefail
source "$(dirname "$0")/lib.sh" "$@"
command -v nbdinfo >/dev/null && command -v qemu-img >/dev/null ||
  e2e_fail "needs nbdinfo (libnbd-bin) and qemu-img (qemu-utils): scripts/deps.sh installs them"

e2e_up
sock=$scratch/disk.sock
uri=$(e2e_uri disk "$sock")

step "image create, nbd serve"
st image create rbd/disk --size 64M --object-size 1M
e2e_serve disk "$sock" --set lock_lease_ms=3000
st image info rbd/disk | grep -q "lock: .*nbd serve" || e2e_fail "image info shows no lock holder"

step "nbdinfo: size, export list, holes"
nbdinfo --json "$uri" >"$scratch/info.json"
python3 - "$scratch/info.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["exports"][0]
assert e["export-size"] == 64 << 20, e
assert e["can_flush"] and e["can_trim"] and e["can_zero"] and e["can_multi_conn"], e
PY
nbdinfo --list "nbd+unix:///?socket=$sock" | grep -q "rbd/disk" || e2e_fail "export list"
nbdinfo --map "$uri" | grep -q "hole" || e2e_fail "a new image is not all holes"

step "a second read-write server is refused (exclusive lock)"
if st nbd serve rbd/disk --socket "$scratch/other.sock" >"$scratch/other.log" 2>&1; then
  e2e_fail "a second read-write export of one image started"
fi
grep -qi "lock\|busy" "$scratch/other.log" || e2e_fail "the refusal does not name the lock: $(cat "$scratch/other.log")"

step "qemu-img convert in, compare, map"
src=$scratch/src.raw
python3 - "$src" <<'PY'
import os, random, sys
r = random.Random(7)
with open(sys.argv[1], "wb") as f:
    f.truncate(64 << 20)
    for i in range(40):  # scattered 256 KiB runs, the rest holes
        f.seek(r.randrange(0, (64 << 20) - (256 << 10)) & ~4095)
        f.write(os.urandom(256 << 10))
PY
qemu-img convert -n -f raw -O raw "$src" "$uri"
qemu-img compare -f raw -F raw "$src" "$uri" >/dev/null || e2e_fail "qemu-img compare differs"
qemu-img map --output=json -f raw "$uri" >"$scratch/map.json"
python3 - "$scratch/map.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
data = sum(e["length"] for e in m if e["data"])
assert 0 < data < 64 << 20, ("allocation not reported", data)
PY

step "nbdcopy out over 4 connections, byte for byte"
nbdcopy --connections=4 "$uri" "$scratch/out.raw"
cmp "$src" "$scratch/out.raw" || e2e_fail "nbdcopy out differs from what qemu-img wrote"

step "fio nbd engine: random writes with crc32c verify, 16 deep"
fio --name=verify --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 \
  --size=16M --offset=32M --verify=crc32c --verify_fatal=1 --do_verify=1 \
  --output="$scratch/fio.log" || { cat "$scratch/fio.log" >&2; e2e_fail "fio verify"; }
grep -q "err= 0" "$scratch/fio.log" || e2e_fail "fio reported errors"

used() { st image du rbd/disk --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["used"])'; }

step "fio verify while an OSD is killed with -9: no error, no verify failure"
fio --name=osdkill --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 \
  --size=24M --offset=40M --verify=crc32c --verify_fatal=1 --do_verify=1 \
  --output="$scratch/fio_osdkill.log" &
fio_pid=$!
sleep 1
"$cluster_sh" kill9 "$cluster" osd.1
wait "$fio_pid" || { cat "$scratch/fio_osdkill.log" >&2; e2e_fail "fio failed with an OSD killed"; }
grep -q "err= 0" "$scratch/fio_osdkill.log" || e2e_fail "fio reported errors with an OSD killed"
"$cluster_sh" start "$strata" "$cluster" >>"$scratch/up.log" 2>&1

step "qemu-io: discard frees space and reads zeros, write zeroes, flush"
before=$(used)
qemu-io -f raw -c 'discard 32M 16M' -c 'flush' "$uri" >/dev/null
after=$(used)
[ "$after" -lt "$before" ] || e2e_fail "discard freed nothing ($before -> $after bytes)"
qemu-io -f raw -c 'read -P 0 32M 16M' "$uri" | grep -q "read 16777216" ||
  e2e_fail "discarded range does not read as zeros"
qemu-io -f raw -c 'write -P 0x33 1M 64k' -c 'write -z 1M 64k' -c 'read -P 0 1M 64k' "$uri" |
  grep -q "read 65536" || e2e_fail "write zeroes"

step "kill -9 of the server after a flush: every flushed write is there"
qemu-io -f raw -c 'write -P 0x5a 40M 4M' -c 'flush' "$uri" >/dev/null
pid=$(pgrep -f "nbd serve rbd/disk --socket $sock" | head -n 1)
[ -n "$pid" ] || e2e_fail "no server process"
kill -9 "$pid"
# The dead server's lock lease (3 s) must run out first; until then a new
# server is refused with the lock's holder named.
for i in $(seq 1 40); do
  if st nbd serve rbd/disk --socket "$sock" --fork --set lock_lease_ms=3000 \
       >>"$scratch/restart.log" 2>&1; then
    break
  fi
  [ "$i" -lt 40 ] || { cat "$scratch/restart.log" >&2; e2e_fail "no restart after the lease ran out"; }
  sleep 0.5
done
qemu-io -f raw -c 'read -P 0x5a 40M 4M' "$uri" | grep -q "read 4194304" ||
  e2e_fail "a flushed write was lost across kill -9 of the server"

step "nbd stop: flushes, releases the lock, exits"
st nbd stop --socket "$sock"
st image info rbd/disk | grep -q "lock: *none" || e2e_fail "the lock is still held after nbd stop"
echo "PASS"
