"""The real openstacksdk against a real uvicorn server on loopback, talking to /clustering/v1.

openstacksdk needs no Keystone here: `auth_type="none"` with `clustering_endpoint_override`.
The `none` plugin sends `X-Auth-Token: notused` and a session's `additional_headers` never
override an auth header, so the admin token travels as `Authorization: Bearer`, which Shoal
prefers over X-Auth-Token.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openstack
import pytest
import uvicorn
from openstack import exceptions
from openstack.connection import Connection

from shoal.api.app import create_app
from shoal.runtime import Runtime
from tests.senlin.conftest import NOVA_SPEC, settings
from tests.support.server import free_port

WAIT_S = 60


class LiveServer:
    """Shoal under uvicorn in a thread with its own event loop; the engine runs in its lifespan."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.token: str | None = None
        self.server: uvicorn.Server | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="shoal-uvicorn", daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            runtime = await Runtime.open(settings(self.home))
            self.token = runtime.new_admin_token
            config = uvicorn.Config(
                create_app(runtime, run_engine=True),
                host="127.0.0.1",
                port=self.port,
                log_level="warning",
                lifespan="on",
            )
            self.server = uvicorn.Server(config)
            try:
                await self.server.serve()
            finally:
                await runtime.close()

        try:
            asyncio.run(main())
        except BaseException as e:  # reported by start() or stop()
            self.error = e

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not (self.server is not None and self.server.started):
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "uvicorn did not stop"
        assert self.error is None, self.error


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "home").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def conn(live: LiveServer) -> Iterator[Connection]:
    connection = openstack.connect(
        auth_type="none",
        clustering_endpoint_override=f"http://127.0.0.1:{live.port}/clustering/v1",
        load_yaml_config=False,
        load_envvars=False,
    )
    assert live.token is not None
    connection.session.additional_headers["Authorization"] = f"Bearer {live.token}"
    try:
        yield connection
    finally:
        connection.close()


def wait_action(conn: Connection, answer: dict[str, Any]) -> Any:
    action = conn.clustering.get_action(answer["action"])
    return conn.clustering.wait_for_status(
        action, "SUCCEEDED", failures=["FAILED", "CANCELLED"], interval=0.1, wait=WAIT_S
    )


def test_openstacksdk_drives_a_cluster_end_to_end(conn: Connection) -> None:
    c = conn.clustering
    assert {t.name for t in c.profile_types()} >= {"os.nova.server-1.0", "os.heat.stack-1.0"}
    assert c.get_build_info().api["revision"].startswith("shoal-")

    validated = c.validate_profile(spec=NOVA_SPEC)
    assert validated.type == "os.nova.server-1.0"
    profile = c.create_profile(name="web", spec=NOVA_SPEC, metadata={"owner": "ops"})
    assert profile.type == "os.nova.server-1.0"
    assert c.get_profile(profile.id).spec == NOVA_SPEC
    renamed = c.update_profile(profile, name="web-v1")
    assert renamed.name == "web-v1"

    cluster = c.create_cluster(
        name="web", profile_id=profile.id, desired_capacity=2, min_size=1, max_size=6
    )
    assert cluster.id
    cluster = c.wait_for_status(cluster, "ACTIVE", failures=["ERROR"], interval=0.1, wait=WAIT_S)
    assert len(cluster.node_ids) == 2
    assert cluster.profile_name == "web-v1"

    wait_action(conn, c.scale_out_cluster(cluster, 2))
    cluster = c.get_cluster(cluster.id)
    assert (cluster.desired_capacity, len(cluster.node_ids)) == (4, 4)

    wait_action(conn, c.scale_in_cluster(cluster, 1))
    wait_action(
        conn, c.resize_cluster(cluster, adjustment_type="EXACT_CAPACITY", number=2, strict=True)
    )
    cluster = c.get_cluster("web")
    assert (cluster.desired_capacity, len(cluster.node_ids), cluster.status) == (2, 2, "ACTIVE")
    nodes = list(c.nodes(cluster_id=cluster.id))
    assert sorted(n.id for n in nodes) == sorted(cluster.node_ids)
    assert c.get_node(nodes[0].id).status == "ACTIVE"
    assert any(a.action == "CLUSTER_RESIZE" for a in c.actions(target=cluster.id))
    assert any(e.obj_type == "CLUSTER" for e in c.events(cluster_id=cluster.id))

    policy = c.create_policy(
        name="oldest-first",
        spec={
            "type": "senlin.policy.deletion",
            "version": "1.1",
            "properties": {"criteria": "OLDEST_FIRST"},
        },
    )
    wait_action(conn, c.attach_policy_to_cluster(cluster, policy.id))
    (binding,) = c.cluster_policies(cluster)
    assert (binding.policy_name, binding.is_enabled) == ("oldest-first", True)
    wait_action(conn, c.detach_policy_from_cluster(cluster, policy.id))
    c.delete_policy(policy)

    receiver = c.create_receiver(
        name="grow",
        cluster_id=cluster.id,
        type="webhook",
        action="CLUSTER_SCALE_OUT",
        params={"count": 1},
    )
    fired = httpx.post(receiver.channel["alarm_url"], timeout=10)  # no token: the URL is it
    assert fired.status_code == 202, fired.text
    wait_action(conn, fired.json())
    assert c.get_cluster(cluster.id).desired_capacity == 3
    c.delete_receiver(receiver)
    wait_action(conn, c.scale_in_cluster(cluster, 1))

    # Cluster actions hand back the answer's JSON without raising: Senlin's error body.
    refused = c.scale_out_cluster(cluster, 10)  # past max_size
    assert refused["code"] == 400 and refused["error"]["type"] == "BadRequest"
    assert "max_size (6)" in refused["error"]["message"]
    with pytest.raises(exceptions.NotFoundException):
        c.get_cluster("no-such-cluster")
    with pytest.raises(exceptions.ConflictException):
        c.delete_profile(profile)  # still used by the cluster

    deletion = c.delete_cluster(cluster)
    assert deletion is not None and deletion.id
    c.wait_for_delete(cluster, interval=0.1, wait=WAIT_S)
    with pytest.raises(exceptions.NotFoundException):
        c.get_cluster(cluster.id)
    c.delete_profile(profile)
    assert list(c.profiles()) == []
