#!/usr/bin/env bash
# Several hosts: a monitor and three OSDs, each in its own network namespace,
# joined by a bridge. Cutting one OSD's host off the bridge for 14 s gets it
# marked down while the cluster keeps serving writes; reconnecting it brings
# it back up within seconds (its monitor session notices the silence and
# makes a new connection instead of waiting out TCP's back-off) and
# recovers it. Skips (exit 77) where namespaces cannot be made.
source "$(dirname "$0")/netns_lib.sh"
netns_cluster_up

wait_for 's["osds"]["up"] == 3' 30
ip netns exec "${NS[0]}" "$STRATA" pool create data --size 3 --min-size 2 --pg-num 16 --conf "$CONF"
wait_for "$clean" 60
echo "== 3 hosts up, every PG active+clean"

ip netns exec "${NS[0]}" "$WRITER" write --conf "$CONF" --pool data --log "$T/acked" --seconds 22 \
  >"$T/writer.out" &
writer=$!
PIDS+=("$writer")
sleep 2
# Taken off the bridge, its link stays up: packets to and from host2 are
# lost on the way, as in a switch failure, with no local error that would
# tell TCP to retry sooner.
ip link set "v3-$tag" nomaster
cut_at=$(date +%s.%N)
echo "== host2 (osd.2) cut off the bridge"
wait_for 's["osds"]["up"] == 2' 15
echo "== osd.2 marked down; writes go on"
# Long enough for TCP's retransmission back-off to grow past ten seconds:
# without keepalives on the monitor session osd.2 would wait that long
# after the heal before the monitor heard from it again.
sleep "$(python3 -c "import time; print(max(0.0, 14 - (time.time() - $cut_at)))")"
ip link set "v3-$tag" master "$BR"
healed_at=$(date +%H:%M:%S.%N)
echo "== host2 reconnected at $healed_at"
wait_for 's["osds"]["up"] == 3' 30
# When the monitor saw osd.2 boot again, from its log (HH:MM:SS.mmm, the
# same clock): the status polling above adds its own delay.
back=$(python3 - "$T/mon.log" "$healed_at" <<'PY'
import re, sys
def secs(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)
healed = secs(sys.argv[2])
boots = [secs(m.group(1)) for m in
         re.finditer(r"^(\d\d:\d\d:\d\d\.\d+) info mon: osd\.2 booted", open(sys.argv[1]).read(), re.M)]
after = [b - healed for b in boots if b >= healed - 0.5]
print(round(after[0], 1) if after else 99)
PY
)
echo "== the monitor saw osd.2 boot again ${back} s after the network came back"
if python3 -c "import sys; sys.exit(0 if $back <= 5 else 1)"; then :; else
  echo "FAIL: osd.2 needed ${back} s (more than 5) to reach the monitor again after the heal"
  exit 1
fi
wait "$writer"
cat "$T/writer.out"
wait_for "$clean" 90
echo "== osd.2 back up, every PG active+clean"
ip netns exec "${NS[0]}" "$WRITER" verify --conf "$CONF" --pool data --log "$T/acked"
echo "PASS"
