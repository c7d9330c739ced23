#!/usr/bin/env bash
# Image snapshots and clones from the command line, and an image's bytes in
# and out: export/import round trip; snap create while `nbd serve` writes
# (taken through the server, crash consistent); the snapshot reads the old
# bytes while the head has the new; rollback; a clone reads through to its
# parent's snapshot and its writes never reach the parent; a clone's
# snapshot and a clone of it read through both levels; a clone in another
# pool; rm refuses an image with snapshots and a snapshot with clones.
#
#   snapshots.sh STRATA SCRATCH
set -euo pipefail
source "$(dirname "$0")/lib.sh" "$@"
e2e_up

step "import a file, export it back, compare"
head -c 6M /dev/urandom >"$scratch/a.bin"
truncate -s 16M "$scratch/a.bin"
st image import "$scratch/a.bin" rbd/vol --object-size 1M
st image export rbd/vol "$scratch/a.out"
cmp "$scratch/a.bin" "$scratch/a.out" || e2e_fail "export after import differs"
used=$(st image du rbd/vol --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["used"])')
[ "$used" -le $((7 << 20)) ] || e2e_fail "import wrote the holes: $used bytes used"

step "snap create while nbd serve holds the image; the snapshot keeps the old bytes"
sock=$scratch/vol.sock
uri=$(e2e_uri vol "$sock")
e2e_serve vol "$sock"
st image snap create rbd/vol@s1
qemu-io -f raw -c 'write -P 0x77 0 2M' -c 'write -P 0x78 10M 1M' -c flush "$uri" >/dev/null
st image export rbd/vol@s1 "$scratch/s1.out"
cmp "$scratch/a.bin" "$scratch/s1.out" || e2e_fail "snapshot s1 does not hold the old bytes"
st image export rbd/vol "$scratch/head.out"
cmp -s "$scratch/a.bin" "$scratch/head.out" && e2e_fail "the head did not change"
st image snap ls rbd/vol | grep -q " s1 " || e2e_fail "snap ls does not list s1"

step "a snapshot taken during a sequential writer is crash consistent (a prefix of its writes)"
cmds=()
for i in $(seq 0 255); do cmds+=(-c "write -P $((i % 250 + 1)) $((i * 64))k 64k"); done
qemu-io -f raw "${cmds[@]}" "$uri" >/dev/null &
writer=$!
sleep 0.3
st image snap create rbd/vol@during
wait "$writer" || e2e_fail "the writer failed while the snapshot was taken"
st image export rbd/vol@during "$scratch/during.out"
python3 - "$scratch/during.out" "$scratch/head.out" <<'PY' || e2e_fail "the snapshot is not a prefix of the writes"
import sys
snap, old = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
k = 64 << 10
done = [snap[i * k:(i + 1) * k] == bytes([i % 250 + 1]) * k for i in range(256)]
for i in range(256):
    if not done[i]:
        assert snap[i * k:(i + 1) * k] == old[i * k:(i + 1) * k], f"block {i}: neither old nor new"
n = done.index(False) if False in done else 256
assert all(done[:n]) and not any(done[n:]), f"not a prefix: {done}"
print(f"   the snapshot holds the first {n} of 256 writes")
PY
st image snap rm rbd/vol@during

step "rm refuses an image with snapshots"
st nbd stop --socket "$sock"
st image rm rbd/vol 2>/dev/null && e2e_fail "rm removed an image with snapshots"

step "clone reads through; its writes stay its own"
st image clone rbd/vol@s1 rbd/child
st image export rbd/child "$scratch/child.out"
cmp "$scratch/a.bin" "$scratch/child.out" || e2e_fail "the clone does not read its parent's snapshot"
csock=$scratch/child.sock
e2e_serve child "$csock"
qemu-io -f raw -c 'write -P 0x99 5M 1M' -c flush "$(e2e_uri child "$csock")" >/dev/null
st nbd stop --socket "$csock"
st image export rbd/vol@s1 "$scratch/s1.again"
cmp "$scratch/a.bin" "$scratch/s1.again" || e2e_fail "a clone's write reached its parent"
st image snap rm rbd/vol@s1 2>/dev/null && e2e_fail "snap rm removed a snapshot with a clone"
st image flatten rbd/child
st image info rbd/child | grep -q "parent:" && e2e_fail "flatten left the parent link"

step "rollback: the head is the snapshot again"
st image snap rollback rbd/vol@s1
st image export rbd/vol "$scratch/rolled.out"
cmp "$scratch/a.bin" "$scratch/rolled.out" || e2e_fail "rollback did not restore the snapshot"

step "a clone's snapshot, and a clone of it reading through both levels"
st image clone rbd/vol@s1 rbd/c1
c1sock=$scratch/c1.sock
e2e_serve c1 "$c1sock"
qemu-io -f raw -c 'write -P 0x55 1M 64k' -c flush "$(e2e_uri c1 "$c1sock")" >/dev/null
st nbd stop --socket "$c1sock"
st image snap create rbd/c1@cs
st image clone rbd/c1@cs rbd/c2
st image export rbd/c1@cs "$scratch/cs.out"
st image export rbd/c2 "$scratch/c2.out"
cmp "$scratch/cs.out" "$scratch/c2.out" || e2e_fail "a clone of a clone does not read its parent's snapshot"
cmp -s "$scratch/a.bin" "$scratch/c2.out" && e2e_fail "the clone's own write is missing from its snapshot"
python3 - "$scratch/a.bin" "$scratch/c2.out" <<'PY' || e2e_fail "a clone of a clone: wrong bytes"
import sys
a, c = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
m = 1 << 20
assert c[m:m + (64 << 10)] == b"\x55" * (64 << 10), "the middle level's write"
assert c[:m] == a[:m] and c[m + (64 << 10):] == a[m + (64 << 10):], "the bottom level's bytes"
PY
st image rm rbd/c2
st image snap rm rbd/c1@cs
st image rm rbd/c1

step "a clone in another pool reads through to its parent; flatten reaches back"
st pool create other --size 2 --min-size 1 --pg-num 8 >/dev/null
st image clone rbd/vol@s1 other/x
st image export other/x "$scratch/x.out"
cmp "$scratch/a.bin" "$scratch/x.out" || e2e_fail "a clone in another pool does not read its parent"
st image snap rm rbd/vol@s1 2>/dev/null && e2e_fail "snap rm removed a snapshot with a clone in another pool"
st image flatten other/x
st image rm other/x

step "snap rm, rm"
st image snap rm rbd/vol@s1
st image rm rbd/vol
st image rm rbd/child
[ -z "$(st image ls rbd)" ] || e2e_fail "images left: $(st image ls rbd)"
echo "PASS"
