# ruff: noqa: E402
"""A real Neutron 29 API server on a loopback port, for the openstack provider's tests. Runs
in Neutron's own venv (conftest.py builds it).

This is the WSGI application `neutron-api` serves under uWSGI (`neutron.wsgi.api`): the real
paste pipeline with `auth_strategy = noauth`, the ML2 core plugin (type drivers flat and vxlan,
one mechanism driver of the tests' own, `shoal_bind_any` in neutron_bind.py) and the L3 router
service plugin, served here by a threaded wsgiref server. No agents run (no DHCP, L3, OVS or
OVN), and RPC goes to oslo.messaging's `fake:/` bus, so: a port is bound only when a caller
(Nova) sets its `binding:host_id`, and then by `shoal_bind_any` (vif type ovs, status
`ACTIVE`, nothing wired); a port nobody binds stays `DOWN`; routers and floating IPs exist only
in Neutron's database (no namespace, no NAT), and security group rules are stored and validated
but enforced by nobody. Neutron does not notify Nova of port events (no `network-vif-plugged`;
Nova's fake virt driver waits for none). Everything Shoal and Nova talk to (the REST API, its
validation and policies, ML2's binding flow, IPAM, quotas, tags, the database) is Neutron's own.

The database is a MariaDB database of its own (`--db-url`), its schema made by Neutron's real
alembic migrations (`neutron-db-manage upgrade heads`). An external network `public`
(flat, `router:external`, subnet 203.0.113.0/24) is made at start for routers and floating
IPs. Requests without a token act as an admin of `--project` (noauth reads `X-Project-Id`;
peers.py passes the Nova harness's project, as Nova boots only on a port of the server's
project), and a request carrying `X-Service-Token` (Nova's) also has the `service` role.
Prints `READY <url> <project>` when the API answers, and runs until killed.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
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
VENV = Path(sys.prefix)
CONF_FILE = STATE / "neutron.conf"
ML2_FILE = STATE / "ml2_conf.ini"
PASTE_FILE = STATE / "api-paste.ini"
# Keystone bypassed, not Neutron's context: the `noauth` pipeline runs Neutron's own
# keystonecontext filter (the one after authtoken), which reads the identity headers that
# keystonemiddleware would have set; `as_admin` below sets them.
PASTE_FILE.write_text(
    (VENV / "etc" / "neutron" / "api-paste.ini")
    .read_text()
    .replace(
        "noauth = cors http_proxy_to_wsgi request_id fake_project_id catch_errors",
        "noauth = cors http_proxy_to_wsgi request_id catch_errors",
    )
    .replace(
        "osprofiler extensions neutronapiapp_v2_0\nkeystone",
        "osprofiler keystonecontext extensions neutronapiapp_v2_0\nkeystone",
    )
)
CONF_FILE.write_text(
    f"""[DEFAULT]
core_plugin = ml2
service_plugins = router
auth_strategy = noauth
transport_url = fake:/
api_paste_config = {PASTE_FILE}
state_path = {STATE}
log_file = {STATE / "neutron-service.log"}
debug = false
host = neutron-peer
allow_overlapping_ips = true
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
[database]
connection = {ARGS.db_url}
[oslo_concurrency]
lock_path = {STATE / "locks"}
[agent]
root_helper = true
[quotas]
quota_network = -1
quota_subnet = -1
quota_port = -1
quota_router = -1
quota_floatingip = -1
quota_security_group = -1
quota_security_group_rule = -1
"""
)
ML2_FILE.write_text(
    """[ml2]
type_drivers = flat,vxlan
tenant_network_types = vxlan
mechanism_drivers = shoal_bind_any
extension_drivers = port_security
[ml2_type_flat]
flat_networks = public
[ml2_type_vxlan]
vni_ranges = 1:100000
"""
)
# The binding driver (neutron_bind.py, beside this script) is found by ML2 through its entry
# point, as an installed driver would be: a distribution's metadata on the path.
DIST = STATE / "shoal_neutron_bind-1.0.dist-info"
DIST.mkdir()
(DIST / "METADATA").write_text("Metadata-Version: 2.1\nName: shoal-neutron-bind\nVersion: 1.0\n")
(DIST / "entry_points.txt").write_text(
    "[neutron.ml2.mechanism_drivers]\nshoal_bind_any = neutron_bind:BindAnyHost\n"
)
sys.path.insert(0, str(STATE))
started = time.monotonic()
schema = dbcache.prepare(
    ARGS.db_url,
    Path(ARGS.schema_cache) if ARGS.schema_cache else None,
    [
        str(VENV / "bin" / "neutron-db-manage"),
        "--config-file",
        str(CONF_FILE),
        "--config-file",
        str(ML2_FILE),
        "upgrade",
        "heads",
    ],
)
migrated = time.monotonic()

os.environ["OS_NEUTRON_CONFIG_DIR"] = str(STATE)
os.environ["OS_NEUTRON_CONFIG_FILES"] = f"{CONF_FILE.name};{ML2_FILE.name}"
sys.argv = sys.argv[:1]
from neutron import server
from neutron.server import api

application = server.boot_server(api.api_server, prog="neutron-api")


def as_admin(environ, start_response):  # type: ignore[no-untyped-def]
    environ.setdefault("HTTP_X_PROJECT_ID", ARGS.project)
    environ.setdefault("HTTP_X_USER_ID", "shoal-tests")
    # A caller that sends a service token (Nova, tests/nova/cloud.py --neutron) is a service:
    # Neutron lets only the `service` role write a port's `binding:profile`, which Nova's
    # unbind on a server's delete does.
    service = ",service" if environ.get("HTTP_X_SERVICE_TOKEN") else ""
    environ.setdefault("HTTP_X_ROLES", "admin,member,reader" + service)
    return application(environ, start_response)


URL = wsgiserve.start(as_admin, ARGS.port)


def post(path: str, body: dict[str, object]) -> dict[str, object]:
    req = urllib.request.Request(
        URL + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]
    except urllib.error.HTTPError as e:
        raise SystemExit(f"POST {path}: {e.code} {e.read().decode(errors='replace')}") from e


net = post(
    "/v2.0/networks",
    {
        "network": {
            "name": "public",
            "router:external": True,
            "provider:network_type": "flat",
            "provider:physical_network": "public",
            "shared": True,
        }
    },
)["network"]
post(
    "/v2.0/subnets",
    {
        "subnet": {
            "name": "public-subnet",
            "network_id": net["id"],  # type: ignore[index]
            "cidr": "203.0.113.0/24",
            "ip_version": 4,
        }
    },
)
wsgiserve.ready(URL, ARGS.project, schema, started, migrated)
