#!/usr/bin/env bash
# An asymmetric partition: host2 (osd.2) loses its routes to the other OSD
# hosts (blackhole routes both ways) but still reaches the monitor and the
# client. The monitor must not believe osd.2's reports about the majority
# (one failure domain), must mark osd.2 down on theirs, and must hold it
# down once it flaps instead of letting it boot again and again: writes go
# on, map epochs stop moving, nothing acknowledged is lost, and after the
# heal and `strata osd unhold` every PG is clean again.
# Skips (exit 77) where namespaces cannot be made.
NETNS_MON_CONF="mon_osd_flap_max_markdowns = 3
mon_osd_flap_window_ms = 60000"
source "$(dirname "$0")/netns_lib.sh"
netns_cluster_up

wait_for 's["osds"]["up"] == 3' 30
client "$STRATA" pool create data --size 3 --min-size 2 --pg-num 16 --conf "$CONF"
wait_for "$clean" 60
echo "== 3 hosts up, every PG active+clean"

# (ip netns exec execs the writer: $! is the writer itself, for kill -TERM.)
ip netns exec "${NS[0]}" "$WRITER" write --conf "$CONF" --pool data --log "$T/acked" --seconds 120 \
  >"$T/writer.out" &
writer=$!
PIDS+=("$writer")
sleep 2

# ip -n NS route add|del blackhole ADDR on both ends of each OSD-OSD pair.
blackholes() {
  local op=$1
  for peer in 1 2; do
    ip -n "${NS[3]}" route "$op" blackhole "${IPS[$peer]}/32"
    ip -n "${NS[$peer]}" route "$op" blackhole "${IPS[3]}/32"
  done
}
epoch_before=$(status_value 's["epoch"]')
blackholes add
cut_at=$(date +%s)
echo "== host2 cut off from the other OSD hosts (map epoch $epoch_before); mon and client reach all"

held='s["osds"]["up"] == 2 and any("osd.2 held down" in w for w in s["warnings"])'
wait_for "$held" 45
echo "== osd.2 held down for flapping $(($(date +%s) - cut_at)) s after the cut, epoch $(status_value 's["epoch"]')"
acked_1=$(wc -l <"$T/acked")
epoch_1=$(status_value 's["epoch"]')
sleep 8
acked_2=$(wc -l <"$T/acked")
epoch_2=$(status_value 's["epoch"]')
downs() { grep -c "marking osd.$1 down" "$T/mon.log" || true; }
echo "== in 8 s while held: $((acked_2 - acked_1)) writes acknowledged, map epoch $epoch_1 -> $epoch_2;" \
  "markdowns: osd.0 $(downs 0), osd.1 $(downs 1), osd.2 $(downs 2)"
fail() { echo "FAIL: $*"; exit 1; }
[ "$(downs 0)" -eq 0 ] || fail "osd.0 was marked down on the isolated osd.2's word"
[ "$(downs 1)" -eq 0 ] || fail "osd.1 was marked down on the isolated osd.2's word"
[ "$(downs 2)" -le 3 ] || fail "osd.2 was marked down $(downs 2) times (held after 3)"
[ "$((acked_2 - acked_1))" -ge 10 ] || fail "writes did not go on while osd.2 was held down"
[ "$((epoch_2 - epoch_1))" -le 1 ] || fail "the map kept changing (epoch $epoch_1 -> $epoch_2)"
[ "$(status_value 's["health"]')" = HEALTH_WARN ] || fail "health does not warn about osd.2"

blackholes del
echo "== routes back"
client "$STRATA" osd unhold 2 --conf "$CONF"
wait_for 's["osds"]["up"] == 3' 30
kill -TERM "$writer"
wait "$writer"
cat "$T/writer.out"
wait_for "$clean" 60
echo "== osd.2 back up, every PG active+clean"
client "$WRITER" verify --conf "$CONF" --pool data --log "$T/acked"
echo "PASS"
