#!/usr/bin/env bash
# `make check`: run every check even when one fails, then say which passed and which failed.
# make would stop at the first failing target and hide the rest (a failing test would keep
# ruff, mypy and the layer check from ever running); this runs them all and exits non-zero
# if any failed.
#
# The checks run side by side: the main pytest in WORKERS processes (pytest-xdist; its tests
# mostly wait on subprocesses, PostgreSQL and real services, so more workers than cores pay),
# and beside it, each started at once in the background, the suites below (the Senlin
# conformance suite, the tests of real OpenStack peers in a pytest of their own) and the static
# checks. Each background suite's output is printed once it has ended, before the summary.
#
# SHOAL_CHECK_WORKERS=N  the main pytest's workers (default 5; 0: one process, no xdist)
# SHOAL_CHECK_CONFORMANCE=0  skip the Senlin and Heat conformance suites (a quick local run; CI runs them)
# SHOAL_CHECK_LANES=0  the peers' suites in the main pytest instead of a pytest of their own
# scripts/check.sh TESTS...  those tests in the main pytest (no peers' lane)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
WORKERS=${SHOAL_CHECK_WORKERS:-5}
LOGS=$(mktemp -d -t shoal-check.XXXXXX)
START=$SECONDS

names=()
results=()
record() { # name, exit status, seconds, where
  if (($2 == 0)); then results+=("ok"); else results+=("FAILED"); fi
  names+=("$1 ($3s$4)")
}

background=() # "name|log" of each suite started beside the main pytest
beside() {    # NAME COMMAND...: start COMMAND now in the background, its output to a log
  local name=$1 log
  shift
  log=$LOGS/${#background[@]}.log
  (
    start=$SECONDS
    "$@" >"$log" 2>&1
    echo "$? $((SECONDS - start))" >"$log.end"
  ) &
  background+=("$name|$log")
  echo "==> beside the tests: $name: $* (log: $log)"
}

# -- what runs beside the main pytest ------------------------------------------------------
# One line per suite. A suite bounds its own time, stops what it started, and exits non-zero
# when it failed; it must not depend on the main pytest (they start together).

# The Senlin conformance suite (senlin-tempest-plugin against `shoal server` with a real
# Keystone; installs into ~/.cache/shoal-conformance the first time; bounded by CONF_TIMEOUT).
if [[ ${SHOAL_CHECK_CONFORMANCE:-1} != 0 ]]; then
  beside "senlin conformance (tempest)" tests/conformance/run.sh
  # Heat's: heat-tempest-plugin's gabbi API suite against the orchestration façade (issue 38;
  # shares the Keystone venv under a lock; bounded by CONF_TIMEOUT, 1200 s)
  beside "heat conformance (gabbi)" tests/conformance/heat.sh
else
  names+=("senlin conformance (tempest): SHOAL_CHECK_CONFORMANCE=0")
  results+=("skipped")
  names+=("heat conformance (gabbi): SHOAL_CHECK_CONFORMANCE=0")
  results+=("skipped")
fi

# The suites that drive real OpenStack services (Senlin 16, Heat's engine, Neutron, Octavia):
# each starts its services once per pytest session, so they run in one pytest of their own
# rather than once in each of the main pytest's workers.
PEER_SUITES=(tests/senlin_live tests/heat_oracle tests/netpeers)
lanes=${SHOAL_CHECK_LANES:-1}
(($#)) && lanes=0 # a chosen test runs as asked, in the main pytest
if [[ $lanes != 0 ]]; then
  beside "tests of the real OpenStack peers (${PEER_SUITES[*]})" \
    "$BIN/pytest" -p no:cacheprovider --durations=10 "${PEER_SUITES[@]}"
fi

# The static checks: a few CPU-minutes, taken while the tests wait.
beside "ruff check" "$BIN/ruff" check src tests benchmarks
beside "ruff format" "$BIN/ruff" format --check src tests benchmarks
beside "mypy --strict" "$BIN/mypy"
beside "layers (import-linter)" "$BIN/lint-imports"

# -- the main pytest, in the foreground ----------------------------------------------------
parallel=()
((WORKERS > 0)) && parallel=(-n "$WORKERS" --dist worksteal)
if (($#)); then
  tests=("$@")
else
  tests=()
  if [[ $lanes != 0 ]]; then
    for suite in "${PEER_SUITES[@]}"; do tests+=("--ignore=$suite"); done
  fi
fi
echo "==> tests: $BIN/pytest ${parallel[*]} --durations=20 ${tests[*]}"
start=$SECONDS
"$BIN/pytest" "${parallel[@]}" --durations=20 "${tests[@]}"
record "tests (${WORKERS} workers)" $? $((SECONDS - start)) ""

# -- the background suites' output, as each ends --------------------------------------------
wait
for entry in "${background[@]}"; do
  name=${entry%%|*}
  log=${entry#*|}
  echo "==> $name: its output"
  cat "$log"
  read -r status seconds <"$log.end" 2>/dev/null || status=1 seconds="?"
  record "$name" "$status" "$seconds" ", beside the tests"
done
rm -rf "$LOGS"

echo
echo "==> summary ($(((SECONDS - START) / 60))m$(((SECONDS - START) % 60))s in all)"
failed=0
for i in "${!names[@]}"; do
  printf '  %-8s %s\n' "${results[$i]}" "${names[$i]}"
  [[ ${results[$i]} == ok || ${results[$i]} == skipped ]] || failed=1
done
if ((failed)); then echo "make check: FAILED"; else echo "make check: all passed"; fi
exit "$failed"
