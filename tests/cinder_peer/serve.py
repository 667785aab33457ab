#!/usr/bin/env python3
# ruff: noqa: E402, UP031
"""Run a REAL OpenStack Cinder (API + scheduler + volume) in ONE process on
127.0.0.1:PORT, with no Keystone, no LVM/iSCSI, no RabbitMQ.

  /tmp/cinder-venv/bin/python serve.py --port 8776

Pieces (all from the PyPI `cinder` wheel, nothing mocked in the API path):
  * API: the real paste pipeline `osapi_volume` from etc/cinder/api-paste.ini,
    `[DEFAULT] auth_strategy = noauth` (cinder.api.middleware.auth.NoAuthMiddleware).
    NoAuth wants a header `X-Auth-Token: USER:PROJECT`; a request WITHOUT it
    gets an empty 204 (the old "auth 1.1" handshake).  Unless
    --no-default-token, a tiny WSGI wrapper sets `X-Auth-Token:
    admin:<project>` when the client sent none or keystoneauth's placeholder
    'notused', so openstacksdk auth_type='none' works (and its unauthenticated
    version discovery GET /v3 gets the version document, not a 204).
    Unless --no-service-token-role, the same wrapper gives a request that
    carries `X-Service-Token` (but no `X-Service-Roles`) the role `service`,
    as keystonemiddleware would after validating a service token: that is
    what lets Nova (tests/nova/cloud.py --cinder, which sends a service
    token) delete a connected attachment (Cinder's Bug #2004555 guard).
  * DB: SQLite file under a temp dir, schema by `cinder-manage db sync`.
  * RPC: oslo.messaging `fake:/` (in-memory; works because all three
    services live in this one process).
  * Volume backend 'fake': cinder.tests.fake_driver.FakeLoggingVolumeDriver
    (LVM driver subclass whose execute() is a no-op), target_helper=fake.

Prints `READY http://127.0.0.1:PORT/v3/<project_id>` once the API answers and
the scheduler knows the backend's pool, then serves until killed.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, default=8776)
p.add_argument("--host", default="127.0.0.1")
p.add_argument(
    "--project",
    default="5d4c3b2a10f94e8d8c7b6a5f4e3d2c1b",
    help="project id used in the READY url / default token; "
    "must match cinder's project_id_regex [0-9a-f-]+ "
    "(anything else 404s)",
)
p.add_argument(
    "--state-dir", default=None, help="dir for cinder.conf, sqlite file, locks (default: temp)"
)
p.add_argument(
    "--no-default-token",
    dest="default_token",
    action="store_false",
    help="do not inject X-Auth-Token admin:<project> when absent",
)
p.add_argument(
    "--no-service-token-role",
    dest="service_token_role",
    action="store_false",
    help="do not map X-Service-Token to X-Service-Roles: service",
)
p.add_argument("--debug", action="store_true")
p.add_argument("--log-file", default=None, help="cinder log file (default: <state-dir>/cinder.log)")
ARGS = p.parse_args()
sys.argv = sys.argv[:1]

# --- monkey patch first, exactly like cinder/cmd/*.py ---------------------
import warnings

warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
from cinder import monkey_patch

monkey_patch.patch()

import eventlet
from cinder import (
    coordination,
    i18n,  # noqa: F401
    objects,
    rpc,
    service,
    version,
)
from cinder.cmd import volume as cmd_volume
from cinder.common import (
    config,
    constants,
)
from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service as oslo_service

CONF = cfg.CONF
VENV = sys.prefix
ETC = os.path.join(VENV, "etc", "cinder")  # where the wheel puts data files
BACKEND = "fake"


def write_conf(state):
    locks = os.path.join(state, "locks")
    os.makedirs(locks, exist_ok=True)
    log_file = ARGS.log_file or os.path.join(state, "cinder.log")
    conf = f"""
