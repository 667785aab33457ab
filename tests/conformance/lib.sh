# Shell helpers the conformance scripts (run.sh, heat.sh) share; sourced after they set PY.

ts() { date +%s; }

# Waits for a service: until CMD succeeds, at most $1 seconds (a loaded machine starts Keystone
# and shoal in tens of seconds; the global timeout still bounds the whole run).
until_up() {  # SECONDS CMD...
  local end=$(( $(ts) + $1 )); shift
  until "$@"; do [ "$(ts)" -lt "$end" ] || return 1; sleep 0.2; done
}

# A cached venv with PIP-ARGS installed; it counts as installed only when pip succeeded.
venv() {  # DIR PIP-ARGS...
  # under a lock: run.sh and heat.sh share the Keystone venv and may start together
  local dir=$1; shift
  mkdir -p "$(dirname "$dir")"
  (
    flock 9
    [ -f "$dir/.done" ] && exit 0
    rm -rf "$dir"; "$PY" -m venv "$dir" || exit 1
    "$dir/bin/pip" install -q "$@" > "$dir.log" 2>&1
    rc=$?
    grep -v 'is ignored: it is neither' "$dir.log" >&2
    [ "$rc" = 0 ] && touch "$dir/.done"
  ) 9> "$dir.lock"
}
