#!/usr/bin/env bash
# End-to-end POSIX suite: real programs (tar, rsync, git, cp, sqlite, fio)
# and syscall-level checks (posix_checks.py) on any mounted directory: a
# Strata mount, a passthrough_ll mount, a plain local directory.
#
#   suite.sh MOUNTDIR [CASE...]
#
# Works in MOUNTDIR/fs_e2e.<pid> (removed afterwards unless a case failed
# and FS_E2E_KEEP=1), with local inputs in a temporary directory. Prints
# "ok CASE (seconds)" or "FAIL CASE" (with the case's output) per case; exits
# 1 if any failed. Cases: tar rsync git cp_xattr sqlite fio posix (posix_checks.py,
# one line per check) root (files made in MOUNTDIR itself). Needs tar, rsync, git, attr
# (setfattr/getfattr), sqlite3's python module, fio.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3 # Debian's, not whatever python3 is first on PATH
[ -x "$py" ] || py=python3

[ $# -ge 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
mnt=$1
shift
[ -d "$mnt" ] || { echo "suite.sh: $mnt is not a directory" >&2; exit 2; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(tar rsync git cp_xattr sqlite fio posix root)

work="$mnt/fs_e2e.$$"
mkdir "$work" || exit 2
input=$(mktemp -d "${TMPDIR:-/tmp}/fs_e2e_input.XXXXXX")
failed=0
cleanup() {
  if [ "$failed" -eq 0 ] || [ "${FS_E2E_KEEP:-0}" != 1 ]; then
    rm -rf "$work"
  else
    echo "suite.sh: kept $work" >&2
  fi
  rm -rf "$input"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A tree of small files (and its tarball) made once, on local disk:
# FS_E2E_FILES of them (2000 by hand; ctest asks for fewer, for CI's time).
"$py" "$here/make_tree.py" "$input/tree" "${FS_E2E_FILES:-2000}" || exit 2
tar -C "$input/tree" -cf "$input/tree.tar" . || exit 2

# ---- cases: each runs in a subshell with -e, in its own directory ----

case_tar() {
  mkdir x
  tar -C x -xf "$input/tree.tar"
  tar -C x -df "$input/tree.tar"
  # And back out of the mount: the same listing. Which name of a hard-linked
  # file is stored whole and which as "link to" follows the readdir order
  # (unspecified), so links count as files and sizes (0 for a link; tar -d
  # compared them) do not count.
  tar -C x -cf "$input/back.tar" .
  [ "$(tar_listing "$input/tree.tar")" = "$(tar_listing "$input/back.tar")" ] || {
    echo "tar listings differ (wanted, got):"
    diff <(tar_listing "$input/tree.tar") <(tar_listing "$input/back.tar") | head -20
    return 1
  }
}

tar_listing() {
  tar -tvf "$1" | awk '{ sub(/^h/, "-", $1); $3 = ""; sub(/ link to .*/, ""); print }' | LC_ALL=C sort
}

case_rsync() {
  rsync -a --checksum --hard-links "$input/tree/" copy/
  # A second pass finds nothing to do, and the trees are the same.
  local changes
  changes=$(rsync -a --checksum --hard-links --dry-run -i "$input/tree/" copy/)
  [ -z "$changes" ] || { echo "rsync would still change: $changes"; return 1; }
  diff -r --no-dereference "$input/tree" copy
}

case_git() {
  local repo="$input/repo"
  "$py" "$here/make_tree.py" "$repo" 400
  rm -f "$repo/dangling"
  local g=(git -c user.name=fs_e2e -c user.email=fs_e2e@localhost -c gc.auto=0)
  git init -q "$repo"
  "${g[@]}" -C "$repo" add -A
  "${g[@]}" -C "$repo" commit -q -m first
  for i in 1 2 3; do
    find "$repo" -name "f${i}[0-9]_*.c" -exec sh -c 'echo change >>"$1"' sh {} \;
    echo "round $i" >>"$repo/round.txt"
    "${g[@]}" -C "$repo" add -A
    "${g[@]}" -C "$repo" commit -q -m "round $i"
  done
  # Through the pack protocol (file://): a pack and its index written to
  # the mount, then checked out.
  git clone -q "file://$repo" clone
  git -C clone fsck --full --strict
  [ -z "$(git -C clone status --porcelain)" ]
  [ "$(git -C clone rev-parse HEAD)" = "$(git -C "$repo" rev-parse HEAD)" ]
  # Work in the clone: commit, repack (rename-heavy), fsck again.
  echo change >>clone/round.txt
  "${g[@]}" -C clone commit -q -a -m "in the mount"
  "${g[@]}" -C clone gc -q --prune=now
  git -C clone fsck --full --strict
}

# Every path under $1 with its user.* xattrs, in name order: neither the
# readdir order nor the listxattr order is specified, so neither counts.
xattrs_of() {
  (cd "$1" && find . | LC_ALL=C sort | while IFS= read -r f; do
    echo "# file: $f"
    getfattr -h -d -m '^user\.' -e hex -- "$f" 2>/dev/null | grep -v '^#' | grep . | LC_ALL=C sort || true
  done)
}

case_cp_xattr() {
  local src="$input/xsrc"
  mkdir -p "$src/sub"
  echo one >"$src/a"
  echo two >"$src/sub/b"
  chmod 640 "$src/a"
  setfattr -n user.comment -v "hello world" "$src/a"
  setfattr -n user.binary -v 0x00ff10 "$src/a"
  setfattr -n user.dir -v "on a directory" "$src/sub"
  setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' 'x')" "$src/sub/b"
  cp -a "$src" copy
  local want got
  want=$(xattrs_of "$src")
  got=$(xattrs_of copy || true)
  [ "$want" = "$got" ] || {
    echo "user.* xattrs differ after cp -a (wanted, got):"
    diff <(echo "$want") <(echo "$got") | cut -c1-100
    return 1
  }
  [ "$(stat -c %a copy/a)" = 640 ]
  # Set, replace and remove on the mount itself.
  setfattr -n user.comment -v replaced copy/a
  [ "$(getfattr --only-values -n user.comment copy/a)" = replaced ]
  setfattr -x user.comment copy/a
  if getfattr -n user.comment copy/a 2>/dev/null; then return 1; fi
  getfattr -n user.binary -e hex copy/a | grep -qx 'user.binary=0x00ff10'
}

case_sqlite() {
  "$py" - "$PWD/test.db" <<'EOF'
import os, sqlite3, sys
db = sys.argv[1]

def writer(tag, n):
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    con.execute("PRAGMA synchronous=FULL")
    for i in range(n):
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t(tag, i, payload) VALUES (?, ?, ?)", (tag, i, os.urandom(200)))
        if i % 10 == 0:
            con.execute("UPDATE counter SET n = n + 10")
        con.execute("COMMIT")
    con.close()

con = sqlite3.connect(db, isolation_level=None)
con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, i INT, payload BLOB)")
con.execute("CREATE TABLE counter(n INT)")
con.execute("INSERT INTO counter VALUES (0)")
con.close()
# Two processes committing at once: sqlite serializes them with fcntl
# locks on the database and fsyncs every commit (rollback journal).
pids = []
for tag in ("a", "b"):
    pid = os.fork()
    if pid == 0:
        try:
            writer(tag, 60)
            os._exit(0)
        except BaseException as e:
            print(e, file=sys.stderr)
            os._exit(1)
    pids.append(pid)
for pid in pids:
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, "a writer failed"
con = sqlite3.connect(db)
assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 120
assert con.execute("SELECT n FROM counter").fetchone()[0] == 120
# WAL mode as well (shared memory file, checkpoints).
con.execute("PRAGMA journal_mode=WAL")
for i in range(50):
    with con:
        con.execute("INSERT INTO t(tag, i) VALUES ('wal', ?)", (i,))
con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 170
assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
con.close()
EOF
}

case_fio() {
  fio --name=verify --directory="$PWD" --size=16m --bs=4k --rw=randwrite --ioengine=psync \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --fsync=64 --numjobs=2 \
    --output-format=terse >fio.out
  fio --name=mixed --directory="$PWD" --size=8m --bsrange=512-128k --rw=randrw \
    --ioengine=psync --verify=crc32c --verify_fatal=1 --end_fsync=1 \
    --output-format=terse >>fio.out
  rm -f verify.* mixed.*
}

case_posix() {
  "$py" "$here/posix_checks.py" "$PWD"
}

# New files and directories right in the mount's root, after the root has
# seen creates and removals (a client may then make them without asking
# its server; they must still get a place for their data), and a tree
# made there and removed again.
case_root() {
  local top="$mnt/fs_e2e_root.$$"
  rm -rf "$top" "$top.f"
  mkdir "$top.scratch"
  for i in 1 2 3; do echo "$i" >"$top.scratch/$i"; done
  rm -rf "$top.scratch"
  ls -a "$mnt" >/dev/null
  head -c 3000 /dev/urandom >"$input/small"
  head -c 300000 /dev/urandom >"$input/large"
  cp "$input/small" "$top.f"
  mkdir -p "$top/a/b"
  cp "$input/small" "$input/large" "$top/a/b/"
  touch -m -d 2020-01-02 "$top/a/b/large"
  cmp "$input/small" "$top.f"
  cmp "$input/small" "$top/a/b/small"
  cmp "$input/large" "$top/a/b/large"
  [ "$(stat -c %Y "$top/a/b/large")" = "$(date -d 2020-01-02 +%s)" ]
  rm -rf "$top" "$top.f"
}

for c in "${cases[@]}"; do
  if ! declare -F "case_$c" >/dev/null; then
    echo "suite.sh: no case '$c'" >&2
    exit 2
  fi
  mkdir "$work/$c"
  start=$(date +%s%N)
  out=$(
    cd "$work/$c" || exit 1
    set -e
    "case_$c" 2>&1
  )
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  secs=$(printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10)))
  if [ "$c" = posix ]; then
    # One line per check; the failures' tracebacks after them.
    grep -E '^(ok|skip|FAIL) ' <<<"$out" | sed 's/^/  posix: /'
  fi
  if [ $rc -eq 0 ]; then
    echo "ok $c ($secs s)"
  else
    failed=$((failed + 1))
    echo "FAIL $c ($secs s)"
    tail -n 40 <<<"$out" | sed 's/^/    | /'
  fi
done

if [ "$failed" -gt 0 ]; then
  echo "suite.sh: $failed case(s) failed on $mnt"
  exit 1
fi
echo "suite.sh: all ${#cases[@]} cases passed on $mnt"
