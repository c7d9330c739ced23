# Sourced by the test fixtures' cleanups (tests/cluster/no_daemon_left.sh,
# tests/fs_e2e/nothing_left.sh).
#
#   kill_left_daemons STRATA PATTERN WHAT
#     SIGKILLs every process of the binary STRATA whose command line matches
#     the shell pattern PATTERN, printing each as "left running by WHAT";
#     returns 1 if there was one, 0 if none.
kill_left_daemons() {
  local strata pattern=$2 what=$3 found=0 proc exe cmd
  strata=$(readlink -f "$1")
  for proc in /proc/[0-9]*; do
    exe=$(readlink "$proc/exe" 2>/dev/null) || continue
    [ "$exe" = "$strata" ] || continue
    cmd=$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) || continue
    # shellcheck disable=SC2254 # the pattern is meant to match
    case "$cmd" in
      $pattern)
        echo "left running by $what, killed: pid ${proc#/proc/}: $cmd"
        kill -9 "${proc#/proc/}" 2>/dev/null || true
        found=1
        ;;
    esac
  done
  return "$found"
}
