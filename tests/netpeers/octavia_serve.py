# ruff: noqa: E402, I001
"""A real Octavia 19 on a loopback port, for the openstack provider's tests. Runs in Octavia's
own venv (conftest.py builds it).

One process holds Octavia's real API (the pecan app of `octavia-api`, `auth_strategy =
noauth`) and its real v2 controller worker (the `octavia-worker` RPC endpoints, taskflow flows
run in-process, no jobboard), joined by oslo.messaging's `fake:/` bus (which only works because
both are in this process). The provider driver is the real `amphora` driver; below it the
worker's amphora, compute and network drivers are Octavia's own no-op drivers: flows run and
move load balancers, listeners, pools and members through PENDING_* to ACTIVE, but no amphora VM
is booted, no VIP port is made in Neutron (the no-op network driver invents one), and no health
manager runs, so members' operating status is never measured (it stays NO_MONITOR / OFFLINE).

The database is a MariaDB database of its own (`--db-url`), its schema made by Octavia's real
alembic migrations (`octavia-db-manage upgrade head`). Requests without `X-Project-Id` act in
`--project`. Prints `READY <url> <project>` when the API answers, and runs until killed.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import dbcache
import wsgiserve

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--db-url", required=True)
p.add_argument("--state-dir", required=True)
p.add_argument("--schema-cache", default=None, help="a dump of the migrated schema (dbcache.py)")
p.add_argument("--project", default="5d4c3b2a10f94e8d8c7b6a5f4e3d2c1b")
ARGS = p.parse_args()
STATE = Path(ARGS.state_dir)
CONF_FILE = STATE / "octavia.conf"
CA_CERT, CA_KEY = STATE / "ca.pem", STATE / "ca.key"
# The worker signs each amphora's certificate with a CA even when no amphora is booted.
subprocess.run(
    [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=octavia-peer-ca",
        "-keyout",
        str(CA_KEY),
        "-out",
        str(CA_CERT),
    ],
    check=True,
    capture_output=True,
)
CONF_FILE.write_text(
    f"""[DEFAULT]
transport_url = fake:/
log_file = {STATE / "octavia-service.log"}
debug = false
host = octavia-peer
[api_settings]
auth_strategy = noauth
bind_host = 127.0.0.1
bind_port = {ARGS.port}
enabled_provider_drivers = amphora: The Octavia amphora driver (no-op amphorae here)
default_provider_driver = amphora
[database]
connection = {ARGS.db_url}
[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = network_noop_driver
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
client_ca = {CA_CERT}
amp_active_retries = 3
amp_active_wait_sec = 1
[certificates]
ca_certificate = {CA_CERT}
ca_private_key = {CA_KEY}
server_certs_key_passphrase = shoal-octavia-peer-passphrase-32
[haproxy_amphora]
client_cert = {CA_CERT}
server_ca = {CA_CERT}
[task_flow]
jobboard_enabled = false
[oslo_concurrency]
lock_path = {STATE / "locks"}
[quotas]
default_load_balancer_quota = -1
default_listener_quota = -1
default_member_quota = -1
default_pool_quota = -1
default_health_monitor_quota = -1
"""
)
started = time.monotonic()
schema = dbcache.prepare(
    ARGS.db_url,
    Path(ARGS.schema_cache) if ARGS.schema_cache else None,
    [
        str(Path(sys.executable).parent / "octavia-db-manage"),
        "--config-file",
        str(CONF_FILE),
        "upgrade",
        "head",
    ],
)
migrated = time.monotonic()

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging.rpc import dispatcher

from octavia.api import app as api_app
from octavia.common import constants, rpc
from octavia.controller.queue.v2 import endpoints

application = api_app.setup_app(argv=["octavia-api", "--config-file", str(CONF_FILE)])
worker = rpc.get_server(
    messaging.Target(topic=constants.TOPIC_AMPHORA_V2, server=cfg.CONF.host, fanout=False),
    [endpoints.Endpoints()],
    access_policy=dispatcher.DefaultRPCAccessPolicy,
)
worker.start()


def with_project(environ, start_response):  # type: ignore[no-untyped-def]
    environ.setdefault("HTTP_X_PROJECT_ID", ARGS.project)
    return application(environ, start_response)


URL = wsgiserve.start(with_project, ARGS.port)
wsgiserve.ready(URL, ARGS.project, schema, started, migrated)