[DEFAULT]
auth_strategy = noauth
transport_url = fake:/
state_path = {state}
api_paste_config = {ETC}/api-paste.ini
resource_query_filters_file = {ETC}/resource_filters.json
osapi_volume_listen = {ARGS.host}
osapi_volume_listen_port = {ARGS.port}
osapi_volume_workers = 1
enabled_backends = {BACKEND}
default_volume_type = __DEFAULT__
host = cinder-peer
debug = {ARGS.debug}
log_file = {log_file}
use_stderr = false
# report/periodic loops: keep them but not too chatty
report_interval = 10
periodic_interval = 60
periodic_fuzzy_delay = 0
[{BACKEND}]
volume_driver = cinder.tests.fake_driver.FakeLoggingVolumeDriver
volume_backend_name = {BACKEND}
target_helper = fake
[database]
connection = sqlite:///{state}/cinder.sqlite
sqlite_synchronous = false
[oslo_concurrency]
lock_path = {locks}
[coordination]
backend_url = file://{locks}
[oslo_messaging_notifications]
driver = noop
"""
    path = os.path.join(state, "cinder.conf")
    with open(path, "w") as f:
        f.write(conf)
    return path


class DefaultToken:
    """Set X-Auth-Token admin:<project> when the client sent none, or sent
    keystoneauth's placeholder 'notused' (what openstacksdk auth_type='none'
    sends; NoAuth would turn it into user=project='notused' and every
    /v3/<project>/... call would 400 'Malformed request url')."""

    def __init__(self, app, token, service_role=None):
        self.app, self.token, self.service_role = app, token, service_role

    def __call__(self, environ, start_response):
        if self.token and environ.get("HTTP_X_AUTH_TOKEN", "notused") == "notused":
            environ["HTTP_X_AUTH_TOKEN"] = self.token
        if self.service_role and environ.get("HTTP_X_SERVICE_TOKEN"):
            environ.setdefault("HTTP_X_SERVICE_ROLES", self.service_role)
        return self.app(environ, start_response)


def wait_ready(url, timeout=120):
    import json
    import urllib.request

    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            req = urllib.request.Request(
                url + "/scheduler-stats/get_pools",
                headers={"X-Auth-Token": "admin:" + ARGS.project},
            )
            with urllib.request.urlopen(req, timeout=5) as r:
                pools = json.load(r).get("pools", [])
                if pools:
                    return pools
                last = "no pools yet"
        except Exception as e:
            last = repr(e)
        eventlet.sleep(0.2)
    raise SystemExit(f"not ready after {timeout}s: {last}")


def main():
    t0 = time.time()
    state = ARGS.state_dir or tempfile.mkdtemp(prefix="cinder-peer-")
    os.makedirs(state, exist_ok=True)
    conf_path = write_conf(state)

    # schema: the real CLI, in a subprocess (alembic migrations)
    subprocess.run(
        [os.path.join(VENV, "bin", "cinder-manage"), "--config-file", conf_path, "db", "sync"],
        check=True,
        stdout=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONWARNINGS="ignore"),
    )
    t_db = time.time()

    objects.register_all()
    CONF(["--config-file", conf_path], project="cinder", version=version.version_string())
    config.set_middleware_defaults()
    logging.setup(CONF, "cinder")
    coordination.COORDINATOR.start()
    rpc.init(CONF)

    launcher = oslo_service.ServiceLauncher(CONF, restart_method="mutate")

    sched = service.Service.create(binary=constants.SCHEDULER_BINARY)
    launcher.launch_service(sched)

    CONF.register_opt(cmd_volume.host_opt, group=BACKEND)
    vol = service.Service.create(
        host=f"{CONF.host}@{BACKEND}",
        service_name=BACKEND,
        binary=constants.VOLUME_BINARY,
        coordination=True,
    )
    launcher.launch_service(vol)

    api = service.WSGIService("osapi_volume")
    if ARGS.default_token or ARGS.service_token_role:
        api.server.app = DefaultToken(
            api.app,
            "admin:" + ARGS.project if ARGS.default_token else None,
            "service" if ARGS.service_token_role else None,
        )
    launcher.launch_service(api)

    url = "http://%s:%d/v3/%s" % (ARGS.host, ARGS.port, ARGS.project)

    def _ready():
        pools = wait_ready(url)
        print(
            "startup: db sync {:.1f}s, services+first pool {:.1f}s; pools={}".format(
                t_db - t0, time.time() - t_db, [pl["name"] for pl in pools]
            ),
            file=sys.stderr,
            flush=True,
        )
        print("READY " + url, flush=True)
        print("state dir: " + state, file=sys.stderr, flush=True)

    eventlet.spawn(_ready)
    launcher.wait()


if __name__ == "__main__":
    main()
