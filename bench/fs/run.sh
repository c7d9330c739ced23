#!/usr/bin/env bash
# The small-file file system benchmark of issue 12: Strata's FUSE mount
# against two baselines measured in the same run, printed as ratios.
#
#   bench/fs/run.sh [--strata BIN] [--reps 3] [--workdir DIR] [--image-size 8G]
#       [--backend xfs|kv] [--journal file|tmpfs] [--mds-cache-limit BYTES|none]
#       [--cluster-set key=value]... [--other TREE]
#       [--passthrough-opts OPTS] [--mount-set key=value]... [--no-count]
#       [--requests-cmd CMD] [--no-seed002] [--no-drop-caches] [--keep]
#       [--no-baselines]
#
# Data: the Debian package linux-source-6.1 (installed with apt-get when
# /usr/src/linux-source-6.1.tar.xz is missing), the subset "fs net sound
# include" (13,172 entries, ~160 MB) and the unrelated tree "arch", unpacked
# once into uncompressed tarballs under WORKDIR/cache.
# Baselines, on one fresh loop-mounted XFS image: the local file system, and
# libfuse's passthrough_ll example (built from libfuse3-dev's examples) over a
# directory of that image (--passthrough-opts, e.g. "writeback,cache=always",
# are its -o options; default: its own defaults, as in the issue).
# Strata (only with --strata BIN): a cluster made by `strata up --dir D
# --backend B --journal J`, mounted with `strata mount`, torn down at the
# end (--journal file needs the strata_journal_file plugin built; tmpfs
# is the one the README's ninja line builds).
# Workloads, each --reps times (the median is printed): tar x, tar c of the
# tree warm (piped through cat: GNU tar skips reading files when its output is
# /dev/null), rsync -r first copy, rsync -r --size-only with nothing to copy,
# rm -rf. Seed 002 (strata only): tar c read-back by a fresh client after
# another client walked arch with a small MDS cache (--mds-cache-limit, set
# as mds_cache_memory_limit; "none" leaves it alone), against the same
# read-back with empty caches (--no-baselines: strata alone, for quick
# looks; the ratios print as "-"). --cluster-set lines go to both `strata up`s.
# --other names another directory of the kernel tree than arch (e.g.
# arch/x86: a FUSE server with an fd per inode cannot hold the subset and
# all of arch under a 20,000 open-file limit).
# Also printed: FUSE requests per entry (passthrough_ll counted from its -d
# output in one extra pass; strata through --requests-cmd CMD, which is run
# as `CMD MOUNTPOINT` and prints the requests served so far), MDS and
# client resident memory.
# Needs root (loop devices, mount, drop_caches). Exit status 0 when every
# configuration ran (missed goals are reported, not fatal: the machine is
# shared and noisy), 1 when one failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

strata=""
reps=3
workdir=${STRATA_BENCH_WORKDIR:-/var/tmp}/strata-fs-bench
image_size=8G
backend=xfs
journal="file"
mds_cache_limit=$((8 << 20))
pt_opts=""
mount_sets=()
cluster_sets=()
count=1
requests_cmd=""
seed002=1
drop_caches=1
keep=0
baselines=1
other=arch

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) strata=$(realpath "$2"); shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --mds-cache-limit) mds_cache_limit=$2; shift 2 ;;
    --passthrough-opts) pt_opts=$2; shift 2 ;;
    --mount-set) mount_sets+=(--set "$2"); shift 2 ;;
    --cluster-set) cluster_sets+=(--set "$2"); shift 2 ;;
    --no-count) count=0; shift ;;
    --requests-cmd) requests_cmd=$2; shift 2 ;;
    --no-seed002) seed002=0; shift ;;
    --no-drop-caches) drop_caches=0; shift ;;
    --keep) keep=1; shift ;;
    --no-baselines) baselines=0; shift ;;
    --other) other=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench/fs/run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

die() {
  echo "bench/fs: $*" >&2
  exit 2
}
log() { echo "bench/fs: $*" >&2; }

