#!/bin/bash
# Real NBD clients against nbd_mem_server (a MemDevice behind the NBD
# server): nbdinfo, nbdcopy, qemu-img and fio's nbd engine must all
# negotiate, move data both ways unchanged, and see holes as holes.
#
#   real_clients_test.sh PATH/TO/nbd_mem_server
set -euo pipefail

server_bin=${1:?usage: real_clients_test.sh PATH/TO/nbd_mem_server}
work=$(mktemp -d /tmp/rbd-nbd-clients.XXXXXX)
sock=$work/nbd.sock
uri="nbd+unix:///?socket=$sock"
server_pid=

cleanup() {
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts a server of $1 bytes (further arguments passed on) and waits for
# its "listening on" line.
# With --tcp, $uri becomes nbd://HOST:PORT/ with the port the server got.
start_server() {
  local size=$1
  shift
  local where=(--unix "$sock")
  [[ ${1:-} == --tcp ]] && where=()
  "$server_bin" --size "$size" "${where[@]}" "$@" >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do
    if grep -q "listening on" "$work/server.out" 2>/dev/null; then
      local addr
      addr=$(sed -n 's/^listening on //p' "$work/server.out")
      if [[ $addr == unix:* ]]; then uri="nbd+unix:///?socket=$sock"; else uri="nbd://$addr/"; fi
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err"; fail "server died"; }
    sleep 0.05
  done
  fail "server did not start"
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "server exited with $?"
  server_pid=
  [[ ! -e $sock ]] || fail "socket file left behind"
}

size=$((64 << 20))
start_server $size

step "nbdinfo"
nbdinfo "$uri" >"$work/info"
grep -q "export-size: $size" "$work/info" || { cat "$work/info"; fail "nbdinfo size"; }
grep -q "can_multi_conn: true" "$work/info" || fail "nbdinfo multi-conn"
grep -q "can_trim: true" "$work/info" || fail "nbdinfo trim"
grep -q "can_zero: true" "$work/info" || fail "nbdinfo zero"
grep -q "can_flush: true" "$work/info" || fail "nbdinfo flush"
grep -q "can_cache: true" "$work/info" || fail "nbdinfo cache"
grep -q "base:allocation" "$work/info" || fail "nbdinfo meta context"
grep -q "block_size_preferred: 4096" "$work/info" || fail "nbdinfo block size"
nbdinfo --list "nbd+unix://?socket=$sock" >"$work/list"
grep -q "an in-memory test device" "$work/list" || { cat "$work/list"; fail "nbdinfo --list"; }
nbdinfo --map "$uri" >"$work/map"
grep -Eq "^ *0 +$size +3 +hole,zero" "$work/map" || { cat "$work/map"; fail "empty device not one hole"; }

step "nbdcopy in and out (4 connections)"
# 24 MiB of random data with a 4 MiB hole in the middle, at offset 8 MiB.
head -c $((10 << 20)) /dev/urandom >"$work/src"
head -c $((4 << 20)) /dev/zero >>"$work/src"
head -c $((10 << 20)) /dev/urandom >>"$work/src"
truncate -s $size "$work/src"
nbdcopy --connections=4 "$work/src" "$uri"
nbdcopy --connections=4 "$uri" "$work/back"
cmp "$work/src" "$work/back" || fail "nbdcopy round trip differs"
nbdinfo --map "$uri" >"$work/map"
grep -q "hole,zero" "$work/map" || { cat "$work/map"; fail "no hole after nbdcopy"; }

step "qemu-img convert, compare, map"
head -c $((16 << 20)) /dev/urandom >"$work/raw"
truncate -s $size "$work/raw"
qemu-img convert -n -f raw -O raw "$work/raw" "$uri"
qemu-img compare -f raw -F raw "$work/raw" "$uri"
qemu-img convert -f raw -O raw "$uri" "$work/raw.back"
cmp "$work/raw" "$work/raw.back" || fail "qemu-img round trip differs"
qemu-img map --output=json -f raw "$uri" >"$work/qmap"
# The first 16 MiB hold data, the rest reads as zeros (a hole).
grep -q '"start": 0, "length": 16777216, "depth": 0, "present": true, "zero": false, "data": true' "$work/qmap" \
  || { cat "$work/qmap"; fail "qemu-img map data"; }
grep -q '"start": 16777216, "length": 50331648, "depth": 0, "present": true, "zero": true, "data": false' "$work/qmap" \
  || { cat "$work/qmap"; fail "qemu-img map hole"; }

step "fio randwrite with crc32c verify, 2 jobs, iodepth 16"
# fio leaves its verify state files in the current directory.
cd "$work"
fio --name=nbd --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 --size=32M \
  --numjobs=2 --offset_increment=32M --verify=crc32c --do_verify=0 \
  --group_reporting --output="$work/fio-write" >/dev/null || { cat "$work/fio-write"; fail "fio write"; }
fio --name=nbd --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 --size=32M \
  --numjobs=2 --offset_increment=32M --verify=crc32c --verify_only \
  --group_reporting --output="$work/fio-verify" >/dev/null || { cat "$work/fio-verify"; fail "fio verify"; }
grep -q "err= 0" "$work/fio-verify" || { cat "$work/fio-verify"; fail "fio verify errors"; }

stop_server

step "read-only export over TCP"
start_server $((8 << 20)) --tcp 127.0.0.1:0 --read-only
[[ $uri == nbd://127.0.0.1:* ]] || fail "TCP address: $uri"
nbdinfo "$uri" | grep -q "is_read_only: true" || fail "read-only not advertised"
head -c 4096 /dev/urandom >"$work/small"
if nbdcopy "$work/small" "$uri" 2>/dev/null; then fail "write to a read-only export succeeded"; fi
stop_server

echo "all real clients passed"
