#!/usr/bin/env bash
# Measures the placement quality goals of issue 3 with `strata placement`
# and prints every figure: balance, movement vs optimal (straw2 alone and
# with the balancer), failure domains, mappings/s, balancer exceptions.
#
# Usage: bench/placement/quality.sh [TOOL] [WORKDIR]
#   TOOL: a command that behaves like `strata placement`, e.g.
#         "build/bin/strata placement" (default: `strata placement` of
#         build/ or build-placement/, else their strata-placement-dev).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=${1:-}
if [ -z "$tool" ]; then
  for b in "$root/build" "$root/build-placement"; do
    if [ -x "$b/bin/strata" ] && "$b/bin/strata" placement --help > /dev/null 2>&1; then
      tool="$b/bin/strata placement"; break
    fi
    if [ -x "$b/bin/strata-placement-dev" ]; then tool="$b/bin/strata-placement-dev"; break; fi
  done
fi
[ -n "$tool" ] || { echo "build strata-placement-dev first" >&2; exit 1; }
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
P() { $tool "$@"; }

# --- map variants, made by editing the text form as an operator would ---
# add_device MAP HOST NEWMAP: one more device of weight 1 in HOST.
add_device() {
  local n; n=$(grep -c '^device ' "$1")
  sed -e "/^device $((n - 1)) /a device $n osd.$n weight 1.000" \
      -e "/^host $2 id /a\\  osd.$n" "$1" > "$3"
}
# add_host MAP NAME DEVICES NEWMAP: a new host with DEVICES devices of weight 1.
add_host() {
  local n; n=$(grep -c '^device ' "$1")
  { sed -e "/^root default id /a\\  $2" "$1"
    for ((i = 0; i < $3; i++)); do echo "device $((n + i)) osd.$((n + i)) weight 1.000"; done
    echo "host $2 {"
    for ((i = 0; i < $3; i++)); do echo "  osd.$((n + i))"; done
    echo "}"; } > "$4"
}
# remove_host MAP HOST NEWMAP: take HOST out of the root.
remove_host() { sed -e "/^  $2\$/d" "$1" > "$3"; }

P build --hosts 3 --devices 4 -o m3x4.txt
P build --hosts 10 --devices 10 -o m10x10.txt
P build --hosts 10 --devices 10 --weights 1,2,4 -o m10x10-mixed.txt
add_device m3x4.txt host0 m3x4+dev.txt
add_host m3x4.txt host3 4 m3x4+host.txt
remove_host m10x10.txt host9 m10x10-host.txt
add_device m10x10.txt host0 m10x10+dev.txt
add_host m10x10.txt host10 10 m10x10+host.txt
remove_host m3x4+host.txt host3 m3x4+host-host.txt

field() { grep "$1" | sed -e "s|.*$1 *||"; }

echo "== balance: 100,000 inputs, 3 replicas (largest device vs expected)"
for plugin in crush rendezvous; do
  for m in m3x4 m10x10 m10x10-mixed; do
    out=$(P test $m.txt --plugin $plugin --no-devices --bench-seconds 1)
    printf '%-11s %-13s over %-9s under %-9s domain breaks %-3s short %-3s %s\n' "$plugin" "$m" \
      "$(echo "$out" | field 'most over-full device:' | cut -d' ' -f1)" \
      "$(echo "$out" | field 'most under-full device:' | cut -d' ' -f1)" \
      "$(echo "$out" | field 'failure-domain breaks:')" \
      "$(echo "$out" | field 'short results:')" \
      "$(echo "$out" | grep 'mappings/s' | sed -e 's/ *mappings\/s: */mappings\/s /')"
  done
done

echo "== movement, plugin alone: 100,000 inputs, 3 replicas"
for plugin in crush rendezvous; do
  for pair in "m3x4 m3x4+dev add-device" "m3x4 m3x4+host add-host" \
              "m3x4+host m3x4+host-host remove-host" \
              "m10x10 m10x10+dev add-device" "m10x10 m10x10+host add-host" \
              "m10x10 m10x10-host remove-host"; do
    set -- $pair
    out=$(P diff $1.txt $2.txt --plugin $plugin)
    printf '%-11s %-10s -> %-16s %-12s moved %-9s optimal %-9s ratio %s (inputs changed %s)\n' \
      "$plugin" "$1" "$2" "$3" \
      "$(echo "$out" | field 'replicas moved:' | sed -e 's/.*(\(.*\))/\1/')" \
      "$(echo "$out" | grep '^optimal:' | awk '{print $2}')" \
      "$(echo "$out" | field 'moved / optimal:')" \
      "$(echo "$out" | field 'inputs changed:' | sed -e 's/.*(\(.*\))/\1/')"
  done
done

echo "== failure domains: 1,000,000 inputs, 10 x 10 with 5 devices out"
sed -e 's/^\(device [0-9]*5 osd\.[0-9]*5 weight 1.000\)$/\1 out/' m10x10.txt | \
  awk '/^device .* out$/ { if (++n > 5) sub(/ out$/, "") } { print }' > m10x10-out.txt
for plugin in crush rendezvous; do
  out=$(P test m10x10-out.txt --plugin $plugin --no-devices --max-x 999999 --bench-seconds 0)
  echo "$plugin: $(echo "$out" | grep 'failure-domain breaks'), $(echo "$out" | grep 'short results')"
done

echo "== balancer: 10 x 10, 100 PGs per device (3334 PGs x 3 replicas)"
pgs=3334
P balance m10x10.txt --pg-num $pgs -o m10x10-bal.txt
P test m10x10-bal.txt --pg-num $pgs --no-devices --bench-seconds 0 | grep -E 'largest|over-full|under-full'
echo "-- add a device, balance --from the balanced map"
add_device m10x10-bal.txt host0 m10x10-bal+dev.txt
P balance m10x10-bal+dev.txt --from m10x10-bal.txt --pg-num $pgs -o m10x10-bal+dev-bal.txt
P diff m10x10-bal.txt m10x10-bal+dev.txt --pg-num $pgs | grep -E 'moved|optimal' | sed -e 's/^/   straw2 alone: /'
echo "-- add a host, balance --from the balanced map"
add_host m10x10-bal.txt host10 10 m10x10-bal+host.txt
P balance m10x10-bal+host.txt --from m10x10-bal.txt --pg-num $pgs -o m10x10-bal+host-bal.txt
P diff m10x10-bal.txt m10x10-bal+host.txt --pg-num $pgs | grep -E 'moved|optimal' | sed -e 's/^/   straw2 alone: /'
echo "(maps in $work)"
