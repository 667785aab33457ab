#!/usr/bin/env bash
# Heat conformance (issue 38 item 3): heat-tempest-plugin 3.0.0's API suite (its gabbi tests
# under heat_tempest_plugin/tests/api, 47 tests) against `shoal server`'s orchestration façade
# in Keystone mode (real Keystone 30 under uWSGI, sim provider), run per file on one worker as
# Heat's gate runs it (each file's tests build on the previous ones: $LOCATION, $LAST_URL).
#
# Usage: tests/conformance/heat.sh
# Prints the time of each phase, "N passed, N failed, N skipped", and exits 1 when fewer than
# HEAT_THRESHOLD (45) pass, 2 when a service could not be set up, 124 past CONF_TIMEOUT.
# `make check` runs it beside the tests (scripts/check.sh). Results in $ROOT/results
# (heat-summary.txt, heat-failed.txt, heat-console.txt, server.log).
# Knobs (env): CONF_ROOT (scratch, default $TMPDIR/shoal-heat-conformance), CONF_CACHE (venvs,
#   shared with run.sh; default ~/.cache/shoal-conformance), HEAT_THRESHOLD (45), CONF_TIMEOUT
#   (1200 s for the whole run), KS_PORT / SHOAL_CONF_PORT (default: free ports), SHOAL_BIN.
# Everything is written under CONF_ROOT and CONF_CACHE; only the processes started here are
# stopped, on every way out.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${CONF_UNDER_TIMEOUT:-}" ]; then  # a global bound, as run.sh (see there)
  limit=${CONF_TIMEOUT:-1200}
  CONF_UNDER_TIMEOUT=1 timeout --kill-after="${CONF_KILL_AFTER:-60}" "$limit" "$0" "$@" &
  guard=$!
  trap 'kill -TERM "$guard" 2>/dev/null' INT TERM
  while :; do
    wait "$guard"; rc=$?
    kill -0 "$guard" 2>/dev/null || break
  done
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "heat conformance: timed out after ${limit}s" >&2; fi
  exit "$rc"
fi
REPO=$(cd "$HERE/../.." && pwd)
ROOT=${CONF_ROOT:-${TMPDIR:-/tmp}/shoal-heat-conformance}
CACHE=${CONF_CACHE:-$HOME/.cache/shoal-conformance}
THRESHOLD=${HEAT_THRESHOLD:-45}
SHOAL_BIN=${SHOAL_BIN:-$REPO/.venv/bin/shoal}
PY=${PYTHON:-python3}
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
KS_PORT=${KS_PORT:-$(free_port)}
SVC_PORT=${SHOAL_CONF_PORT:-$(free_port)}
ADMIN_PW=secretadmin SERVICE_PW=secretservice USER_PW=secretdemo
export KS_PORT KS_SVC_PORT=$SVC_PORT KS_ADMIN_PASSWORD=$ADMIN_PW KS_SERVICE_PASSWORD=$SERVICE_PW
export HA_USER_PASSWORD=$USER_PW HA_REGION=RegionOne
export HA_ENDPOINT_URL="http://127.0.0.1:$SVC_PORT/orchestration/v1/%(project_id)s"
KS_VENV=$CACHE/keystone-30 HT_VENV=$CACHE/heat-tempest-3.0.0
STATE=$ROOT/keystone WS=$ROOT/tempest RESULTS=${TP_RESULTS:-$ROOT/results}
. "$HERE/lib.sh"  # ts, until_up, venv
T0=$(ts)

