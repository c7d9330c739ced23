#!/usr/bin/env bash
# Fill a small cluster (three OSDs on 320 MiB XFS images; nearfull lowered
# to 0.6 so that the warning has time to show, the other ratios at their
# defaults) with 4 MiB objects until it refuses them:
#  - the nearfull warning shows while writes still succeed;
#  - the writer then gets ENOSPC (at once, not a timeout) and the monitor
#    reports the full OSDs by name (HEALTH_ERR); no OSD stops;
#  - `strata bench objects write` stops at once with a clear ENOSPC message;
#  - an OSD killed (-9) on its full disk restarts and its PGs come back;
#  - deleting objects frees space: the full flags clear and writes resume;
#  - every acknowledged write reads back.
source "$(dirname "$0")/lib.sh"

SIZE=$((4 << 20))
# client_op_timeout_ms: without the fix, writes to a full cluster hang;
# the timeout makes such a run fail instead of waiting for ever.
cluster_up 3 --backend xfs --journal file --size-mb 320 --pg-num 8 \
  --set journal_size=32M --set client_op_timeout_ms=30000 --set mon_osd_nearfull_ratio=0.6

health_lines() { status_field '" | ".join(s["warnings"])'; }
osds_up() { status_field 's["osds"]["up"]'; }

# 1. Fill in short bursts (two objects, ~5% of a disk: the warning must not
#    be outrun by one burst), each of which must succeed, until the health
#    warns (the warning comes while writes still go through); then on until
#    the cluster refuses a write.
fill() { "$WRITER" write --conf "$CONF" --pool data --log "$T/acked" --prefix "fill$1" --size "$SIZE" "${@:2}"; }
bursts=0
until health_lines | grep -Eq "(nearfull|backfillfull) osd\(s\)"; do
  bursts=$((bursts + 1))
  [ "$bursts" -le 60 ] || { echo "FAIL: no nearfull warning after $bursts bursts"; exit 1; }
  fill "$bursts" --seconds 0.5 --max 2 >/dev/null 2>"$T/burst.err" ||
    { cat "$T/burst.err"; echo "FAIL: a write failed before any nearfull warning"; exit 1; }
done
echo "== after $(wc -l <"$T/acked") writes: $(health_lines)"
t0=$(date +%s)
if fill last --seconds 120 >"$T/writer.out" 2>"$T/writer.err"; then
  echo "FAIL: the writer ran for 120 s without ENOSPC"
  exit 1
fi
echo "== writer stopped after $(($(date +%s) - t0)) s:"
cat "$T/writer.err"
acked=$(wc -l <"$T/acked")
echo "== $acked objects of 4 MiB acknowledged"
grep -q "(-28)" "$T/writer.err" || { echo "FAIL: the writer did not get ENOSPC"; exit 1; }
[ "$acked" -gt 10 ] || { echo "FAIL: only $acked writes before ENOSPC"; exit 1; }
wait_for '"full" in s["fullness"] and s["health"] == "HEALTH_ERR"' 10
health_lines
[ "$(osds_up)" = 3 ] || { echo "FAIL: an OSD stopped on the full disk"; exit 1; }
# The writes stopped at the full ratio (0.95) by each OSD's own count, not
# when the map caught up: what lies between it and the failsafe ratio
# (0.97) stays free for full_try writes (an MDS's journal and directories,
# which the unlinks that free space need). Before, a burst ran on into it.
for d in "$C"/osd.*/; do
  pct=$(df --output=pcent "$d" | tail -n 1 | tr -dc '0-9')
  echo "   $(basename "$d"): ${pct}% used"
  [ "$pct" -le 96 ] || { echo "FAIL: data writes filled $(basename "$d") to ${pct}%, past the full ratio"; exit 1; }
done

# 2. The benchmark a new user runs stops at once, saying why.
t0=$(date +%s)
if "$STRATA" bench objects write --conf "$CONF" --pool data --size 4M --concurrency 16 \
  --seconds 30 --no-cleanup >"$T/bench.out" 2>"$T/bench.err"; then
  echo "FAIL: bench succeeded on a full cluster"
  exit 1
fi
cat "$T/bench.err"
grep -q "the cluster is full (ENOSPC)" "$T/bench.err" || { echo "FAIL: bench did not say ENOSPC"; exit 1; }
[ $(($(date +%s) - t0)) -lt 10 ] || { echo "FAIL: bench took $(($(date +%s) - t0)) s to give up"; exit 1; }

# 3. An OSD killed on its full disk comes back (journal replay, boot).
df -h "$C"/osd.*/ 2>/dev/null | sed 's/^/   /' || true
kill_osd 2
wait_for 's["osds"]["up"] == 2' 10
restart_dead
echo "== osd.2 restarted on its full disk"
wait_for "$all_clean" 30

# 4. Deletes work on a full cluster and free space; then writes resume.
head -n $((acked / 2)) "$T/acked" >"$T/deleted"
tail -n +$((acked / 2 + 1)) "$T/acked" >"$T/kept"
xargs "$STRATA" object rm --conf "$CONF" --pool data <"$T/deleted"
echo "== deleted $(wc -l <"$T/deleted") objects"
wait_for '"full" not in s["fullness"]' 20
health_lines
sleep 1  # the monitor's view first; give the OSDs a moment to apply that map epoch
# A bounded number of writes (a quarter of what was deleted): a timed burst
# on a fast disk would simply fill the cluster again.
"$WRITER" write --conf "$CONF" --pool data --log "$T/acked2" --prefix after --size "$SIZE" \
  --seconds 20 --max $(( $(wc -l <"$T/deleted") / 4 + 1 ))
[ "$(wc -l <"$T/acked2")" -gt 0 ] || { echo "FAIL: no write after the delete"; exit 1; }

# 5. Nothing acknowledged is lost.
"$WRITER" verify --conf "$CONF" --pool data --log "$T/kept" --size "$SIZE"
"$WRITER" verify --conf "$CONF" --pool data --log "$T/acked2" --size "$SIZE"
echo "PASS"
