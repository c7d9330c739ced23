#!/usr/bin/env bash
# Bytes flipped on disk behind an OSD's back (xfs backend: the object's data
# file on one replica's file system) are found by deep scrub, naming that
# OSD, and `strata pg repair` restores the copy from the good replicas.
source "$(dirname "$0")/lib.sh"

cluster_up 3 --backend xfs --journal file --size-gb 2
marker="STRATA-SCRUB-MARKER-$$-$RANDOM"
python3 - "$T/victim" "$marker" <<'PY'
import random, sys
path, marker = sys.argv[1], sys.argv[2].encode()
random.seed(7)
body = marker + bytes(random.getrandbits(8) for _ in range(64 * 1024 - len(marker)))
open(path, "wb").write(body)
PY
"$STRATA" object put victim "$T/victim" --pool data --conf "$CONF"
pg=$("$STRATA" object stat victim --pool data --format json --conf "$CONF" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["pg"])')
echo "== victim is in PG $pg"

# The data reaches the object files when the journal is applied; wait for
# all three copies.
for _ in $(seq 50); do
  mapfile -t copies < <(grep -rlF --binary-files=text "$marker" "$C"/osd.*/store/backend/data 2>/dev/null || true)
  [ "${#copies[@]}" -eq 3 ] && break
  sleep 0.2
done
[ "${#copies[@]}" -eq 3 ] || { echo "FAIL: found ${#copies[@]} on-disk copies: ${copies[*]}"; exit 1; }
victim_file=${copies[1]}
bad_osd=$(echo "$victim_file" | sed -E 's|.*/osd\.([0-9]+)/store/.*|\1|')
python3 - "$victim_file" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096)
    b = f.read(16)
    f.seek(4096)
    f.write(bytes(x ^ 0xFF for x in b))
    f.flush()
    os.fsync(f.fileno())
PY
echo "== flipped 16 bytes of osd.$bad_osd's copy ($victim_file)"

scrub_json() { "$STRATA" pg "$1" "$pg" "${@:2}" --format json --conf "$CONF"; }
scrub_json scrub --deep >"$T/scrub1.json"
cat "$T/scrub1.json"
python3 - "$T/scrub1.json" "$bad_osd" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [i for i in r["inconsistent"] if i["oid"] == "victim"]
assert len(r["inconsistent"]) == 1 and bad, f"expected exactly the victim to be inconsistent: {r}"
assert int(sys.argv[2]) in bad[0]["bad_osds"], f"osd.{sys.argv[2]} not named: {bad[0]}"
PY
echo "== deep scrub found the damaged copy on osd.$bad_osd"

scrub_json repair >"$T/repair.json"
cat "$T/repair.json"
scrub_json scrub --deep >"$T/scrub2.json"
python3 - "$T/scrub2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["inconsistent"], f"still inconsistent after repair: {r}"
PY
"$STRATA" object get victim "$T/victim.back" --pool data --conf "$CONF"
cmp "$T/victim" "$T/victim.back"
echo "== repaired; a second deep scrub is clean and the object reads back intact"
replicas_agree
echo "PASS"
