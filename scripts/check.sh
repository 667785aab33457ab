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

check "tests" "$BIN/pytest" "$@"
check "ruff check" "$BIN/ruff" check src tests benchmarks
check "ruff format" "$BIN/ruff" format --check src tests benchmarks
check "mypy --strict" "$BIN/mypy"
check "layers (import-linter)" "$BIN/lint-imports"
# Last, being the longest (about 10 minutes, a few more the first time: it installs Keystone and
# tempest into ~/.cache/shoal-conformance); it bounds itself (CONF_TIMEOUT, 40 minutes) and
# stops what it started. SHOAL_CHECK_CONFORMANCE=0 skips it for a quick local run; CI runs it.
if [[ ${SHOAL_CHECK_CONFORMANCE:-1} == 0 ]]; then
  names+=("senlin conformance (tempest): SHOAL_CHECK_CONFORMANCE=0")
  results+=("skipped")
else
  check "senlin conformance (tempest)" tests/conformance/run.sh
fi

echo
echo "==> summary"
failed=0
for i in "${!names[@]}"; do
  printf '  %-8s %s\n' "${results[$i]}" "${names[$i]}"
  [[ ${results[$i]} == ok || ${results[$i]} == skipped ]] || failed=1
done
if ((failed)); then echo "make check: FAILED"; else echo "make check: all passed"; fi
exit "$failed"
