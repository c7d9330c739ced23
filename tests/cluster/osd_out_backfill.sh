#!/usr/bin/env bash
# Kill -9 one of four OSDs for good while a client streams writes: it is
# marked down, then out after mon_osd_down_out_interval_ms, its PGs move to
# the others (backfill), every acknowledged object stays readable, and the
# three copies of every PG agree.
source "$(dirname "$0")/lib.sh"

cluster_up 4 --backend kv --journal file --set mon_osd_down_out_interval_ms=3000
"$WRITER" write --conf "$CONF" --pool data --log "$T/acked" --seconds 12 >"$T/writer.out" &
writer=$!
sleep 3
kill_osd 2
wait_for 's["osds"]["in"] == 3' 20
echo "== osd.2 marked out"
wait "$writer"
cat "$T/writer.out"
wait_for "$all_clean" 90
"$WRITER" verify --conf "$CONF" --pool data --log "$T/acked"
replicas_agree 2
echo "PASS"
