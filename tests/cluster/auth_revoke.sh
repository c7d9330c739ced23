#!/usr/bin/env bash
# `strata auth rm` cuts off a client that is already connected: once the
# OSD has applied the auth version that removes the key, the client's next
# write on its existing session is refused with EACCES and never executed
# (the object keeps its earlier content), and the monitor and OSD log that
# they closed the entity's sessions.
source "$(dirname "$0")/lib.sh"

# One OSD: `strata up` makes pool "data" with size 1.
cluster_up 1 --backend kv --journal file --pg-num 8
"$STRATA" auth add client.backup --conf "$CONF" >"$T/backup.keyring"

"$WRITER" probe --conf "$CONF" --pool data --object victim --name client.backup \
  --keyring "$T/backup.keyring" --go "$T/go" >"$T/probe.out" 2>"$T/probe.err" &
probe=$!
for _ in $(seq 300); do grep -q '^ready$' "$T/probe.out" && break; sleep 0.1; done
grep -q '^ready$' "$T/probe.out" || { echo "FAIL: the probe client never wrote 'before'"; cat "$T/probe.err"; exit 1; }
echo "== client.backup connected and wrote 'before'"

"$STRATA" auth rm client.backup --conf "$CONF"
# The OSD applies the new auth version (pushed by the monitor) and says so.
applied=no
for _ in $(seq 100); do
  if grep -q "client.backup's key was removed in auth version" "$C/osd.0.log"; then applied=yes; break; fi
  sleep 0.1
done
echo "== osd.0 applied the removal: $applied"
touch "$T/go"
wait "$probe"
cat "$T/probe.out"

rc=$(awk '$1 == "rc" {print $2}' "$T/probe.out")
[ "$rc" = "-13" ] || { echo "FAIL: the write after the revocation returned '$rc', expected -13 (EACCES)"; exit 1; }
got=$("$STRATA" object get victim - --pool data --conf "$CONF")
[ "$got" = "before" ] || { echo "FAIL: victim holds '$got': the write after the revocation was executed"; exit 1; }
[ "$applied" = yes ] || { echo "FAIL: osd.0 never logged closing client.backup's sessions"; exit 1; }
grep -q "client.backup's key was removed in auth version .*: closed [1-9]" "$C/mon.log" ||
  { echo "FAIL: the monitor did not close client.backup's session"; exit 1; }
echo "PASS"
