#!/usr/bin/env bash
# `make check`: run every check even when one fails, then say which passed and which failed.
# make would stop at the first failing target and hide the rest (a failing test would keep
# ruff, mypy and the layer check from ever running); this runs them all and exits non-zero
# if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}

names=()
results=()
check() {
  local name=$1
  shift
  echo "==> $name: $*"
  local start=$SECONDS
  if "$@"; then results+=("ok"); else results+=("FAILED"); fi
  names+=("$name ($((SECONDS - start))s)")
}

# The Senlin conformance suite (about 10 minutes, a few more the first time: it installs Keystone
# and tempest into ~/.cache/shoal-conformance) spends its time waiting on tempest's polls and the
# sim provider's build latency, so it runs beside the tests instead of after them: the whole
# check took over 40 minutes in a line. It bounds itself (CONF_TIMEOUT, 40 minutes), stops what
# it started, and its output is printed once it ends. SHOAL_CHECK_CONFORMANCE=0 skips it for a
# quick local run; CI runs it.
# The suites that drive real OpenStack services (Senlin 16's engine and API, Heat's template
# engine, Neutron and Octavia) spend their time starting those services and waiting on them;
# they run as a second pytest beside the first, after the conformance suite, instead of adding
# about ten minutes to the main line (`make check` must stay under 45 minutes on CI's machine).
# SHOAL_CHECK_LANES=0 runs everything in one pytest, in the foreground.
PEER_SUITES=(tests/senlin_live tests/heat_oracle tests/netpeers)
lanes=${SHOAL_CHECK_LANES:-1}
(($#)) && lanes=0 # a chosen test runs as asked, in one pytest
conf_log=""
peers_log=""
if [[ ${SHOAL_CHECK_CONFORMANCE:-1} != 0 || $lanes != 0 ]]; then
  bg_dir=$(mktemp -d -t shoal-check.XXXXXX)
  bg_start=$SECONDS
  (
    if [[ ${SHOAL_CHECK_CONFORMANCE:-1} != 0 ]]; then
      tests/conformance/run.sh >"$bg_dir/conformance.log" 2>&1
      echo $? >"$bg_dir/conformance.rc"
      echo $((SECONDS - bg_start)) >"$bg_dir/conformance.s"
    fi
    if [[ $lanes != 0 ]]; then
      "$BIN/pytest" --durations=15 "${PEER_SUITES[@]}" >"$bg_dir/peers.log" 2>&1
      echo $? >"$bg_dir/peers.rc"
      echo $((SECONDS - bg_start)) >"$bg_dir/peers.s"
    fi
  ) &
  bg_pid=$!
  [[ ${SHOAL_CHECK_CONFORMANCE:-1} != 0 ]] && conf_log=$bg_dir/conformance.log
  [[ $lanes != 0 ]] && peers_log=$bg_dir/peers.log
  echo "==> beside the tests: ${conf_log:+the Senlin conformance suite (tests/conformance/run.sh), then }${peers_log:+pytest ${PEER_SUITES[*]}} (logs in $bg_dir)"
fi

if [[ $lanes != 0 ]]; then
  ignore=()
  for suite in "${PEER_SUITES[@]}"; do ignore+=("--ignore=$suite"); done
  check "tests" "$BIN/pytest" --durations=25 "${ignore[@]}"
else
  check "tests" "$BIN/pytest" --durations=25 "$@"
fi
check "ruff check" "$BIN/ruff" check src tests benchmarks
check "ruff format" "$BIN/ruff" format --check src tests benchmarks
check "mypy --strict" "$BIN/mypy"
check "layers (import-linter)" "$BIN/lint-imports"

if [[ -n $conf_log || -n $peers_log ]]; then wait "$bg_pid"; fi
background() { # name, log, rc file, seconds file: print its output and record its result
  local name=$1 log=$2 base=${2%.log}
  echo "==> $name: its output"
  cat "$log"
  if [[ $(cat "$base.rc" 2>/dev/null) == 0 ]]; then results+=("ok"); else results+=("FAILED"); fi
  names+=("$name ($(cat "$base.s" 2>/dev/null)s from the start, beside the tests)")
}
if [[ -n $peers_log ]]; then
  background "tests of the real OpenStack peers (${PEER_SUITES[*]})" "$peers_log"
fi
if [[ -n $conf_log ]]; then
  background "senlin conformance (tempest)" "$conf_log"
else
  names+=("senlin conformance (tempest): SHOAL_CHECK_CONFORMANCE=0")
  results+=("skipped")
fi
[[ -n ${bg_dir:-} ]] && rm -rf "$bg_dir"

echo
echo "==> summary"
failed=0
for i in "${!names[@]}"; do
  printf '  %-8s %s\n' "${results[$i]}" "${names[$i]}"
  [[ ${results[$i]} == ok || ${results[$i]} == skipped ]] || failed=1
done
if ((failed)); then echo "make check: FAILED"; else echo "make check: all passed"; fi
exit "$failed"
