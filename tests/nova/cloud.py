# ruff: noqa: E402, I001
"""A real Nova on a loopback port, for Shoal's tests and benchmarks. Runs in Nova's own venv.

PyPI's `nova` wheel ships its functional-test harness: nova-api, conductor, scheduler (real
filters and weighers), Placement and fake-virt computes in one process, in-memory SQLite and the
`fake://` message bus. This script starts `--hosts` computes spread round-robin over `--zones`
availability zones (host aggregates named az1, az2, ...; hosts host001, ...), adds Shoal's
default catalog (flavors m1.tiny..m1.xlarge with ids 1..5, an image named `cirros`), serves the
compute API on 127.0.0.1:`--port` and prints `READY <url>` when it answers. It runs until it
is killed. Identity is stubbed: requests act as an admin of the harness's project unless they
send `X-Roles` (see `DefaultAuthHeaders`); `--tenant-port` serves the same cloud to a plain
member of the project (no admin role: no hypervisors, no forced hosts). Glance and Neutron are
the harness's stand-ins, so servers boot with `"networks": "none"`, unless `--neutron URL`
(a real Neutron, ../netpeers/neutron_serve.py, serving this cloud's project): then Nova's real
Neutron client talks to it (`[neutron] auth_type = none`, `endpoint_override = URL`, no
catalog, no Keystone) and the compute manager binds the ports a server boots on to its host.

`--glance-port` serves the harness's images read-only in Glance v2's shape (`GlanceImages`),
for Senlin's engine, which validates a profile's image through the catalog's `image` service.

Volumes: by default there is no Cinder (and no CinderFixture), so volume calls fail. With
`--cinder URL` (e.g. `http://127.0.0.1:Q/v3/<project>` from ../cinder_peer/serve.py, started
with `--project` = this cloud's project id) Nova's real Cinder client talks to that endpoint:
`[cinder] endpoint_template = URL` (no service catalog), `[cinder] auth_type = none` for
token-less admin contexts, and `[service_user] send_service_user_token = true` with
`auth_type = none`, so every call carries `X-Service-Token` (serve.py turns that into the
`service` role, which Cinder requires to delete a connected attachment). Requests to this API
that send no `X-Auth-Token` get `admin:<project>`, Cinder noauth's token format (a token a
client sends is forwarded to Cinder as is: send none, `notused` or `admin:<project>`). Attach and
detach then run the real compute-manager flow (attachment create/update/complete/delete)
against the FakeDriver, whose volume connector is a constant (no os-brick).

Adapted from the measured recipe in ../shared/peers/nova (place_bench.py, place_serve.py).
"""

import argparse
import os
import sys
import time

ARGS = argparse.Namespace()


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--hosts", type=int, default=6)
    p.add_argument("--zones", type=int, default=2)
    p.add_argument("--vcpus", type=int, default=16)
    p.add_argument("--ram-mb", type=int, default=65536)
    p.add_argument("--disk-gb", type=int, default=1000)
    p.add_argument(
        "--tenant-port",
        type=int,
        default=0,
        help="also serve the API here as a plain member of the project (no admin role)",
    )
    p.add_argument(
        "--glance-port",
        type=int,
        default=0,
        help="also serve the harness's images read-only, Glance v2 shaped, on this port",
    )
    p.add_argument(
        "--cinder",
        metavar="URL",
        default=None,
        help="Cinder v3 endpoint with project, e.g. http://127.0.0.1:18776/v3/<project>",
    )
    p.add_argument(
        "--neutron",
        metavar="URL",
        default=None,
        help="a real Neutron (noauth, serving this cloud's project), e.g. http://127.0.0.1:9696",
    )
    return p.parse_args()


ARGS = parse_args()
sys.argv = sys.argv[:1]  # nova's config parsing reads sys.argv
os.environ.setdefault("OS_TEST_TIMEOUT", "0")

# Importing nova.tests.functional monkey-patches eventlet first: keep this order.
from nova.tests import functional  # noqa: F401
from oslo_config import cfg

from nova import test
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import fixtures as func_fixtures
from nova.tests.functional import integrated_helpers
from nova.virt import fake

CONF = cfg.CONF
CIRROS = "6b8c1a3e-8a3e-4c7e-9d3c-3a6a0c2b1f00"
FLAVORS = (  # Shoal's default catalog (shoal.model.catalogs)
    ("1", "m1.tiny", 1, 512, 1),
    ("2", "m1.small", 1, 2048, 20),
    ("3", "m1.medium", 2, 4096, 40),
    ("4", "m1.large", 4, 8192, 80),
    ("5", "m1.xlarge", 8, 16384, 160),
)


