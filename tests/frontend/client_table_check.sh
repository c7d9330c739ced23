#!/usr/bin/env bash
# The client routine table keeps up with the client API:
#   client_table_check.sh SDK_INCLUDE_DIR FROZEN_LIST
# fails when a call of strata/client.h has no routine in strata_client_api
# (strata/client_api.h) or no strata_* name in strata/frontend_client.h,
# when the table names a routine client.h does not declare, or when the
# table no longer starts with the frozen 1.3 routines in their order.
set -euo pipefail
inc=$1 frozen=$2

# "STRATA_CLIENT_API <type> strata_NAME(" -> NAME, in header order.
calls=$(sed -n 's/^STRATA_CLIENT_API .*[ *]strata_\([a-z0-9_]*\)(.*/\1/p' "$inc/strata/client.h")
# "  <type> (*NAME)(...)" inside the struct -> NAME, in table order.
table=$(sed -n '/^typedef struct strata_client_api {/,/^} strata_client_api;/p' \
  "$inc/strata/client_api.h" | sed -n 's/.*(\*\([a-z0-9_]*\))(.*/\1/p')
# "#define strata_NAME strata_api->NAME" -> NAME.
mapped=$(sed -n 's/^#define strata_\([a-z0-9_]*\) strata_api->\([a-z0-9_]*\)$/\1 \2/p' \
  "$inc/strata/frontend_client.h")

status=0
n_calls=$(wc -l <<<"$calls")
[[ $n_calls -ge 100 ]] || { echo "found only $n_calls calls in client.h: the pattern is broken" >&2; exit 1; }
# Set differences in one pass each (a loop of greps is slow on a busy machine).
while read -r c; do
  [[ -n $c ]] && { echo "client.h declares strata_$c but strata_client_api has no '$c' routine" >&2; status=1; }
done < <(comm -23 <(sort <<<"$calls") <(sort <<<"$table"))
while read -r c; do
  [[ -n $c ]] && { echo "strata/frontend_client.h does not map strata_$c onto the table" >&2; status=1; }
done < <(comm -23 <(sort <<<"$calls") <(awk '$1 == $2 {print $1}' <<<"$mapped" | sort))
while read -r f; do
  [[ -n $f ]] && { echo "strata_client_api has '$f', which client.h does not declare" >&2; status=1; }
done < <(comm -13 <(sort <<<"$calls") <(sort <<<"$table"))
dups=$(sort <<<"$table" | uniq -d)
[[ -z $dups ]] || { echo "strata_client_api names a routine twice: $dups" >&2; status=1; }
# Append-only: the table begins with the frozen list, in its order.
expected=$(grep -v '^#' "$frozen")
n=$(wc -l <<<"$expected")
if [[ "$(head -n "$n" <<<"$table")" != "$expected" ]]; then
  echo "strata_client_api no longer starts with the 1.3 routines in their order ($frozen):" >&2
  diff <(echo "$expected") <(head -n "$n" <<<"$table") >&2 || true
  status=1
fi
[[ $status -eq 0 ]] && echo "$n_calls calls of client.h, all in the table and mapped; 1.3 order kept"
exit $status
