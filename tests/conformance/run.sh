#!/usr/bin/env bash
# Senlin conformance: the real senlin-tempest-plugin API suite (tempest 47, plugin 1.8.0) against
# `shoal server` in Keystone mode (real Keystone 30 under uWSGI, sim provider).
#
# Usage: tests/conformance/run.sh [REGEX]      (default: senlin_tempest_plugin.tests.api)
#        CONF_SUITE=senlinclient tests/conformance/run.sh [REGEX]
#   runs python-senlinclient 3.1.0's own functional suite (its `openstack cluster ...` commands
#   through tempest.lib's CLI runner, from the sdist) against the same Shoal and Keystone,
#   instead of the plugin; prints its count, with no threshold (issue 38, item 6).
# Prints the time of each phase, "N passed, N failed, N skipped", and exits 1 when fewer than
# CONF_THRESHOLD pass, 2 when a service could not be set up, 124 past CONF_TIMEOUT. `make check`
# runs it last (scripts/check.sh); results/failed.txt lists what did not pass and why,
# results/durations.txt where the time went.
# Knobs (env): CONF_ROOT (scratch, default $TMPDIR/shoal-conformance), CONF_CACHE (venvs, reused;
#   default ~/.cache/shoal-conformance; installed when absent), CONF_THRESHOLD (291),
#   CONF_TIMEOUT (2400 s for the whole run), TP_CONCURRENCY (4 tempest workers),
#   TP_NUM_ACCOUNTS (accounts of each kind, default max(TP_CONCURRENCY, 4)),
#   CONF_CREATE_LATENCY (7 s per server build in the sim provider), KS_PORT / SHOAL_CONF_PORT
#   (default: free ports), SHOAL_BIN (default: the repo's .venv/bin/shoal).
# The recipes are copied from ../shared/peers/{keystone,tempest} (read-only in CI): everything is
# written under CONF_ROOT and CONF_CACHE, and only the processes started here are stopped, on
# every way out (the end, a failure, the timeout, INT/TERM).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# A global bound, so CI never hangs here: the script re-runs itself under `timeout`, which on
# expiry signals the whole process group (tempest's workers, Keystone, shoal) and kills it
# CONF_KILL_AFTER seconds later if something ignores the signal.
# `timeout` runs in its own process group, out of reach of a terminal's Ctrl-C: this passes an
# INT or TERM on to it (it forwards them to the group).
if [ -z "${CONF_UNDER_TIMEOUT:-}" ]; then
  limit=${CONF_TIMEOUT:-2400}
  CONF_UNDER_TIMEOUT=1 timeout --kill-after="${CONF_KILL_AFTER:-60}" "$limit" "$0" "$@" &
  guard=$!
  trap 'kill -TERM "$guard" 2>/dev/null' INT TERM
  while :; do
    wait "$guard"; rc=$?
    kill -0 "$guard" 2>/dev/null || break  # wait returned early for a trapped signal
  done
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "conformance: timed out after ${limit}s" >&2; fi
  exit "$rc"
fi
REPO=$(cd "$HERE/../.." && pwd)
REGEX=${1:-senlin_tempest_plugin.tests.api}
ROOT=${CONF_ROOT:-${TMPDIR:-/tmp}/shoal-conformance}
CACHE=${CONF_CACHE:-$HOME/.cache/shoal-conformance}
THRESHOLD=${CONF_THRESHOLD:-291}
CONC=${TP_CONCURRENCY:-4}
SHOAL_BIN=${SHOAL_BIN:-$REPO/.venv/bin/shoal}
PY=${PYTHON:-python3}
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
KS_PORT=${KS_PORT:-$(free_port)}
SVC_PORT=${SHOAL_CONF_PORT:-$(free_port)}
ADMIN_PW=secretadmin SERVICE_PW=secretservice
export KS_PORT KS_SVC_PORT=$SVC_PORT KS_ADMIN_PASSWORD=$ADMIN_PW KS_SERVICE_PASSWORD=$SERVICE_PW
export KS_SVC_URL="http://127.0.0.1:$SVC_PORT/clustering"
export TP_NUM_ACCOUNTS=${TP_NUM_ACCOUNTS:-$(( CONC > 4 ? CONC : 4 ))}
export TP_USER_PASSWORD=secretmember TP_ADMIN2_PASSWORD=secrettadmin TP_REGION=RegionOne
KS_VENV=$CACHE/keystone-30 TP_VENV=$CACHE/tempest-47
SUITE=${CONF_SUITE:-tempest}
SC_VENV=$CACHE/senlinclient-3.1.0 SC_SRC=$CACHE/senlinclient-3.1.0/src
STATE=$ROOT/keystone WS=$ROOT/tempest/senlin RESULTS=${TP_RESULTS:-$ROOT/results}
. "$HERE/lib.sh"  # ts, until_up, venv
T0=$(ts)

