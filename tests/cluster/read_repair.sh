#!/usr/bin/env bash
# Reads never return corrupt data, and scrub findings reach the operator
# (xfs OSDs, whose object data are files):
#  1. 19 bytes overwritten in place in the PRIMARY's copy of a 2 MiB and of
#     a 64 KiB object: `strata object get` returns the original bytes (the
#     primary repairs its copy from a replica and counts it).
#  2. The primary's data file of an object deleted under the running OSD,
#     the OSD restarted: get returns the good bytes and the file is back.
#  3. A replica's copy damaged: deep scrub marks the PG `inconsistent` and
#     health HEALTH_ERR naming the object (text and JSON); repair clears it.
#  4. A replica's file truncated: a light scrub finds it (sizes differ).
#  5. Every copy damaged alike: get answers EIO naming the PG, health names
#     the object.
source "$(dirname "$0")/lib.sh"

cluster_up 3 --backend xfs --journal file --size-gb 2

# make_object NAME SIZE: a file of random bytes starting with a marker
# unique to this run (to find the object's data files), stored as NAME.
marker() { echo "STRATA-RR-$1-$$"; }
make_object() {
  python3 - "$T/$1" "$(marker "$1")" "$2" <<'PY'
import os, sys
path, marker, size = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
open(path, "wb").write(marker + os.urandom(size - len(marker)))
PY
  "$STRATA" object put "$1" "$T/$1" --pool data --conf "$CONF" >/dev/null
}

# locate NAME: "PG OSD..." from `object stat` (the acting set, primary first).
locate() {
  "$STRATA" object stat "$1" --pool data --format json --conf "$CONF" |
    python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["pg"], *s["acting"])'
}

# data_file OSD MARKER: the object's data file in that OSD's store (the
# journal is applied to the files shortly after the ack: wait for it).
data_file() {
  local f
  for _ in $(seq 100); do
    f=$(grep -rlF --binary-files=text "$2" "$C/osd.$1/store/backend/data" 2>/dev/null | head -1 || true)
    [ -n "$f" ] && { echo "$f"; return 0; }
    sleep 0.1
  done
  echo "FAIL: no data file with $2 on osd.$1" >&2
  return 1
}

# corrupt FILE OFFSET: overwrites 19 bytes in place (the file keeps its size).
corrupt() {
  python3 - "$1" "$2" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(19)
    f.seek(int(sys.argv[2]))
    f.write(bytes(x ^ 0x5A for x in b))
    f.flush()
    os.fsync(f.fileno())
PY
}

get_matches() {
  rm -f "$T/$1.back"
  "$STRATA" object get "$1" "$T/$1.back" --pool data --conf "$CONF"
  cmp "$T/$1" "$T/$1.back"
}

pg_json() { "$STRATA" pg ls --format json --conf "$CONF"; }
read_repairs() {
  pg_json | python3 -c 'import json,sys; print(sum(p["read_repairs"] for p in json.load(sys.stdin)))'
}

# --- 1. the primary's copy overwritten in place ------------------------------
for spec in big:$((2 << 20)):1500000 small:$((64 << 10)):40000; do
  IFS=: read -r name size off <<<"$spec"
  make_object "$name" "$size"
  read -r _ primary _ <<<"$(locate "$name")"
  file=$(data_file "$primary" "$(marker "$name")")
  corrupt "$file" "$off"
  echo "== overwrote 19 bytes at $off of $name's copy on its primary osd.$primary ($file)"
  get_matches "$name"
  echo "== get of $name returned the original bytes"
  get_matches "$name"
  cmp "$(data_file "$primary" "$(marker "$name")")" "$T/$name"
  echo "== osd.$primary's file of $name holds the good bytes again"
done
# The counts reach the monitor with the primaries' next stats reports (a
# tick or two after the repair): wait for them rather than race them.
for _ in $(seq 1 50); do
  repairs=$(read_repairs)
  [ "$repairs" -lt 2 ] || break
  sleep 0.2
