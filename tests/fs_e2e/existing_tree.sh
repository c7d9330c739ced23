#!/usr/bin/env bash
# A tree this mount did not make (made before a remount) is changed as
# fast as a new one: the directories' names are learnt once (a lookup
# miss in a directory held alone reads its listing; names looked up or
# removed are known present or missing), so that creates, unlinks and
# setattrs in it are decided locally, not one round trip each. Checks:
#  - `tar x` over the tree after a remount (tar unlinks and recreates every
#    file) needs far fewer MDS round trips than files, all creates and
#    unlinks asynchronous, and the tree compares equal (`tar d`);
#  - `cp` over it (O_TRUNC opens of files this mount holds): truncated
#    locally, the bytes compare equal;
#  - `rm -rf` of it after another remount: the same;
#  - another mount that cached a name as missing sees it once this mount
#    creates it, and misses it again once this mount removes it;
#  - everything reads back after a remount; files moved across two of its
#    directories are where the move put them after another; `fs check` is
#    clean;
#  - files created and written at once cost no setattr of their times.
#
#   existing_tree.sh STRATA SCRATCH_DIR
set -euo pipefail

name=existing_tree
source "$(dirname "${BASH_SOURCE[0]}")/two_mount_cluster.sh"
rm -rf "$scratch/src"
mkdir -p "$scratch/src"
log=$scratch/mount.log
: >"$log"
source "$here/mount_metric.sh"
client=""
remount() {
  [ -n "$client" ] && "$mount_sh" umount "$strata" "$mnt"
  : >"$log"
  client=$("$mount_sh" mount "$strata" "$conf" "$mnt" "$log")
}
metric() { mount_metric "$client" "$log" "$1"; }
round_trips() { metric strata_fuse_mds_round_trips_total; }
by_kind() { metric "strata_fuse_mds_requests_by_kind_total{kind=\"$1\",mode=\"$2\"}"; }