[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps needs a positive number"
[[ $(id -u) -eq 0 ]] || die "needs root (losetup, mount, drop_caches)"
for tool in losetup mount mkfs.xfs tar rsync xz fusermount3 pkg-config cc; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh installs it)"
done
[[ -z "$strata" || -x "$strata" ]] || die "--strata $strata is not executable"

# ---- data: cached tarballs of the subset and of arch ----

cache=$workdir/cache
mkdir -p "$cache"
other_tar=other-${other//\//_}.tar
prepare_data() {
  [[ -f $cache/subset.tar && -f $cache/$other_tar ]] && return
  local xz=/usr/src/linux-source-6.1.tar.xz
  if [[ ! -f $xz ]]; then
    log "installing linux-source-6.1 (~140 MB, once)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      linux-source-6.1 >/dev/null || die "apt-get install linux-source-6.1 failed"
  fi
  log "unpacking fs net sound include $other from $xz (once, into $cache)"
  local tmp top=linux-source-6.1
  tmp=$(mktemp -d "$cache/unpack.XXXXXX")
  tar -C "$tmp" -xJf "$xz" "$top/fs" "$top/net" "$top/sound" "$top/include" "$top/$other"
  tar -C "$tmp/$top" -cf "$cache/subset.tar.tmp" fs net sound include
  tar -C "$tmp/$top" -cf "$cache/$other_tar.tmp" "$other"
  mv "$cache/subset.tar.tmp" "$cache/subset.tar"
  mv "$cache/$other_tar.tmp" "$cache/$other_tar"
  rm -rf "$tmp"
}
prepare_data
entries=$(tar -tf "$cache/subset.tar" | wc -l)
pt_bin=$("$here/passthrough_ll.sh" build "$cache/bin")

# ---- the run's scratch space, and cleaning all of it up ----

run=$(mktemp -d "$workdir/run.XXXXXX")
image=$run/xfs.img
xfs=$run/xfs
pt_mnt=$run/pt
pt_pid=""
cluster=""
strata_mnts=()
loop=""
cleanup() {
  set +e
  for m in "${strata_mnts[@]}"; do "$here/strata_mount.sh" umount "$strata" "$m"; done
  [[ -n $pt_pid ]] && "$here/passthrough_ll.sh" umount "$pt_mnt" "$pt_pid"
  [[ -n $cluster ]] && "$strata" down --dir "$cluster" --purge >/dev/null 2>&1
  mountpoint -q "$xfs" && { umount "$xfs" || umount -l "$xfs"; }
  [[ -n $loop ]] && losetup -d "$loop" 2>/dev/null
  if [[ $keep -eq 1 ]]; then log "kept $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

truncate -s "$image_size" "$image"
mkfs.xfs -q -f "$image"
loop=$(losetup --find --show "$image")
mkdir -p "$xfs" "$pt_mnt"
mount "$loop" "$xfs"
mkdir -p "$xfs/src" "$xfs/local" "$xfs/pt"
tar -C "$xfs/src" -xf "$cache/subset.tar" # rsync's source
sync

# ---- timing ----

declare -A samples   # "<config>/<workload>" -> "t1 t2 ..."
declare -A requests  # "<config>/<workload>" -> "per-entry (top opcodes)"
failures=()          # the "<config>/<workload>" that failed (no sample)
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds
# timed CONFIG WORKLOAD CMD...: runs CMD, adds its wall time to the samples.
timed() {
  local key=$1/$2 t0 t1
  shift 2
  t0=$(now)
  if ! "$@"; then
    log "$key failed: $*"
    failures+=("$key")
    return 0
  fi
  t1=$(now)
  local secs
  secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }')
  samples[$key]+="$secs "
  log "$key: $secs s" # progress: a slow configuration shows its figures before the end
}
tar_read() { (cd "$1" && tar -cf - . | cat >/dev/null); }

WORKLOADS=(untar tarc rmrf rsync_first rsync_noop)
declare -A LABEL=(
  [untar]="untar (tar x)"
  [tarc]="tar c read-back warm"
  [rsync_first]="rsync -r first copy"
  [rsync_noop]="rsync --size-only, nothing to copy"
  [rmrf]="rm -rf"
  [seed002]="read-back after $other walk (seed 002)"
  [cold]="read-back, empty caches"
)
declare -A GOAL=([untar]=1.5 [rsync_first]=1.5 [rmrf]=1.5 [tarc]=1.2 [rsync_noop]=1.2 [seed002]=1.05)

# One repetition of every workload in DIR (on the file system under test).
# The untarred tree is removed before rsync makes its copy: passthrough_ll
# keeps an open fd per inode the kernel remembers, and two trees would pass
# the 20,000 open-file limit.
# With a HOOK (a function name), it is called as HOOK WORKLOAD before and
# after each workload (the request counters).
one_round() {
  local config=$1 dir=$2 hook=${3:-}
  local u=$dir/untar r=$dir/rsync
  mkdir -p "$u"
  [[ -n $hook ]] && $hook untar
  timed "$config" untar tar -C "$u" -xf "$cache/subset.tar"
  [[ -n $hook ]] && $hook untar
  tar_read "$u" # warm-up: the warm read-back is the second
  [[ -n $hook ]] && $hook tarc
  timed "$config" tarc tar_read "$u"
  [[ -n $hook ]] && $hook tarc
  [[ -n $hook ]] && $hook rmrf
  timed "$config" rmrf rm -rf "$u"
  [[ -n $hook ]] && $hook rmrf
  [[ -n $hook ]] && $hook rsync_first
  timed "$config" rsync_first rsync -rq "$xfs/src/" "$r/"
  [[ -n $hook ]] && $hook rsync_first
  [[ -n $hook ]] && $hook rsync_noop
  timed "$config" rsync_noop rsync -rq --size-only "$xfs/src/" "$r/"
  [[ -n $hook ]] && $hook rsync_noop
  rm -rf "$r"
}

median() {
  tr ' ' '\n' | awk NF | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit }
    if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---- FUSE request counting ----

# passthrough_ll with -d prints "unique: N, opcode: NAME ..." per request;
# the hook remembers the log's length at a workload's start and, at its
# end, counts the requests since, per opcode.
count_log=""
declare -A count_mark
pt_count_hook() {
  local w=$1
  if [[ -z ${count_mark[$w]:-} ]]; then
    count_mark[$w]=$(wc -l <"$count_log")
    return
  fi
  local from=${count_mark[$w]}
  local ops total top
  ops=$(tail -n +"$((from + 1))" "$count_log" | grep -E '^unique: [0-9]+, opcode: ' |
    awk '{ c[$4]++ } END { for (o in c) print c[o], o }' | sort -nr)
  total=$(awk '{ t += $1 } END { print t + 0 }' <<<"$ops")
  top=$(head -n 4 <<<"$ops" | awk -v n="$entries" '{ printf "%s%s %.1f", (NR > 1 ? ", " : ""), $2, $1 / n }')
  requests[passthrough/$w]=$(awk -v t="$total" -v n="$entries" -v top="$top" \
    'BEGIN { printf "%.1f (%s)", t / n, top }')
}
# Without --requests-cmd, the strata mount runs with --foreground (its
# output in a log) and SIGUSR1 makes it print its metrics there: the hook
# takes a snapshot at a workload's start and, at its end, prints per entry
# the FUSE requests (top opcodes), the MDS requests and round trips, and
# the data object writes since.
strata_fg_pid=""
strata_fg_log=""
strata_snapshot() {
  local n0 out
  n0=$(wc -l <"$strata_fg_log")
  kill -USR1 "$strata_fg_pid" 2>/dev/null || return 1
  for _ in $(seq 1 100); do
    out=$(tail -n +"$((n0 + 1))" "$strata_fg_log")
    grep -q '^strata_fuse_cache_inodes ' <<<"$out" && break
    sleep 0.05
  done
  sleep 0.1
  tail -n +"$((n0 + 1))" "$strata_fg_log" | awk '
    /^strata_fuse_requests_total\{/ { split($1, a, "\""); print "op:" a[2], $2 }
    /^strata_fuse_mds_requests_total / { print "mds", $2 }
    /^strata_fuse_mds_round_trips_total / { print "rt", $2 }
    /^strata_fuse_cache_hits_total / { print "hits", $2 }
    /^strata_fuse_data_object_ops_total\{op="write"\}/ { print "objw", $2 }
    /^strata_fuse_data_object_ops_total\{op="read"\}/ { print "objr", $2 }
    /^strata_fuse_data_object_ops_total\{op="remove"\}/ { print "objrm", $2 }'
}
strata_metrics_hook() {
  local w=$1 snap=$run/snap-$1
  if [[ ! -f $snap ]]; then
    strata_snapshot >"$snap" || true
    return
  fi
  strata_snapshot >"$snap.end" || return 0
  requests[strata/$w]=$(awk -v e="$entries" '
    NR == FNR { a[$1] = $2; next }
    { d = $2 - a[$1]; if ($1 ~ /^op:/) { tot += d; if (d > 0) ops[substr($1, 4)] = d } else v[$1] = d }
    END {
      n = 0; for (o in ops) { k[++n] = o }
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ops[k[j]] > ops[k[i]]) { t = k[i]; k[i] = k[j]; k[j] = t }
      top = ""; for (i = 1; i <= n && i <= 4; i++) top = top sprintf("%s%s %.1f", (i > 1 ? ", " : ""), k[i], ops[k[i]] / e)
      printf "%.1f (%s); MDS req %.2f, round trips %.2f, cache hits %.1f, obj w/r/rm %.2f/%.2f/%.2f",
        tot / e, top, v["mds"] / e, v["rt"] / e, v["hits"] / e, v["objw"] / e, v["objr"] / e, v["objrm"] / e
    }' "$snap" "$snap.end")
  rm -f "$snap" "$snap.end"
}
strata_count_mnt=""
declare -A strata_mark
strata_count_hook() {
  local w=$1 n
  n=$($requests_cmd "$strata_count_mnt" 2>/dev/null | tr -dc '0-9')
  [[ -n $n ]] || return 0
  if [[ -z ${strata_mark[$w]:-} ]]; then
    strata_mark[$w]=$n
  else
    requests[strata/$w]=$(awk -v d=$((n - strata_mark[$w])) -v e="$entries" 'BEGIN { printf "%.1f", d / e }')
  fi
}

# ---- the baselines ----

log "$entries entries; $reps repetitions; image $image_size on $loop"
for ((i = 1; i <= reps * baselines; i++)); do
  log "local, round $i"
  one_round local "$xfs/local"
done

pt_args=()
[[ -n $pt_opts ]] && pt_args=(-o "$pt_opts")
[[ $baselines -eq 1 ]] && pt_pid=$("$here/passthrough_ll.sh" mount "$pt_bin" "$xfs/pt" "$pt_mnt" "$run/pt.log" "${pt_args[@]}")
for ((i = 1; i <= reps * baselines; i++)); do
  log "passthrough_ll, round $i"
  one_round passthrough "$pt_mnt"
done
if [[ $baselines -eq 1 ]]; then
  read -r pt_rss pt_hwm < <("$here/strata_mount.sh" rss "$pt_pid")
  "$here/passthrough_ll.sh" umount "$pt_mnt" "$pt_pid"
fi
pt_pid=""
if [[ $count -eq 1 && $baselines -eq 1 ]]; then
  log "passthrough_ll -d, one more round counting requests"
  count_log=$run/pt-debug.log
  pt_pid=$("$here/passthrough_ll.sh" mount "$pt_bin" "$xfs/pt" "$pt_mnt" "$count_log" -d "${pt_args[@]}")
  # Its own config, so that the debug pass's times stay out of the table.
  one_round passthrough-debug "$pt_mnt" pt_count_hook
  "$here/passthrough_ll.sh" umount "$pt_mnt" "$pt_pid"
  pt_pid=""
  rm -f "$count_log"
fi

# ---- strata ----

strata_status="skipped"
strata_note="no --strata BIN given"
mds_mem="-"
client_mem="-"
cache_limit_note=""

# "R MiB now, H MiB peak" from strata_mount.sh rss, or why there is none.
mem_text() {
  if [[ $1 == - ]]; then echo "n/a (no live process: mds*.pid missing?)"; else echo "$1 MiB now, $2 MiB peak"; fi
}

cluster_up() {
  local dir=$1
  shift
  "$strata" up --dir "$dir" --backend "$backend" --journal "$journal" --osds 3 --pg-num 32 \
    --timeout 180 "${cluster_sets[@]}" "$@" >"$dir.up.log" 2>&1 ||
    { tail -n 20 "$dir.up.log" >&2; return 1; }
}
smount() { "$here/strata_mount.sh" mount "$strata" "$cluster/strata.conf" "$1" "$run/mount.log" "${mount_sets[@]}"; }
sumount() { "$here/strata_mount.sh" umount "$strata" "$1"; }
drop_all_caches() {
  sync
  [[ $drop_caches -eq 1 ]] && echo 3 >/proc/sys/vm/drop_caches
  return 0
}

strata_main() {
  cluster=$run/cluster
  log "strata: cluster up ($backend/$journal) in $cluster"
  cluster_up "$cluster" || return 1
  local mnt=$run/strata
  strata_mnts=("$mnt")
  local client
  if [[ $count -eq 1 && -z $requests_cmd ]]; then
    strata_fg_log=$run/mount-fg.log
    client=$("$here/strata_mount.sh" mount "$strata" "$cluster/strata.conf" "$mnt" "$strata_fg_log" \
      --foreground "${mount_sets[@]}") || return 1
    strata_fg_pid=$client
  else
    client=$(smount "$mnt") || return 1
  fi
  for ((i = 1; i <= reps; i++)); do
    log "strata, round $i"
    one_round strata "$mnt/bench"
  done
  if [[ -n $requests_cmd ]]; then
    strata_count_mnt=$mnt
    one_round strata-count "$mnt/bench" strata_count_hook
  elif [[ $count -eq 1 ]]; then
    log "strata: one more round counting requests (SIGUSR1 metrics)"
    one_round strata-count "$mnt/bench" strata_metrics_hook
  fi
  local r h
  read -r r h < <("$here/strata_mount.sh" rss "$client")
  client_mem=$(mem_text "$r" "$h")
  read -r r h < <("$here/strata_mount.sh" rss "$("$here/strata_mount.sh" mds-pid "$cluster")")
  mds_mem="$(mem_text "$r" "$h") (default cache limit)"
  sumount "$mnt"
  strata_mnts=()
  "$strata" down --dir "$cluster" --purge >/dev/null
  cluster=""
}

# Seed 002: a cluster whose MDS cache is smaller than the two trees'
# metadata. Client A reads the subset back with empty caches (the
# reference), or after A warmed the MDS and client B then walked arch.
strata_seed002() {
  cluster=$run/cluster002
  log "strata: seed 002 cluster, mds_cache_memory_limit=$mds_cache_limit"
  local limit=()
  [[ $mds_cache_limit == none ]] || limit=(--set "mds_cache_memory_limit=$mds_cache_limit")
  cluster_up "$cluster" "${limit[@]}" || return 1
  local a=$run/client-a b=$run/client-b
  strata_mnts=("$a" "$b")
  smount "$a" >/dev/null || return 1
  mkdir -p "$a/trees/subset" "$a/trees/other"
  tar -C "$a/trees/subset" -xf "$cache/subset.tar" || return 1
  tar -C "$a/trees/other" -xf "$cache/$other_tar" || return 1
  sumount "$a"
  local restart=("$strata" down --dir "$cluster")
  for ((i = 1; i <= reps; i++)); do
    log "strata seed 002, round $i: empty caches"
    "${restart[@]}" >/dev/null && cluster_up "$cluster" || return 1
    drop_all_caches
    smount "$a" >/dev/null || return 1
    timed strata cold tar_read "$a/trees/subset"
    sumount "$a"
    log "strata seed 002, round $i: after client B walked $other"
    "${restart[@]}" >/dev/null && cluster_up "$cluster" || return 1
    smount "$a" >/dev/null || return 1
    smount "$b" >/dev/null || return 1
    tar_read "$a/trees/subset" || return 1
    sumount "$a"
    tar_read "$b/trees/other" || return 1
    drop_all_caches
    smount "$a" >/dev/null || return 1
    timed strata seed002 tar_read "$a/trees/subset"
    sumount "$a"
    sumount "$b"
  done
  local r h
  read -r r h < <("$here/strata_mount.sh" rss "$("$here/strata_mount.sh" mds-pid "$cluster")")
  cache_limit_note="seed-002 MDS: $(mem_text "$r" "$h") with mds_cache_memory_limit=$mds_cache_limit"
  strata_mnts=()
  "$strata" down --dir "$cluster" --purge >/dev/null
  cluster=""
}

if [[ -n $strata ]]; then
  strata_status="ran"
  strata_note=""
  if ! strata_main; then
    strata_status="failed"
    strata_note="the strata run failed (see above); its column is incomplete"
  elif [[ $seed002 -eq 1 ]] && ! strata_seed002; then
    strata_status="failed"
    strata_note="the seed 002 run failed (see above)"
  fi
fi

# ---- the report ----

med() { echo "${samples[$1/$2]:-}" | median; }
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}
verdict() { awk -v r="$1" -v g="$2" 'BEGIN { if (r == "-") print "-"; else print (r <= g ? "pass" : "FAIL") }'; }

echo
echo "bench/fs: $entries entries (linux-source-6.1 fs net sound include), median of $reps," \
  "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "passthrough_ll -o ${pt_opts:-<defaults>}; strata: $strata_status${strata_note:+ ($strata_note)}"
printf '%-42s %9s %9s %9s %8s %8s %8s %6s\n' workload "local s" "pt_ll s" "strata s" "pt/local" \
  "st/pt" goal result
for w in "${WORKLOADS[@]}"; do
  l=$(med local "$w")
  p=$(med passthrough "$w")
  s=$(med strata "$w")
  [[ -n $strata && $strata_status != skipped ]] || s=skipped
  r=$(ratio "$s" "$p")
  [[ $s == skipped ]] && r="-"
  printf '%-42s %9s %9s %9s %8s %8s %8s %6s\n' "${LABEL[$w]}" "$l" "$p" "$s" "$(ratio "$p" "$l")" \
    "$r" "<=${GOAL[$w]}x" "$(verdict "$r" "${GOAL[$w]}")"
done
s=$(med strata seed002)
c=$(med strata cold)
if [[ $strata_status == skipped || $seed002 -eq 0 ]]; then s=skipped c=skipped; fi
printf '%-42s %9s %9s %9s %8s %8s %8s %6s\n' "${LABEL[cold]}" n/a n/a "$c" - - - -
r=$(ratio "$s" "$c")
printf '%-42s %9s %9s %9s %8s %8s %8s %6s\n' "${LABEL[seed002]}" n/a n/a "$s" - "$r" \
  "<=${GOAL[seed002]}x" "$(verdict "$r" "${GOAL[seed002]}")"
echo "  (seed 002's ratio is against the read-back with empty caches, not passthrough_ll)"

echo
echo "FUSE requests per entry, one extra round (top opcodes per entry):"
for w in "${WORKLOADS[@]}"; do
  printf '  %-36s pt_ll %-60s strata %s\n' "${LABEL[$w]}" "${requests[passthrough/$w]:-n/a}" \
    "${requests[strata/$w]:-n/a}"
done
[[ $count -eq 1 ]] || echo "  (not counted: --no-count)"
[[ -n $requests_cmd || $count -eq 0 ]] || echo "  (strata: from the mount's SIGUSR1 metrics, --foreground)"
echo
echo "memory: passthrough_ll ${pt_rss:-?} MiB now, ${pt_hwm:-?} MiB peak; strata client $client_mem;" \
  "MDS $mds_mem"
[[ -n $cache_limit_note ]] && echo "        $cache_limit_note"
echo
echo "samples (seconds, in order):"
for key in $(printf '%s\n' "${!samples[@]}" | grep -v -- '-debug/\|-count/' | sort); do
  printf '  %-26s %s\n' "$key" "${samples[$key]}"
done
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "failed (no sample): ${failures[*]}"
  exit 1
fi
[[ $strata_status != failed ]]