KS_PID="" SHOAL_PID="" ks_job=""
stop() {
  local pid
  if [ -n "$ks_job" ] && kill -0 "$ks_job" 2>/dev/null; then
    pkill -TERM -P "$ks_job" 2>/dev/null; kill "$ks_job" 2>/dev/null
  fi
  for pid in $SHOAL_PID $KS_PID; do
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
trap stop EXIT
trap 'exit 143' TERM INT
rm -rf "$ROOT"; mkdir -p "$ROOT" "$CACHE" "$RESULTS"

# 1. venvs (cached; the Keystone one is run.sh's)
venv "$KS_VENV" keystone==30.0.0 uwsgi & ks_job=$!
venv "$HT_VENV" -c "$HERE/constraints.txt" tempest==47.0.0 heat-tempest-plugin==3.0.0 stestr
wait "$ks_job"; ks_job=""
[ -f "$KS_VENV/.done" ] && [ -f "$HT_VENV/.done" ] || { echo "venv install failed" >&2; exit 2; }
echo "== venvs ready: $(( $(ts) - T0 ))s"

# 2. shoal server in keystone mode, sim provider (its Keystone user is run.sh's `senlin`)
mkdir -p "$ROOT/shoal"
SHOAL_HOME=$ROOT/shoal SHOAL_PROVIDER=sim \
  SHOAL_AUTH=keystone SHOAL_KEYSTONE_URL="http://127.0.0.1:$KS_PORT/v3" \
  SHOAL_KEYSTONE_PASSWORD=$SERVICE_PW SHOAL_KEYSTONE_CACHE_S=3600 \
  SHOAL_KEYSTONE_TIMEOUT_S=120 SHOAL_RETRY_BACKOFF_S=0.05 \
  "$SHOAL_BIN" server --port "$SVC_PORT" --log-level warning > "$ROOT/shoal/server.log" 2>&1 &
SHOAL_PID=$!

# 3. keystone: fresh state, bootstrap, uwsgi; then the service users, `orchestration` at the
#    façade and the plugin's `demo` account (register.py for Shoal's own user, heat_register.py
#    for what Heat's suites need)
mkdir -p "$STATE"
sed "s#@KS_STATE@#$STATE#g" "$HERE/keystone.conf.tmpl" > "$STATE/keystone.conf"
KM=("$KS_VENV/bin/keystone-manage" --config-file "$STATE/keystone.conf")
U=$(id -un) G=$(id -gn)
{ "${KM[@]}" fernet_setup --keystone-user "$U" --keystone-group "$G" &&
  "${KM[@]}" credential_setup --keystone-user "$U" --keystone-group "$G" &&
  "${KM[@]}" db_sync &&
  "${KM[@]}" bootstrap --bootstrap-password "$ADMIN_PW" \
    --bootstrap-admin-url "http://127.0.0.1:$KS_PORT/v3" \
    --bootstrap-internal-url "http://127.0.0.1:$KS_PORT/v3" \
    --bootstrap-public-url "http://127.0.0.1:$KS_PORT/v3" --bootstrap-region-id RegionOne
} > "$STATE/setup.log" 2>&1 || { tail -20 "$STATE/setup.log" >&2; exit 2; }
OS_KEYSTONE_CONFIG_DIR=$STATE "$KS_VENV/bin/uwsgi" --http11-socket "127.0.0.1:$KS_PORT" \
  --wsgi keystone.wsgi.api:application --master --processes 2 --threads 4 --enable-threads \
  --lazy-apps --die-on-term --need-app --buffer-size 65535 \
  --env "OS_KEYSTONE_CONFIG_DIR=$STATE" > "$STATE/uwsgi.log" 2>&1 &
KS_PID=$!
until_up 300 curl -sf -o /dev/null "http://127.0.0.1:$KS_PORT/v3" ||
  { tail -20 "$STATE/uwsgi.log" >&2; exit 2; }
KS_SVC_URL="http://127.0.0.1:$SVC_PORT/clustering" "$HT_VENV/bin/python" "$HERE/register.py" ||
  exit 2
"$HT_VENV/bin/python" "$HERE/heat_register.py" || exit 2
echo "== keystone on :$KS_PORT: $(( $(ts) - T0 ))s"
svc_up() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SVC_PORT/orchestration/")" = 300 ]; }
until_up 300 svc_up || { tail -20 "$ROOT/shoal/server.log" >&2; exit 2; }
echo "== shoal on :$SVC_PORT: $(( $(ts) - T0 ))s"

