#!/usr/bin/env bash
# `strata image map` / `unmap` choosing between the kernel NBD path and the
# FUSE file: the usage errors, which need no cluster (they come before any
# connection).
#
#   map_cli_test.sh STRATA
set -uo pipefail
strata=$1
# An empty config: enough for the commands to reach their own checks.
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect STATUS PATTERN ARGS...: strata ARGS exits STATUS, stderr matches PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 2
  local err rc
  err=$("$strata" "$@" --conf "$conf" 2>&1 >/dev/null)
  rc=$?
  [ "$rc" = "$want" ] || fail "strata $* exited $rc, not $want: $err"
  grep -q -- "$pattern" <<<"$err" || fail "strata $*: '$pattern' not in: $err"
  echo "ok: strata $* -> $rc ($pattern)"
}

if ! ls /dev/nbd* >/dev/null 2>&1; then
  expect 2 "no nbd driver (no /dev/nbd\*): give --at DIR" image map rbd/disk
fi
expect 2 "give --at DIR or --device, not both" image map rbd/disk --at /tmp --device auto
expect 2 "--file-name goes with --at DIR" image map rbd/disk --file-name x
expect 2 "not an nbd device" image map rbd/disk --device /dev/sda
expect 1 "no \`strata image map\` serves /dev/nbd97" image unmap /dev/nbd97
"$strata" image map --help | grep -q -- "--device /dev/nbdN|auto" || fail "map --help does not show --device"
"$strata" image unmap --help | grep -q "/dev/nbdN|DIR" || fail "unmap --help does not show /dev/nbdN"
echo PASS
