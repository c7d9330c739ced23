#!/usr/bin/env bash
# Behaviours of the strata-conformance command line itself.
#   kit_cli_test.sh CASE KIT PLUGIN
# PLUGIN is the mem example backend, or for the exit-status cases a plugin
# built to be refused (tests/abi) or to fail (plugins/misplacing_placement).
# Each CASE is one ctest entry; see tests/conformance/CMakeLists.txt.
set -uo pipefail
case_name=$1 kit=$2 plugin=$3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

run() {
  "$kit" "$@" >"$out" 2>"$err"
  rc=$?
}
fail() {
  echo "FAILED: $*" >&2
  echo "--- stdout" >&2; cat "$out" >&2
  echo "--- stderr" >&2; cat "$err" >&2
  exit 1
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit code $rc, expected $1"; }
# Catch2 reads ',' '[' ']' in a test spec as syntax; escape them as
# catch_discover_tests does.
as_spec() { local n=$1; n=${n//,/\\,}; n=${n//[/\\[}; n=${n//]/\\]}; printf '%s' "$n"; }
expect_stderr_line() {
  grep -qxF -- "$1" "$err" || fail "stderr lacks the line: $1"
}

case "$case_name" in
  wrong-kind)
    run --kind journal --plugin "$plugin"
    expect_rc 3
    expect_stderr_line "strata-conformance: plugin $plugin: kind mismatch: expected a journal plugin, found a backend plugin named 'mem'"
    ;;
  unknown-option)
    run --kind backend --plugin "$plugin" --option no_such_option=1
    expect_rc 3
    expect_stderr_line "strata-conformance: plugin mem has no option 'no_such_option' (it takes: capacity)"
    ;;
  bad-option-value)
    run --kind backend --plugin "$plugin" --option capacity=plenty
    expect_rc 3
    grep -q "^strata-conformance: plugin mem: option capacity: " "$err" || fail "no message about capacity"
    ;;
  other-kind-test-name)
    # A journal test named explicitly against a backend plugin runs nothing,
    # and running nothing is a failure.
    name=$("$kit" "[journal]" --list-test-names-only | head -n 1)
    [ -n "$name" ] || { echo "no journal tests to name; nothing to check"; exit 0; }
    run --kind backend --plugin "$plugin" "$(as_spec "$name")"
    expect_rc 2
    grep -q "No tests ran" "$out" || fail "expected Catch2 to report that no tests ran"
    ;;
  one-test-by-name)
    name=$("$kit" "[backend]" --list-test-names-only | head -n 1)
    run --kind backend --plugin "$plugin" "$(as_spec "$name")"
    expect_rc 0
    grep -q "in 1 test case" "$out" || fail "expected exactly one test case to run"
    ;;
  list-without-plugin)
    run "[backend]" --list-test-names-only
    [ "$(wc -l <"$out")" -ge 50 ] || fail "expected the backend suite's test names"
    ;;
  crashing-case)
    # $plugin is a backend whose usage() dies with SIGSEGV: the two health
    # cases that call it crash, each alone; the fsck cases around them still
    # run, and the summary is printed.
    run --kind backend --plugin "$plugin" "[health]"
    expect_rc 1
    grep -qxF "strata-conformance: test case 'usage reports a total no smaller than what is used' crashed: Segmentation fault (signal 11)" "$out" ||
      fail "the crash of the usage case is not reported"
    grep -qF "CRASHED  usage counts objects exactly, unless it says it cannot: Segmentation fault" "$out" ||
      fail "the summary does not list the second crashed case"
    grep -qE "^strata-conformance summary: 4 of 4 test cases run: [0-9]+ passed, [0-9]+ failed, 2 crashed$" "$out" ||
      fail "no summary line, or not every case ran"
    grep -qF "fsck finds no problems in a fresh store" "$out" && ! grep -qF "CRASHED  fsck" "$out" ||
      fail "the fsck cases should have run without crashing"
    ;;
  missing-plugin-argument)
    run --kind backend
    expect_rc 2
    expect_stderr_line "strata-conformance: --kind and --plugin are required"
    ;;
  help)
    run --help
    expect_rc 0
    grep -qF -- "--kind backend|journal|placement" "$out" || fail "no usage line"
    grep -qF "Exit status:" "$out" || fail "the exit statuses are not described"
    grep -qF -- "--format   the summary: text (default), or json" "$out" || fail "--format undescribed"
    grep -qF -- "--list-test-names-only" "$out" || fail "Catch2's own options are not listed"
    ;;
  version)
    run --version
    expect_rc 0
    grep -qxE "strata-conformance [0-9]+\.[0-9]+\.[0-9]+ \(plugin ABI [0-9]+\.[0-9]+\)" "$out" ||
      fail "unexpected --version output"
    ;;
  usage-errors)
    run --kind nonsense --plugin "$plugin"
    expect_rc 2
    expect_stderr_line "strata-conformance: --kind must be backend, journal or placement, got 'nonsense'"
    run --kind backend --plugin "$plugin" --format yaml
    expect_rc 2
    expect_stderr_line "strata-conformance: --format must be text or json, got 'yaml'"
    run --kind backend --plugin "$plugin" --no-such-catch2-flag
    expect_rc 2
    run --kind backend --plugin "$plugin" "no test is called this"
    expect_rc 2
    ;;
  refused-abi)
    run --kind backend --plugin "$plugin"
    expect_rc 3
    grep -q "^strata-conformance: plugin $plugin: .*ABI" "$err" || fail "no ABI refusal message"
    ;;
  refused-missing-function)
    run --kind backend --plugin "$plugin"
    expect_rc 3
    grep -q "^strata-conformance: plugin $plugin: .*read" "$err" || fail "the missing slot is not named"
    ;;
  failed-cases)
    # $plugin is the misplacing placement plugin.
    run --kind placement --plugin "$plugin" "[placement][errors],[placement][out]"
    expect_rc 1
    ! grep -qF "{?}" "$out" || fail "a value printed as {?}"
    # The compared values, as Catch2 expands them:
    grep -qF -- '2 == -ENOENT (-2)' "$out" || fail "the unknown-rule answer is not shown"
    grep -qE '^  "input [0-9]+ -> \[[0-9, ]+\]: device [0-9]+ (twice|has weight 0|is out \(reweight 0\))"$' "$out" ||
      fail "the offending placement is not shown"
    grep -qE "^strata-conformance summary: 3 of 3 test cases run: 1 passed, 2 failed, 0 crashed$" "$out" ||
      fail "no summary line with the failures"
    ;;
  failed-errno)
    # $plugin answers ENOENT to every read: an absent xattr of an existing
    # object should be ENODATA.
    run --kind backend --plugin "$plugin" "a missing xattr answers ENODATA and a missing object ENOENT"
    expect_rc 1
    grep -qF -- "-ENOENT (-2) == -ENODATA (-61)" "$out" || fail "the return codes are not named"
    ;;
  json-report)
    run --kind placement --plugin "$plugin" --format json "[placement][errors]"
    expect_rc 1
    [ "$(wc -l <"$out")" -eq 1 ] || fail "stdout is not one JSON line"
    grep -qE '^\{"kit":"strata-conformance [^"]+","kind":"placement","plugin":"[^"]+","result":"failed","exit_code":1,"selected":2,"run":2,"passed":1,"failed":1,"crashed":0,"cases":\[.*\]\}$' "$out" ||
      fail "unexpected JSON summary"
    grep -qF '{"name":"placement: map() writes no more than the caller'"'"'s capacity","outcome":"passed"}' "$out" ||
      fail "the passing case is not listed"
    grep -qF -- '2 == -ENOENT (-2)' "$err" || fail "Catch2's report of the failure should be on stderr"
    ;;
  json-refused)
    run --kind backend --plugin "$plugin" --format json
    expect_rc 3
    grep -qE '^\{"kit":"[^"]+","kind":"backend","plugin":"[^"]+","result":"refused","exit_code":3,"message":"plugin .*ABI.*"\}$' "$out" ||
      fail "unexpected JSON refusal"
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "ok: $case_name"