# 4. tempest workspace: [heat_plugin] as the plugin's README and Heat's gate configure it
"$HT_VENV/bin/tempest" init --workspace-path "$ROOT/workspace.yaml" --name shoal-heat "$WS" \
  > "$ROOT/init.err" 2>&1 ||
  { cat "$ROOT/init.err" >&2; exit 2; }
cat > "$WS/etc/tempest.conf" <<CONF
[DEFAULT]
log_dir = $WS/logs
log_file = tempest.log
use_stderr = False

[oslo_concurrency]
lock_path = $WS/tempest_lock

[service-clients]
http_timeout = 300

[identity]
uri_v3 = http://127.0.0.1:$KS_PORT/v3
auth_version = v3
region = RegionOne

[service_available]
heat = True
nova = False
neutron = False
glance = False
cinder = False
swift = False

[heat_plugin]
username = demo
password = $USER_PW
project_name = demo
user_domain_name = Default
project_domain_name = Default
admin_username = admin
admin_password = $ADMIN_PW
admin_project_name = admin
auth_url = http://127.0.0.1:$KS_PORT/v3
auth_version = 3
region = RegionOne
catalog_type = orchestration
endpoint_type = public
CONF

# 5. the run: per file, one worker (stestr's group regex keeps each file's tests together)
cd "$WS" || exit 2
T1=$(ts)
rm -rf .stestr
api=$("$HT_VENV/bin/python" -c 'import heat_tempest_plugin.tests.api as m, os; print(os.path.dirname(m.__file__))')
cat > .stestr.conf <<STESTR
[DEFAULT]
test_path=$api
top_dir=$(dirname "$(dirname "$(dirname "$api")")")
group_regex=heat_tempest_plugin\.tests\.api\.test_heat_api[._]([^_]+)
STESTR
"$HT_VENV/bin/stestr" run --concurrency 1 > "$RESULTS/heat-console.txt" 2>&1
echo "== gabbi run: $(( $(ts) - T1 ))s"
"$HT_VENV/bin/stestr" last --subunit > "$RESULTS/heat.subunit" 2>/dev/null
"$HT_VENV/bin/stestr" list > "$RESULTS/heat-ids-raw.txt" 2>/dev/null
grep -E '^heat_tempest_plugin\.' "$RESULTS/heat-ids-raw.txt" > "$RESULTS/heat-ids.txt"
# stestr's own totals: gabbi names two tests of a file alike ("delete envstack" twice), which
# summarize.py, keyed by test id, would count once
"$HT_VENV/bin/python" "$HERE/summarize.py" "$RESULTS/heat.subunit" "$RESULTS/heat-ids.txt" \
  "$RESULTS/heat-summary.txt" > /dev/null
"$HT_VENV/bin/python" "$HERE/failures.py" "$RESULTS/heat.subunit" "$RESULTS/heat-ids.txt" \
  > "$RESULTS/heat-failed.txt"
count() { sed -n "s/^ - $1: \([0-9]*\)$/\1/p" "$RESULTS/heat-console.txt" | tail -1; }
passed=$(count Passed) failed=$(count Failed) skipped=$(count Skipped)
ran=$(sed -n 's/^Ran: \([0-9]*\) tests.*/\1/p' "$RESULTS/heat-console.txt" | tail -1)
line="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped (of ${ran:-0} run)"
echo "$line" >> "$RESULTS/heat-summary.txt"
cp "$ROOT/shoal/server.log" "$WS/logs/tempest.log" "$RESULTS/" 2>/dev/null
echo "heat gabbi: $line"
echo "== total: $(( $(ts) - T0 ))s; results in $RESULTS (heat-*.txt)"
[ "${passed:-0}" -ge "$THRESHOLD" ] || { echo "below the threshold: ${passed:-0} < $THRESHOLD" >&2; exit 1; }