class CloudDriver(fake.FakeDriver):
    vcpus = ARGS.vcpus
    memory_mb = ARGS.ram_mb
    local_gb = ARGS.disk_gb


def _load_driver(virtapi, compute_driver=None):
    return CloudDriver(virtapi)


class DefaultAuthHeaders:
    """Fills in the harness's identity headers for clients that send none (an admin)."""

    def __init__(self, app, project, token=None, roles="reader,member,admin", user="admin"):
        self.app, self.project, self.token = app, project, token
        self.roles, self.user = roles, user

    def __call__(self, environ, start_response):
        if self.token:  # becomes the context's auth_token, which Nova forwards to Cinder
            environ.setdefault("HTTP_X_AUTH_TOKEN", self.token)
        environ.setdefault("HTTP_X_AUTH_USER", self.user)
        environ.setdefault("HTTP_X_USER_ID", environ["HTTP_X_AUTH_USER"])
        environ.setdefault("HTTP_X_AUTH_PROJECT_ID", self.project)
        environ.setdefault("HTTP_X_ROLES", self.roles)
        answer = self.app(environ, start_response)
        _log_global_id(environ)
        return answer


def _log_global_id(environ):
    """Issue 27: the global request id Nova's API pipeline accepted for this request (its
    oslo.middleware request_id validates a caller's X-OpenStack-Request-ID and keeps it in
    `openstack.global_request_id`, from which Nova's Keystone context takes it and which Nova
    logs and forwards to Cinder, Neutron and Glance), written to this process's log: the
    harness keeps Nova's own log lines in memory (FakeLogger), and its noauth context does not
    copy the id."""
    global_id = environ.get("openstack.global_request_id")
    if global_id:
        print(
            f"nova request: global_request_id={global_id} "
            f"request_id={environ.get('openstack.request_id')} "
            f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}",
            file=sys.stderr,
            flush=True,
        )


class GlanceImages:
    """The harness's in-process image service, read-only over HTTP in Glance v2's shape, for
    a client that looks images up in Glance itself (Senlin's server profile does, through the
    catalog's `image` endpoint): the version document, `GET /v2/images[?name=]` and
    `GET /v2/images/{id}`. The same images Nova boots; no uploads, no other calls."""

    def __init__(self, glance, port):
        self.glance, self.root = glance, f"http://127.0.0.1:{port}"

    def _image(self, meta):
        return {
            "id": meta["id"],
            "name": meta.get("name"),
            "status": meta.get("status", "active"),
            "visibility": "public",
            "container_format": meta.get("container_format"),
            "disk_format": meta.get("disk_format"),
            "min_disk": meta.get("min_disk", 0),
            "min_ram": meta.get("min_ram", 0),
            "size": meta.get("size"),
            "tags": [],
            "self": f"/v2/images/{meta['id']}",
            "file": f"/v2/images/{meta['id']}/file",
            "schema": "/v2/schemas/image",
        }

    def __call__(self, environ, start_response):
        import json
        from urllib.parse import parse_qs

        path = environ["PATH_INFO"].rstrip("/")
        query = parse_qs(environ.get("QUERY_STRING", ""))
        status, body = "404 Not Found", {"message": "not found"}
        images = self.glance.images
        if path == "":
            link = {"rel": "self", "href": f"{self.root}/v2/"}
            status = "300 Multiple Choices"
            body = {"versions": [{"id": "v2.16", "status": "CURRENT", "links": [link]}]}
        elif path == "/v2/images":
            found = [
                m for m in images.values() if m.get("name") in query.get("name", [m.get("name")])
            ]
            status, body = "200 OK", {"images": [self._image(m) for m in found]}
        elif path.startswith("/v2/images/") and path.count("/") == 3:
            meta = images.get(path.rsplit("/", 1)[1])
            if meta is not None:
                status, body = "200 OK", self._image(meta)
        data = json.dumps(body).encode()
        start_response(
            status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        )
        return [data]


class _QuietLog:
    def write(self, *_a):
        pass


