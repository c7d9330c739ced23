#!/usr/bin/env bash
# Kill -9 one of three OSDs while a client streams writes (size 3,
# min_size 2): writes pause for at most about the heartbeat grace, go on,
# and after the OSD restarts every acknowledged object reads back right and
# all three replicas hold identical copies.
source "$(dirname "$0")/lib.sh"
BACKEND=${1:-kv}

cluster_up 3 --backend "$BACKEND" --journal file --size-gb 2
"$WRITER" write --conf "$CONF" --pool data --log "$T/acked" --seconds 14 >"$T/writer.out" &
writer=$!
sleep 3
kill_osd 1
wait_for 's["osds"]["up"] == 2' 10
sleep 3
restart_dead
echo "== osd.1 restarted"
wait "$writer"
cat "$T/writer.out"
max_wait=$(awk '{print $4}' "$T/writer.out")
# Grace 1500 ms; allow as much again for the new map and peering.
python3 -c "import sys; sys.exit(0 if $max_wait <= 3000 else 1)" ||
  { echo "FAIL: a write waited ${max_wait} ms"; exit 1; }
wait_for "$all_clean" 60
"$WRITER" verify --conf "$CONF" --pool data --log "$T/acked"
replicas_agree
echo "PASS"
