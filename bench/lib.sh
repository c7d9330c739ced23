# What the bench scripts share. Sourced: `source "$here/../lib.sh"`.

# Waits (at most 10 s) until the CPUs are mostly idle again: the OSDs
# finish the previous workload's applies, checkpoints and compactions in the
# background, and a depth-1 run started on top of them measures those too.
settle() {
  local i idle total prev_idle prev_total
  read -r _ a b c d e f g h _ < /proc/stat
  prev_idle=$((d + e)); prev_total=$((a + b + c + d + e + f + g + h))
  for ((i = 0; i < 20; i++)); do
    sleep 0.5
    read -r _ a b c d e f g h _ < /proc/stat
    idle=$((d + e)); total=$((a + b + c + d + e + f + g + h))
    if ((total > prev_total && 100 * (idle - prev_idle) / (total - prev_total) >= 85)); then return; fi
    prev_idle=$idle; prev_total=$total
  done
}