# The tree: 6 directories of FILES/6 small files (inline) and a few past
# the inline limit (data objects), in two versions with different bytes.
files=${FS_E2E_FILES:-300}
per_dir=$((files / 6))
python3 - "$scratch/src" "$per_dir" <<'PY'
import os, sys
root, per = sys.argv[1], int(sys.argv[2])
for v in ("v1", "v2"):
    for d in range(6):
        p = os.path.join(root, v, "t", f"d{d}")
        os.makedirs(p, exist_ok=True)
        for i in range(per):
            size = 20000 if i % 10 == 0 else 300 + i
            with open(os.path.join(p, f"f{i}"), "wb") as f:
                f.write((f"{v} {d} {i} " * (size // 8 + 1)).encode()[:size])
PY
tar -C "$scratch/src/v1" -cf "$scratch/v1.tar" t
tar -C "$scratch/src/v2" -cf "$scratch/v2.tar" t
n=$((per_dir * 6))

remount
tar -C "$mnt" -xf "$scratch/v1.tar"
tar -C "$mnt" -df "$scratch/v1.tar" || fail "the first untar does not compare equal"

# 1. tar x over it, from a new session.
remount
rt0=$(round_trips)
tar -C "$mnt" -xf "$scratch/v2.tar"
rt=$(($(round_trips) - rt0))
creates=$(by_kind create async)
unlinks=$(by_kind unlink async)
prefetches=$(metric strata_fuse_listing_prefetches_total)
echo "existing_tree: tar x over $n files after a remount: $rt MDS round trips," \
  "$creates async creates, $unlinks async unlinks, $prefetches listings read"
[ "$rt" -le $((n / 5)) ] || fail "$rt round trips for $n files (a round trip per file is what this avoids)"
[ "$creates" -ge "$n" ] || fail "only $creates of $n creates were asynchronous"
[ "$unlinks" -ge "$n" ] || fail "only $unlinks of $n unlinks were asynchronous"
[ "$prefetches" -ge 6 ] || fail "only $prefetches of the 6 directories' listings were read"
tar -C "$mnt" -df "$scratch/v2.tar" || fail "tar x over the tree does not compare equal"

# 1b. Overwriting its files in place (cp: open with O_TRUNC, write): the
#    truncates of files this mount holds are done here, not at the MDS.
rt0=$(round_trips)
cp -r "$scratch/src/v1/t/." "$mnt/t/"
rt=$(($(round_trips) - rt0))
truncates=$(metric strata_fuse_local_truncates_total)
echo "existing_tree: cp over $n files: $rt MDS round trips, $truncates truncates done locally"
[ "$truncates" -ge "$n" ] || fail "only $truncates of $n truncates were done locally"
[ "$rt" -le $((n / 5)) ] || fail "$rt round trips to overwrite $n files"
diff -r "$scratch/src/v1/t" "$mnt/t" >/dev/null || fail "cp over the tree does not read back what was copied"
tar -C "$mnt" -xf "$scratch/v2.tar"

# 2. Names cached as missing by another mount come and go with this one's
#    changes (the revoke makes its kernel forget negative entries too).
other_client=$("$mount_sh" mount "$strata" "$conf" "$other" "$scratch/other.log")
for i in 1 2 3; do
  [ ! -e "$other/t/d1/new$i" ] || fail "t/d1/new$i exists before it was made"
done
[ ! -e "$other/t/d1/new2" ] || fail "t/d1/new2 appeared on its own"
echo "made here" >"$mnt/t/d1/new2"
[ "$(cat "$other/t/d1/new2" 2>/dev/null)" = "made here" ] ||
  fail "the other mount still misses t/d1/new2 after this one made it"
rm "$mnt/t/d1/new2"
[ ! -e "$other/t/d1/new2" ] || fail "the other mount still sees t/d1/new2 after this one removed it"
[ ! -e "$other/t/d1/new1" ] || fail "t/d1/new1 appeared on its own"
"$mount_sh" umount "$strata" "$other"
echo "existing_tree: another mount's missing names follow this one's create and unlink"

# 3. rm -rf of it, from a new session.
remount
rt0=$(round_trips)
rm -rf "$mnt/t"
rt=$(($(round_trips) - rt0))
unlinks=$(by_kind unlink async)
echo "existing_tree: rm -rf of $n files after a remount: $rt MDS round trips, $unlinks async unlinks"
[ "$rt" -le $((n / 5)) ] || fail "$rt round trips to remove $n files"
[ "$unlinks" -ge "$n" ] || fail "only $unlinks of $n unlinks were asynchronous"
[ ! -e "$mnt/t" ] || fail "t is still there"

# 4. Once more from the start, and read back after a remount.
tar -C "$mnt" -xf "$scratch/v1.tar"
remount
tar -C "$mnt" -df "$scratch/v1.tar" || fail "the tree does not read back after a remount"

# 5. Files moved between two directories this mount holds (one onto a new
#    name, one over another file) are decided here, and the MDS agrees.
renames0=$(by_kind rename async)
mv "$mnt/t/d0/f1" "$mnt/t/d1/moved"
mv "$mnt/t/d0/f2" "$mnt/t/d1/f3"
renames=$(($(by_kind rename async) - renames0))
[ "$renames" -eq 2 ] || fail "$renames of 2 renames across directories were asynchronous"
remount
cmp -s "$mnt/t/d1/moved" "$scratch/src/v1/t/d0/f1" || fail "t/d1/moved is not what t/d0/f1 was"
cmp -s "$mnt/t/d1/f3" "$scratch/src/v1/t/d0/f2" || fail "t/d1/f3 is not what t/d0/f2 was"
[ ! -e "$mnt/t/d0/f1" ] && [ ! -e "$mnt/t/d0/f2" ] || fail "a moved file is still in t/d0"
echo "existing_tree: 2 files moved across directories asynchronously, as the MDS has them"

# 6. A file created and written at once (tar's, rsync's) leaves the kernel
#    no times to send in a setattr of their own: the create is stamped from
#    the clock the kernel stamps writes with (asynchronous creates since
#    session 24, synchronous ones, async_metadata off, since session 25).
#    Stamped from a finer clock, every file cost one more setattr.
setattrs() { metric 'strata_fuse_requests_total{op="setattr"}'; }
write_new_files() { # DIR
  python3 - "$1" <<'PY'
import os, sys
os.makedirs(sys.argv[1])
for i in range(100):
    fd = os.open(os.path.join(sys.argv[1], f"n{i}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"written with its create\n")
    os.close(fd)
PY
}
for async in true false; do
  "$mount_sh" umount "$strata" "$mnt"
  : >"$log"
  client=$("$mount_sh" mount "$strata" "$conf" "$mnt" "$log" --set async_metadata=$async)
  s0=$(setattrs)
  write_new_files "$mnt/new-$async"
  sent=$(($(setattrs) - s0))
  echo "existing_tree: 100 files created and written (async_metadata=$async): $sent setattrs"
  [ "$sent" -lt 50 ] || fail "$sent setattrs for 100 files created and written at once (async_metadata=$async)"
done
"$mount_sh" umount "$strata" "$mnt"
client=""
"$here/fs_check_clean.sh" "$strata" "$conf" default 60 >/dev/null
echo "existing_tree: ok, fs check clean"