done
[ "$repairs" -ge 2 ] || { echo "FAIL: $repairs read repairs counted"; pg_json; exit 1; }
echo "== pg ls counts $repairs read repairs"

# --- 2. the primary's data file vanished ---------------------------------------
make_object gone $((256 << 10))
read -r _ primary _ <<<"$(locate gone)"
file=$(data_file "$primary" "$(marker gone)")
rm -f "$file"
kill_osd "$primary"
restart_dead
echo "== deleted $file under osd.$primary and restarted it"
get_matches gone
echo "== get of gone returned the good bytes"
cmp "$(data_file "$primary" "$(marker gone)")" "$T/gone"
echo "== osd.$primary's copy of gone is back"

# --- 3. deep scrub: inconsistent, HEALTH_ERR naming the object, repair ---------
read -r pg _ replica _ <<<"$(locate small)"
corrupt "$(data_file "$replica" "$(marker small)")" 1000
"$STRATA" pg scrub "$pg" --deep --conf "$CONF"
wait_for "s['health'] == 'HEALTH_ERR' and any(d['oid'] == 'small' and d['pgid'] == '$pg' and ('digest mismatch on osd.$replica' in d['reason'] or 'unreadable (EIO' in d['reason'] and 'on osd.$replica' in d['reason']) for d in s['damaged_objects'])" 20
"$STRATA" status --conf "$CONF" | tee "$T/status.txt"
grep -q "HEALTH_ERR" "$T/status.txt" && grep -q "object 'small'" "$T/status.txt" ||
  { echo "FAIL: status text does not name the damaged object"; exit 1; }
"$STRATA" pg ls --conf "$CONF" | grep -E "^$pg .*inconsistent" ||
  { echo "FAIL: pg $pg not inconsistent in pg ls"; exit 1; }
echo "== deep scrub: pg $pg inconsistent, HEALTH_ERR names 'small'"
"$STRATA" pg repair "$pg" --conf "$CONF"
wait_for "s['health'] == 'HEALTH_OK' and not s['damaged_objects']" 20
echo "== repair cleared it"

# --- 4. light scrub: a truncated replica file ------------------------------------
read -r pg _ _ replica <<<"$(locate big)"
file=$(data_file "$replica" "$(marker big)")
truncate -s $((1 << 20)) "$file"
"$STRATA" pg scrub "$pg" --conf "$CONF"
wait_for "s['health'] == 'HEALTH_ERR' and any(d['oid'] == 'big' and 'osd.$replica' in d['reason'] for d in s['damaged_objects'])" 20
echo "== light scrub found osd.$replica's truncated copy of big"
"$STRATA" pg repair "$pg" --conf "$CONF"
wait_for "s['health'] == 'HEALTH_OK'" 20
get_matches big

# --- 5. no good copy left: EIO with context, health names the object -----------
read -r pg acting_gone <<<"$(locate gone)"
for osd in $acting_gone; do corrupt "$(data_file "$osd" "$(marker gone)")" 5000; done
if "$STRATA" object get gone "$T/gone.back" --pool data --conf "$CONF" 2>"$T/get.err"; then
  echo "FAIL: get of an object with no good copy succeeded"; exit 1
fi
cat "$T/get.err"
grep -q "Input/output error" "$T/get.err" && grep -q "pg $pg" "$T/get.err" ||
  { echo "FAIL: the EIO does not say which PG"; exit 1; }
wait_for "s['health'] == 'HEALTH_ERR' and any(d['oid'] == 'gone' and d['reason'].startswith('read:') for d in s['damaged_objects'])" 20
echo "== every copy of gone damaged: EIO naming pg $pg, HEALTH_ERR names 'gone'"
# An object with no good copy stays unreadable until it is rewritten or
# removed; removing it clears the finding, and the copies left must agree.
"$STRATA" object rm gone --pool data --conf "$CONF"
wait_for "s['health'] == 'HEALTH_OK'" 20
replicas_agree
echo "PASS"