class Cloud(test.TestCase, integrated_helpers.InstanceHelperMixin):
    REQUIRES_LOCKING = True

    def setUp(self):
        super().setUp()
        for opt in ("instances", "cores", "ram", "server_groups", "server_group_members"):
            self.flags(**{opt: -1, "group": "quota"})
        self.flags(max_limit=100000, group="api")
        # The harness shares one executor among all in-process computes; size it as if each
        # compute had its own, or the default sizes throttle the whole cloud.
        self.flags(max_concurrent_builds=10 * max(1, ARGS.hosts))
        self.flags(update_resources_max_workers=max(1, ARGS.hosts), group="compute")
        self.flags(cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0, disk_allocation_ratio=1.0)
        self.stub_out("nova.virt.driver.load_compute_driver", _load_driver)
        self.useFixture(nova_fixtures.RealPolicyFixture())
        self.glance = self.useFixture(nova_fixtures.GlanceFixture(self))
        if ARGS.neutron:
            # Admin contexts without a token (the API's, below) use [neutron]'s own auth:
            # keystoneauth's noauth plugin, straight at the endpoint, no catalog.
            self.flags(auth_type="none", endpoint_override=ARGS.neutron, group="neutron")
            # A service token on every call, as Nova's service user sends: the test Neutron
            # gives it the `service` role, which unbinding a port on delete needs.
            self.flags(send_service_user_token=True, group="service_user")
            self.flags(auth_type="none", group="service_user")
        else:
            self.useFixture(nova_fixtures.NeutronFixture(self))
        self.useFixture(func_fixtures.PlacementFixture())
        self.useFixture(nova_fixtures.AllServicesCurrent())
        self.api_fixture = self.useFixture(nova_fixtures.OSAPIFixture(api_version="v2.1"))
        self.api = self.api_fixture.admin_api
        self.api.microversion = "latest"
        if ARGS.cinder:
            # The real cinderclient against a real Cinder (noauth): no catalog, no Keystone.
            self.flags(endpoint_template=ARGS.cinder, auth_type="none", group="cinder")
            self.flags(send_service_user_token=True, group="service_user")
            self.flags(auth_type="none", group="service_user")
        self.start_service("conductor")
        self.start_service("scheduler")
        if not os.environ.get("OS_DEBUG"):
            import logging

            logging.getLogger().setLevel(logging.WARNING)

    def test_serve(self):
        import eventlet
        from eventlet import wsgi as ewsgi
        from nova.tests.fixtures.nova import PROJECT_ID

        aggregates = []
        for z in range(ARGS.zones):
            name = f"az{z + 1}"
            agg = self.api.post_aggregate(
                {"aggregate": {"name": "agg-" + name, "availability_zone": name}}
            )
            aggregates.append(agg["id"])
        for i in range(ARGS.hosts):
            host = f"host{i + 1:03d}"
            self.start_service("compute", host=host)
            if aggregates:
                self.api.add_host_to_aggregate(aggregates[i % len(aggregates)], host)
        have = {f["name"] for f in self.api.get_flavors()}
        for fid, name, vcpus, ram, disk in FLAVORS:
            if name in have:  # the harness's database comes with Nova's classic flavors
                continue
            self.api.post_flavor(
                {"flavor": {"id": fid, "name": name, "vcpus": vcpus, "ram": ram, "disk": disk}}
            )
        self.glance.create(
            None,
            {
                "id": CIRROS,
                "name": "cirros",
                "status": "active",
                "container_format": "bare",
                "disk_format": "qcow2",
                "min_disk": 0,
                "properties": {},
            },
        )
        sock = eventlet.listen(("127.0.0.1", ARGS.port))
        token = ("admin:" + PROJECT_ID) if ARGS.cinder else None
        app = DefaultAuthHeaders(self.api_fixture.app(), PROJECT_ID, token)
        eventlet.spawn(ewsgi.server, sock, app, log=_QuietLog())
        if ARGS.tenant_port:
            member = DefaultAuthHeaders(
                self.api_fixture.app(), PROJECT_ID, token, roles="reader,member", user="tenant"
            )
            tenant_sock = eventlet.listen(("127.0.0.1", ARGS.tenant_port))
            eventlet.spawn(ewsgi.server, tenant_sock, member, log=_QuietLog())
        if ARGS.glance_port:
            glance_sock = eventlet.listen(("127.0.0.1", ARGS.glance_port))
            images = GlanceImages(self.glance, ARGS.glance_port)
            eventlet.spawn(ewsgi.server, glance_sock, images, log=_QuietLog())
        print(f"READY http://127.0.0.1:{ARGS.port}/v2.1 {PROJECT_ID}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    import unittest

    runner = unittest.TextTestRunner(verbosity=0, stream=sys.stderr)
    result = runner.run(unittest.TestSuite([Cloud("test_serve")]))
    sys.exit(0 if result.wasSuccessful() else 1)