KS_PID="" SHOAL_PID="" ks_job="" ws_job="" fernet_job="" cred_job=""
stop() {
  local pid
  for pid in $ks_job $ws_job $fernet_job $cred_job; do  # setup steps still running on a failure
    kill -0 "$pid" 2>/dev/null || continue
    pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null
  done
  for pid in $SHOAL_PID $KS_PID; do
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
trap stop EXIT
trap 'exit 143' TERM INT  # bash runs the EXIT trap on exit, not on a signal it dies of
rm -rf "$ROOT"; mkdir -p "$ROOT" "$CACHE" "$RESULTS"

# 1. venvs (cached), both at once: keystone + uwsgi (compiled); tempest + the plugin
#    (openstacksdk comes with them). A venv counts as installed only when pip succeeded.
venv "$KS_VENV" keystone==30.0.0 uwsgi & ks_job=$!
venv "$TP_VENV" -c "$HERE/constraints.txt" tempest==47.0.0 senlin-tempest-plugin==1.8.0
if [ "$SUITE" = senlinclient ]; then
  # the client with its `openstack cluster` commands, tempest.lib for its test base; its
  # functional tests ship only in the sdist. The OpenStack client of its release (2023.2):
  # osc-lib 3 and later refuse senlinclient's function formatters ("Invalid formatter
  # provided." on every `show`).
  venv "$SC_VENV" -c "$HERE/constraints.txt" python-openstackclient==6.3.0 osc-lib==2.8.1 \
    python-senlinclient==3.1.0 tempest==47.0.0 stestr ||
    { echo "senlinclient venv install failed" >&2; exit 2; }
  if [ ! -d "$SC_SRC/senlinclient/tests/functional" ]; then
    rm -rf "$SC_SRC" && mkdir -p "$SC_SRC" &&
      "$SC_VENV/bin/pip" download -q --no-deps --no-binary :all: python-senlinclient==3.1.0 \
        -d "$SC_SRC/sdist" &&
      tar -xzf "$SC_SRC"/sdist/python-senlinclient-3.1.0.tar.gz -C "$SC_SRC" --strip-components=1 ||
      { echo "python-senlinclient sdist unavailable" >&2; exit 2; }
  fi
fi
wait "$ks_job"
[ -f "$KS_VENV/.done" ] && [ -f "$TP_VENV/.done" ] || { echo "venv install failed" >&2; exit 2; }
echo "== venvs ready: $(( $(ts) - T0 ))s"

# 2. shoal server in keystone mode (it asks Keystone nothing until the first request, so it
#    starts while Keystone is set up), sim provider, an inventory with the plugin's defaults
#    (and the flavor and image test_cluster_update_profile changes a cluster to)
mkdir -p "$ROOT/shoal"
cat > "$ROOT/shoal/inventory.yaml" <<'INV'
zones: [nova]
hosts:
  - {name: h1, zone: nova, vcpus: 256, ram_mb: 524288, disk_gb: 10000, volume_gb: 10000}
  - {name: h2, zone: nova, vcpus: 256, ram_mb: 524288, disk_gb: 10000, volume_gb: 10000}
flavors:
  - {id: "1", name: m1.tiny, vcpus: 1, ram_mb: 512, disk_gb: 1}
  - {id: "2", name: m1.small, vcpus: 1, ram_mb: 2048, disk_gb: 20}
  - {id: new_flavor, name: new_flavor, vcpus: 1, ram_mb: 512, disk_gb: 1}
images:
  - {name: cirros-0.4.0-x86_64-disk, min_disk_gb: 1}
  - {name: new_image, min_disk_gb: 1}
INV
# A server takes CONF_CREATE_LATENCY (7) s to build, as a small one does in a cloud: the
# plugin's locked-cluster test (TestClusterScaleOutNegativeResourceIsLocked) sleeps 5 s after a
# scale-out and expects it still running. Token validations may wait for Keystone up to 120 s
# (on a loaded machine it answers in seconds; a timeout is a 401 in some test) and are cached
# for an hour.
SHOAL_HOME=$ROOT/shoal SHOAL_PROVIDER=sim SHOAL_INVENTORY=$ROOT/shoal/inventory.yaml \
  SHOAL_PROVIDER_OPTIONS="{\"create_latency_s\": ${CONF_CREATE_LATENCY:-7}}" \
  SHOAL_AUTH=keystone SHOAL_KEYSTONE_URL="http://127.0.0.1:$KS_PORT/v3" \
  SHOAL_KEYSTONE_PASSWORD=$SERVICE_PW SHOAL_KEYSTONE_CACHE_S=3600 \
  SHOAL_KEYSTONE_TIMEOUT_S=120 SHOAL_RETRY_BACKOFF_S=0.05 \
  "$SHOAL_BIN" server --port "$SVC_PORT" --log-level warning > "$ROOT/shoal/server.log" 2>&1 &
SHOAL_PID=$!

# 3. the tempest workspace and its test list, meanwhile too
mkdir -p "$(dirname "$WS")"
{ "$TP_VENV/bin/tempest" init --workspace-path "$ROOT/tempest/workspace.yaml" \
    --name shoal-senlin "$WS" > /dev/null &&
  (cd "$WS" && "$TP_VENV/bin/tempest" run --regex "$REGEX" --list-tests) \
    | grep -E '^[a-z_]+(\.[A-Za-z0-9_]+)+' > "$RESULTS/test-ids.txt"
} 2> "$ROOT/tempest/init.err" & ws_job=$!

# 4. keystone: fresh state, bootstrap, uwsgi (HTTP/1.1: HTTP/1.0 breaks reused connections);
#    the key repositories and the database are independent, so set up at once
mkdir -p "$STATE"
sed "s#@KS_STATE@#$STATE#g" "$HERE/keystone.conf.tmpl" > "$STATE/keystone.conf"
KM=("$KS_VENV/bin/keystone-manage" --config-file "$STATE/keystone.conf")
U=$(id -un) G=$(id -gn)
"${KM[@]}" fernet_setup --keystone-user "$U" --keystone-group "$G" > "$STATE/fernet.log" 2>&1 &
fernet_job=$!
"${KM[@]}" credential_setup --keystone-user "$U" --keystone-group "$G" \
  > "$STATE/credential.log" 2>&1 & cred_job=$!
{ "${KM[@]}" db_sync > "$STATE/setup.log" 2>&1 && wait "$fernet_job" && wait "$cred_job" &&
  "${KM[@]}" bootstrap --bootstrap-password "$ADMIN_PW" \
    --bootstrap-admin-url "http://127.0.0.1:$KS_PORT/v3" \
    --bootstrap-internal-url "http://127.0.0.1:$KS_PORT/v3" \
    --bootstrap-public-url "http://127.0.0.1:$KS_PORT/v3" --bootstrap-region-id RegionOne \
    >> "$STATE/setup.log" 2>&1
} || { tail -20 "$STATE"/*.log >&2; exit 2; }
OS_KEYSTONE_CONFIG_DIR=$STATE "$KS_VENV/bin/uwsgi" --http11-socket "127.0.0.1:$KS_PORT" \
  --wsgi keystone.wsgi.api:application --master --processes 2 --threads 4 --enable-threads \
  --lazy-apps --die-on-term --need-app --buffer-size 65535 \
  --env "OS_KEYSTONE_CONFIG_DIR=$STATE" > "$STATE/uwsgi.log" 2>&1 &
KS_PID=$!
until_up 300 curl -sf -o /dev/null "http://127.0.0.1:$KS_PORT/v3" ||
  { tail -20 "$STATE/uwsgi.log" >&2; exit 2; }
"$TP_VENV/bin/python" "$HERE/register.py" || exit 2
echo "== keystone on :$KS_PORT: $(( $(ts) - T0 ))s"

svc_up() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$KS_SVC_URL/")" = 300 ]; }
until_up 300 svc_up || { tail -20 "$ROOT/shoal/server.log" >&2; exit 2; }
echo "== shoal on :$SVC_PORT: $(( $(ts) - T0 ))s"

# 5. pre-provisioned accounts, tempest.conf
wait "$ws_job" && [ -s "$RESULTS/test-ids.txt" ] || { cat "$ROOT/tempest/init.err" >&2; exit 2; }
"$TP_VENV/bin/python" "$HERE/provision.py" "$WS/etc/accounts.yaml" || exit 2
# stestr splits the test classes among its workers by their times in the last run (without
# them, by count, and one worker may get most of the slow classes): keep them between runs.
TIMES=$CACHE/stestr-times
[ -f "$TIMES/times.dbm.dir" ] && cp "$TIMES"/times.dbm.* "$WS/.stestr/"
cat > "$WS/etc/tempest.conf" <<CONF
[DEFAULT]
log_dir = $WS/logs
log_file = tempest.log
use_stderr = False

[oslo_concurrency]
lock_path = $WS/tempest_lock

[service-clients]
# a loaded machine's Keystone answers a token request in seconds, now and then in tens
http_timeout = 300

[auth]
use_dynamic_credentials = False
test_accounts_file = $WS/etc/accounts.yaml
default_credentials_domain_name = Default
create_isolated_networks = False

[identity]
uri_v3 = http://127.0.0.1:$KS_PORT/v3
auth_version = v3
region = RegionOne
v3_endpoint_type = public
catalog_type = identity

[identity-feature-enabled]
security_compliance = False

[service_available]
senlin = True
nova = False
neutron = False
glance = False
cinder = False
swift = False
horizon = False

[validation]
run_validation = False

[clustering]
catalog_type = clustering
min_microversion = 1.0
max_microversion = 1.14
wait_timeout = 180
delete_with_dependency = False
health_policy_version = 1.0
CONF
echo "== tempest workspace and accounts: $(( $(ts) - T0 ))s"

# 6. the run
if [ "$SUITE" = senlinclient ]; then
  # python-senlinclient's functional suite as its tox env runs it (stestr over
  # senlinclient/tests/functional, OS_* for one member account, the CLI from the venv)
  cd "$SC_SRC" || exit 2
  T1=$(ts)
  rm -rf .stestr
  OS_AUTH_URL="http://127.0.0.1:$KS_PORT/v3" OS_USERNAME=tempest-member-1 \
    OS_PASSWORD=$TP_USER_PASSWORD OS_PROJECT_NAME=tempest-member-1 \
    OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_IDENTITY_API_VERSION=3 \
    OS_REGION_NAME=$TP_REGION OS_SENLINCLIENT_EXEC_DIR="$SC_VENV/bin" \
    "$SC_VENV/bin/stestr" --test-path ./senlinclient/tests/functional --top-dir ./ \
    run --concurrency "$CONC" ${1:+"$1"} > "$RESULTS/senlinclient-console.txt" 2>&1
  "$SC_VENV/bin/stestr" last --subunit > "$RESULTS/senlinclient.subunit" 2>/dev/null
  "$SC_VENV/bin/stestr" --test-path ./senlinclient/tests/functional --top-dir ./ list \
    ${1:+"$1"} 2>/dev/null | grep -E '^senlinclient\.' > "$RESULTS/senlinclient-ids.txt"
  echo "== senlinclient functional run: $(( $(ts) - T1 ))s"
  line=$("$TP_VENV/bin/python" "$HERE/summarize.py" "$RESULTS/senlinclient.subunit" \
    "$RESULTS/senlinclient-ids.txt" "$RESULTS/senlinclient-summary.txt" | tail -1)
  "$TP_VENV/bin/python" "$HERE/failures.py" "$RESULTS/senlinclient.subunit" \
    "$RESULTS/senlinclient-ids.txt" > "$RESULTS/senlinclient-failed.txt"
  cp "$ROOT/shoal/server.log" "$RESULTS/" 2>/dev/null
  echo "senlinclient functional: $line"
  echo "== total: $(( $(ts) - T0 ))s; results in $RESULTS (senlinclient-*.txt)"
  exit 0
fi
cd "$WS" || exit 2
T1=$(ts)
"$TP_VENV/bin/tempest" run --regex "$REGEX" --concurrency "$CONC" > "$RESULTS/console.txt" 2>&1
echo "== tempest run: $(( $(ts) - T1 ))s ($(wc -l < "$RESULTS/test-ids.txt") tests, concurrency $CONC)"
"$TP_VENV/bin/stestr" last --subunit > "$RESULTS/last.subunit" 2>/dev/null
mkdir -p "$TIMES" && cp "$WS/.stestr"/times.dbm.* "$TIMES/"
"$TP_VENV/bin/python" "$HERE/durations.py" "$RESULTS/last.subunit" > "$RESULTS/durations.txt" 2>&1
head -1 "$RESULTS/durations.txt"
cp "$WS/logs/tempest.log" "$ROOT/shoal/server.log" "$RESULTS/" 2>/dev/null
line=$("$TP_VENV/bin/python" "$HERE/summarize.py" "$RESULTS/last.subunit" "$RESULTS/test-ids.txt" \
  "$RESULTS/summary.txt" | tail -1)
"$TP_VENV/bin/python" "$HERE/failures.py" "$RESULTS/last.subunit" "$RESULTS/test-ids.txt" \
  > "$RESULTS/failed.txt"
echo "$line"
echo "== total: $(( $(ts) - T0 ))s; results in $RESULTS (summary.txt, console.txt, tempest.log)"
passed=${line%% passed*}
[ "$REGEX" != senlin_tempest_plugin.tests.api ] && exit 0
[ "${passed:-0}" -ge "$THRESHOLD" ] || { echo "below the threshold: $passed < $THRESHOLD" >&2; exit 1; }
