"""Replicas carried by the node-side agents (issue 22, point 6), without podman: the compose
config a replica becomes (names, env, restart, labels, `$`), the secrets' env file; the keeper
choosing the agent runtime on a provider without one of its own (`openstack`); and, on `sim`
with that path forced and a ManualClock on SQLite and PostgreSQL, a replica delivered into its
server's metadata (the secret there and in no stored row, event or view), started by its
signal, delivered again with a new generation when its run failed, and gone from the metadata
when scaled in."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from shoal.clock import ManualClock
from shoal.engine.agent_replicas import AgentReplicas, bare_address
from shoal.engine.software.urls import Urls
from shoal.engine.workloads import WorkloadKeeper
from shoal.model import replica_compose
from shoal.model.catalogs import synthetic_inventory
from shoal.model.software import DeploymentStatus
from shoal.model.workload_rollouts import ContainerRun, ReplicaTemplate
from shoal.model.workloads import RestartPolicy
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.replicas import carried_by_agents
from shoal.providers.sim.provider import SimProvider
from shoal.service.deployments import DeploymentService
from shoal.service.replicas import replicas as replicas_view
from shoal.store import agent_replicas as agent_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import events, rig_for, rows, settled

SECRET = "s3cret-'Value'-$x"


def _template() -> ReplicaTemplate:
    return ReplicaTemplate(
        "rev1",
        (
            ContainerRun(
                "api",
                "localhost/busybox:shoal",
                ("/bin/sh", "-c"),
                ("httpd -p $(SHOAL_NODE_ADDRESS):$(PORT) && echo $HOME",),
                env=(("PORT", "8081"), ("MODE", "a$b")),
                secret_env=(("PW", SECRET),),
                cpu_milli=250,
                memory_mb=64,
            ),
            ContainerRun("side car", "localhost/busybox:shoal"),
        ),
    )


def test_a_replica_renders_as_one_compose_project_with_a_service_per_container() -> None:
    got = replica_compose.render(
        "api-2",
        "cid/api-2",
        _template(),
        generation=3,
        delivery="0123456789abcdef",
        node_name="ctl-1",
        node_address="10.0.0.5",
        restart=RestartPolicy.ON_FAILURE,
    )
    assert got.project.startswith("shoal-replica-api-2-")
    assert got.project == replica_compose.project_name("api-2")
    assert replica_compose.project_name("Api-2") != got.project  # distinct per exact name
    assert set(got.config) == {"api", "side_car"}
    api = got.config["api"]
    assert isinstance(api, dict)
    assert api["image"] == "localhost/busybox:shoal"
    assert api["net"] == "host"
    assert api["restart"] == "on-failure"
    assert api["labels"] == {
        "shoal.replica": "cid/api-2",
        "shoal.generation": "3",
        "shoal.delivery": "0123456789abcdef",
        "shoal.revision": "rev1",
    }
    # Kubernetes' command/args are compose's entrypoint/command; $(VAR) expanded; $ doubled.
    assert api["entrypoint"] == ["/bin/sh", "-c"]
    assert api["command"] == ["httpd -p 10.0.0.5:8081 && echo $$HOME"]
    assert api["environment"] == {
        "SHOAL_NODE_ADDRESS": "10.0.0.5",
        "SHOAL_NODE_NAME": "ctl-1",
        "SHOAL_REPLICA": "api-2",
        "PORT": "8081",
        "MODE": "a$$b",
    }
    assert api["cpu_quota"] == 25_000 and api["mem_limit"] == "64m"
    assert api["env_file"] == ["env/api-0123456789ab.env"]  # never reused: a name per run
    assert got.secret_env == (("api", "PW"),)
    assert SECRET not in json.dumps(got.config)
    side = got.config["side_car"]
    assert isinstance(side, dict) and "env_file" not in side and "command" not in side
    never = replica_compose.render(
        "w-1",
        "c/w-1",
        ReplicaTemplate("r", (ContainerRun("c", "i"),)),
        generation=1,
        delivery="d",
        node_name="n",
        node_address="a",
        restart=RestartPolicy.NEVER,
    )
    assert never.config["c"]["restart"] == "no"  # type: ignore[index]


def test_secrets_reach_the_env_file_as_compose_reads_them() -> None:
    files = json.loads(
        replica_compose.secret_files((("api", "PW"),), {("api", "PW"): SECRET}, "run-1")
    )
    assert files == [{"file_name": "env/api-run-1.env", "content": "PW='s3cret-\\'Value\\'-$x'\n"}]
    bad = ReplicaTemplate("r", (ContainerRun("c", "i", secret_env=(("PW", "a${B}"),)),))
    with pytest.raises(replica_compose.UncarriableSecret) as e:
        replica_compose.render(
            "w-1",
            "c/w-1",
            bad,
            generation=1,
            delivery="d",
            node_name="n",
            node_address="a",
            restart=RestartPolicy.ALWAYS,
        )
    assert "PW" in str(e.value) and "a${B}" not in str(e.value)


def test_addresses_lose_their_port() -> None:
    assert bare_address("127.1.1.2:8080") == "127.1.1.2"
    assert bare_address("10.0.0.5") == "10.0.0.5"
    assert bare_address("[fd00::5]:80") == "fd00::5"
    assert bare_address("fd00::5") == "fd00::5"


class _Cloud:
    """What the keeper sees of `openstack`: no replica runtime, no simulated deployments (its
    servers' agents run them)."""

    name = "openstack"


def test_the_keeper_chooses_the_agents_where_the_provider_has_no_runtime() -> None:
    assert not hasattr(OpenStackProvider, "replicas")
    assert not hasattr(OpenStackProvider, "deployments")
    cloud: Any = _Cloud()
    assert carried_by_agents(cloud)
    keeper = WorkloadKeeper(_ctx(cloud))
    assert isinstance(keeper.runtime, AgentReplicas)
    assert keeper.runtime is keeper.runtime  # one, kept
    sim = SimProvider(synthetic_inventory(2, 1))
    assert not carried_by_agents(sim)
    assert not isinstance(WorkloadKeeper(_ctx(sim)).runtime, AgentReplicas)
    sim.replicas_via_agents = True  # (local's `replicas = "agents"`)
    assert isinstance(WorkloadKeeper(_ctx(sim)).runtime, AgentReplicas)


def _ctx(provider: Any) -> Any:
    class Ctx:
        pass

    ctx = Ctx()
    ctx.provider = provider  # type: ignore[attr-defined]
    return ctx


DOC = f"""
name: carried
parameters:
  pw: {{type: string, hidden: true, default: "{SECRET}"}}
node_groups:
  - name: ctl
    profile: {{type: server, flavor: m1.small, image: cirros}}
    count: 2
workloads:
  api:
    replicas: 2
    containers:
      - name: api
        image: img
        env: {{PW: {{secret: pw}}, MODE: a}}
    rules: [{{rule: anti-affinity, scope: node}}]
"""


def _served(db: Database, svc: DeploymentService, cid: str) -> dict[str, dict[str, Any]]:
    """Every replica entry of every server's metadata, by replica (as the agents read it)."""
    out: dict[str, dict[str, Any]] = {}
    with db.reading() as conn:
        found = node_repo.list_nodes(conn, cid)
    for n in found:
        meta = svc.metadata(n.id, svc.server_secret(n.id), Urls("http://shoal"))
        for entry in meta["deployments"]:  # type: ignore[union-attr]
            assert isinstance(entry, dict)
            if str(entry["name"]).startswith(replica_compose.PROJECT_PREFIX):
                labels = json.loads(str(entry["config"]))["api"]["labels"]
                out[labels["shoal.replica"].split("/", 1)[1]] = {**entry, "node": n.name}
    return out


def _signal(svc: DeploymentService, entry: dict[str, Any], code: int) -> DeploymentStatus:
    inputs = {i["name"]: i["value"] for i in entry["inputs"]}
    url = urlparse(inputs["deploy_signal_id"])
    token = parse_qs(url.query)["token"][0]
    body = json.dumps({"deploy_status_code": code, "deploy_stdout": "", "deploy_stderr": "x"})
    return svc.signal(url.path.rsplit("/", 1)[1], token, body.encode())


async def test_replicas_delivered_through_the_metadata_and_signalled(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(4, 1), clock_sleep=clock.sleep)
    provider.replicas_via_agents = True
    rig = rig_for(db, provider, clock)
    svc = DeploymentService(db, lambda: rig.inventory, clock, lambda: None)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        await until(
            lambda: (
                settled(db, cid) and len(rows(db, cid)) == 2 and len(_served(db, svc, cid)) == 2
            ),
            clock=clock,
        )
        served = _served(db, svc, cid)
        assert {e["node"] for e in served.values()} == {r.node for r in rows(db, cid).values()}
        entry = served["api-1"]
        assert entry["group"] == "docker-compose"
        assert entry["name"] == replica_compose.project_name("api-1")
        inputs = {i["name"]: i["value"] for i in entry["inputs"]}
        files = json.loads(inputs["env_files"])
        assert files[0]["file_name"] == f"env/api-{entry['id'][:12]}.env"
        assert "PW='s3cret-\\'Value\\'-$x'" in files[0]["content"]  # served to the node only

        # In flight reads RUNNING (ready: no readiness probe); its signal records COMPLETE.
        assert _signal(svc, entry, 0) is DeploymentStatus.COMPLETE
        assert _signal(svc, entry, 1) is DeploymentStatus.COMPLETE  # once recorded, kept

        # A failed run reads EXITED: delivered again (at once the first time), a new generation
        # (a new config id, so heat-config runs it; a new label, so compose recreates it).
        before = served["api-2"]
        assert _signal(svc, before, 1) is DeploymentStatus.FAILED
        await until(lambda: _served(db, svc, cid)["api-2"]["id"] != before["id"], clock=clock)
        again = _served(db, svc, cid)["api-2"]
        labels = json.loads(again["config"])["api"]["labels"]
        assert labels["shoal.generation"] == "2" and again["node"] == before["node"]
        assert labels["shoal.delivery"] == again["id"]
        # (its first exit: delivered again at once, the restart counted when the tick writes)
        await until(lambda: rows(db, cid)["api-2"].restarts == 1, clock=clock)

        # Scaled in: api-2's delivery leaves its server's metadata (its project is killed).
        await asyncio.to_thread(rig.service.scale_workload, ADMIN, "carried", "api", 1)
        await until(lambda: set(_served(db, svc, cid)) == {"api-1"}, clock=clock)

        # The secret was served, and is in no stored row, event or view.
        with db.reading() as conn:
            stored = agent_repo.for_keys(conn, [(cid, "api-1"), (cid, "api-2")])
        for text in (
            repr(stored),
            repr(rows(db, cid)),
            "\n".join(events(db, cid)),
            json.dumps(replicas_view(db, ADMIN, "carried", 100, None)),
        ):
            assert "s3cret" not in text
    finally:
        await rig.engine.stop()
