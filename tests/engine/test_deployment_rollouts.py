"""A config change rolling through a node group on sim, on SQLite and PostgreSQL, time on a
manual clock: batches of `max_unavailable` with a pause between them, the health gate waiting
through its timeout, a failed batch rolling back the updated nodes (and only them) to their
previous revision, no retry until the document changes, and an engine restarted mid-rollout
going on without running a completed node twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from shoal.clock import ManualClock
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import MemberRef
from shoal.model.enums import ActionStatus, NodeStatus
from shoal.model.policies import HealthPolicy, UpdatePolicy
from shoal.model.rollouts import RolloutPhase, SoftwareRollout
from shoal.model.software import (
    DeployAction,
    Deployment,
    DeploymentSignal,
    DeploymentStatus,
    HookGroup,
    LiteralInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.providers.sim.provider import SimProvider
from shoal.providers.sim.state import ACTIVE
from shoal.providers.software import DeploymentRun
from shoal.service.deployments import DeploymentService
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import nodes as node_repo
from shoal.store import rollouts as rollout_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, Rig, decided_at, make_rig
from tests.engine.test_deployments import rows, runs_of, settled, with_software
from tests.support.polling import until

DOC = """
name: web
node_groups:
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 4
"""
APP = ("app-1", "app-2", "app-3", "app-4")


def software(version: str) -> SoftwareSpec:
    return SoftwareSpec(
        configs=(SoftwareConfig("app-config", HookGroup.SCRIPT, f"echo app {version}"),),
        deployments=(
            Deployment(
                "app-setup",
                "app-config",
                MemberRef("app"),
                inputs={"version": LiteralInput(version)},
            ),
        ),
    )


class Scripted:
    """The sim's runner, failing the runs `fail` says should fail, and crashing the server
    (the sim reads ERROR, so its health check fails) right after the runs `breaks` says."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self.inner = runs_of(rig)
        self.fail: Callable[[DeploymentRun], bool] = lambda _r: False
        self.breaks: Callable[[DeploymentRun], bool] = lambda _r: False
        self.inner_run = self.inner.run

    async def run(self, run: DeploymentRun) -> DeploymentSignal:
        signal = await self.inner_run(run)
        if self.breaks(run):
            assert run.provider_id is not None
            await self.rig.provider.kill_node_process(run.provider_id)
        if self.fail(run):
            return DeploymentSignal(1, "", f"version {run.inputs.get('version')} broke")
        return signal


def revive(rig: Rig, name: str) -> None:
    """The crashed server works again (as if its config were fixed by hand)."""
    with rig.db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, "web")
        assert cluster is not None
        node = next(n for n in node_repo.list_nodes(conn, cluster.id) if n.name == name)
    assert node.provider_id is not None
    rig.provider._state.set_state(node.provider_id, ACTIVE)


def scripted(rig: Rig) -> Scripted:
    s = Scripted(rig)
    s.inner.run = s.run  # type: ignore[method-assign]
    return s


def rollout(rig: Rig, cluster_id: str) -> SoftwareRollout | None:
    with rig.db.reading() as conn:
        return rollout_repo.for_cluster(conn, cluster_id).get("app-setup")


def in_phase(
    rig: Rig, cluster_id: str, phase: RolloutPhase, started: int = 0
) -> Callable[[], bool]:
    def check() -> bool:
        r = rollout(rig, cluster_id)
        return r is not None and r.phase is phase and (not started or r.started == started)

    return check


def versions(rig: Rig, cluster_id: str) -> dict[str, tuple[DeployAction, DeploymentStatus, str]]:
    found = rows(rig, cluster_id)
    return {
        n: (r.action, r.status, str(r.inputs.get("version")))
        for (d, n), r in found.items()
        if d == "app-setup"
    }


def runs_by_node(rig: Rig) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in runs_of(rig).runs:
        out.setdefault(r.node, []).append(str(r.inputs.get("version")))
    return out


def messages(rig: Rig, cluster_id: str) -> list[str]:
    with rig.db.reading() as conn:
        return [e.message for e in event_repo.list_events(conn, None, cluster_id=cluster_id)]


async def looked_at(rig: Rig, cluster_id: str, now: float) -> None:
    """Until the gate has checked the batch at `now` (it then looks again half a second on)."""
    await until(lambda: (x := rollout(rig, cluster_id)) is not None and x.gate_next > now, str)


async def tick(rig: Rig, clock: ManualClock, seconds: float) -> None:
    """Move the engine's clock, then wait for a deployer pass that decided (and checked the
    rollout's gate) as of the new time: what a test asserts next is what that pass left."""
    clock.advance(seconds)
    rig.engine.deployer.wake()
    await decided_at(rig, clock.now())


def policy(**kw: float | int | bool) -> Callable[[object], dict[str, UpdatePolicy]]:
    p = UpdatePolicy(**kw)  # type: ignore[arg-type]
    return lambda _c: {"app": p}


async def start(db: Database, clock: ManualClock, **kw: float | int | bool) -> Rig:
    provider = SimProvider(default_inventory(), clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, lease_s=60.0)
    with_software(rig, software("v1"))
    rig.engine.deployer.policies_of = policy(**kw)
    # The gate's health check: the sim's view of the server (a crashed one reads ERROR).
    rig.engine.deployer.health_of = lambda _c: {"app": HealthPolicy()}
    rig.engine.deployer.tick_s = 0.02  # decide (and look at gates) often: the clock is manual
    # No health management: it would recreate the servers these tests crash on purpose.
    rig.engine.manager = None
    await rig.engine.start()
    return rig


async def created(rig: Rig) -> str:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    done = await rig.wait(sub.action.id)
    assert done.status is ActionStatus.SUCCEEDED, done.status_reason
    cid = sub.cluster.id
    await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
    return cid


def change(rig: Rig, version: str) -> None:
    with_software(rig, software(version))
    rig.engine.deployer.wake()


@pytest.fixture
async def clock() -> AsyncIterator[ManualClock]:
    yield ManualClock()


async def test_batches_pause_and_gate_then_done(db: Database, clock: ManualClock) -> None:
    rig = await start(db, clock, max_unavailable=2, pause_s=30.0, gate_timeout_s=60.0)
    try:
        cid = await created(rig)
        s = scripted(rig)
        # app-2 is down right after its update: the gate must wait for it.
        s.breaks = lambda r: r.node == "app-2" and r.inputs.get("version") == "v2"
        change(rig, "v2")
        await until(in_phase(rig, cid, RolloutPhase.GATE, 1), lambda: f"{rollout(rig, cid)}")
        r = rollout(rig, cid)
        assert r is not None and r.batches == (("app-1", "app-2"), ("app-3", "app-4"))
        await tick(rig, clock, 30.0)
        # Within the gate's time nothing moves on, and batch 2 has not started.
        await looked_at(rig, cid, clock.now())
        assert in_phase(rig, cid, RolloutPhase.GATE, 1)()
        assert {n: v[2] for n, v in versions(rig, cid).items()} == {
            "app-1": "v2",
            "app-2": "v2",
            "app-3": "v1",
            "app-4": "v1",
        }
        revive(rig, "app-2")  # it recovers before the gate's timeout
        await tick(rig, clock, 1.0)  # the gate looks again every 0.5 s of the engine's clock
        await until(in_phase(rig, cid, RolloutPhase.PAUSE, 1), lambda: f"{rollout(rig, cid)}")
        # The pause: batch 2 waits for the clock.
        assert {n: v[2] for n, v in versions(rig, cid).items()}["app-3"] == "v1"
        await tick(rig, clock, 29.0)
        assert in_phase(rig, cid, RolloutPhase.PAUSE, 1)()
        await tick(rig, clock, 2.0)
        await until(in_phase(rig, cid, RolloutPhase.PAUSE, 2), lambda: f"{rollout(rig, cid)}")
        await tick(rig, clock, 31.0)
        await until(in_phase(rig, cid, RolloutPhase.DONE), lambda: f"{rollout(rig, cid)}")
        assert versions(rig, cid) == {
            n: (DeployAction.UPDATE, DeploymentStatus.COMPLETE, "v2") for n in APP
        }
        # Batch 1's runs all came before batch 2's; every node updated exactly once.
        order = [r.node for r in runs_of(rig).runs if r.inputs.get("version") == "v2"]
        assert sorted(order[:2]) == ["app-1", "app-2"] and sorted(order[2:]) == ["app-3", "app-4"]
        assert all(v == ["v1", "v2"] for v in runs_by_node(rig).values())
        # Visible to users.
        service = DeploymentService(db, lambda: rig.inventory, clock, lambda: None)
        (view,) = service.rollouts(ADMIN, "web")
        assert view.phase == "done" and view.batches == 2
        assert view.summary == "rolled out (2 batches)"
    finally:
        await rig.engine.stop()


async def test_a_failed_batch_rolls_back_the_updated_nodes_only(
    db: Database, clock: ManualClock
) -> None:
    rig = await start(db, clock, max_unavailable=1, gate_timeout_s=60.0)
    try:
        cid = await created(rig)
        before = {n: r.digest for (_d, n), r in rows(rig, cid).items()}
        s = scripted(rig)
        s.fail = lambda r: r.node == "app-2" and r.inputs.get("version") == "v2"
        change(rig, "v2")
        await until(in_phase(rig, cid, RolloutPhase.ROLLED_BACK), lambda: f"{rollout(rig, cid)}")
        r = rollout(rig, cid)
        assert r is not None and r.started == 2 and set(r.restored) == {"app-1", "app-2"}
        assert "app-2" in r.reason
        found = rows(rig, cid)
        # The updated nodes run the previous revision again; the others never left it.
        for n in APP:
            assert found[("app-setup", n)].status is DeploymentStatus.COMPLETE
            assert found[("app-setup", n)].digest == before[n]
        assert runs_by_node(rig) == {
            "app-1": ["v1", "v2", "v1"],
            "app-2": ["v1", "v2", "v1"],
            "app-3": ["v1"],
            "app-4": ["v1"],
        }
        # The previous config is what the node's metadata serves again.
        body = found[("app-setup", "app-1")].config_body
        assert body is not None and body.config == "echo app v1"
        with rig.db.reading() as conn:
            node = next(n for n in node_repo.list_nodes(conn, cid) if n.name == "app-2")
        assert node.status is NodeStatus.ACTIVE  # the rollback's success cleared its WARNING
        assert any("rolled back" in m for m in messages(rig, cid))

        # Level-triggered, without looping: the document still says v2, nothing is tried again.
        made = await asyncio.to_thread(rig.engine.deployer._decide)
        assert made == 0
        await tick(rig, clock, 600.0)
        assert await asyncio.to_thread(rig.engine.deployer._decide) == 0
        assert sum(len(v) for v in runs_by_node(rig).values()) == 8

        # A new revision of the document starts a new rollout.
        change(rig, "v3")
        await until(in_phase(rig, cid, RolloutPhase.DONE), lambda: f"{rollout(rig, cid)}")
        assert versions(rig, cid) == {
            n: (DeployAction.UPDATE, DeploymentStatus.COMPLETE, "v3") for n in APP
        }
    finally:
        await rig.engine.stop()


async def test_a_gate_timing_out_rolls_back(db: Database, clock: ManualClock) -> None:
    rig = await start(db, clock, max_unavailable=2, gate_timeout_s=60.0)
    try:
        cid = await created(rig)
        s = scripted(rig)
        s.breaks = lambda r: r.node == "app-1" and r.inputs.get("version") == "v2"
        change(rig, "v2")
        await until(in_phase(rig, cid, RolloutPhase.GATE, 1), lambda: f"{rollout(rig, cid)}")
        await tick(rig, clock, 59.0)
        await looked_at(rig, cid, clock.now())
        assert in_phase(rig, cid, RolloutPhase.GATE, 1)()
        await tick(rig, clock, 2.0)
        await until(in_phase(rig, cid, RolloutPhase.ROLLED_BACK), lambda: f"{rollout(rig, cid)}")
        r = rollout(rig, cid)
        assert r is not None and "app-1 not healthy in time" in r.reason
        assert {n: v[2] for n, v in versions(rig, cid).items()} == dict.fromkeys(APP, "v1")
        assert runs_by_node(rig)["app-3"] == ["v1"]
    finally:
        await rig.engine.stop()


async def test_an_engine_restarted_mid_rollout_goes_on(db: Database, clock: ManualClock) -> None:
    first = await start(db, clock, max_unavailable=1, pause_s=30.0, health_gate=False)
    cid = await created(first)
    change(first, "v2")
    await until(in_phase(first, cid, RolloutPhase.PAUSE, 1), lambda: f"{rollout(first, cid)}")
    await first.engine.stop()

    provider = first.provider
    second = make_rig(db, provider=provider, clock=clock, lease_s=60.0, engine_id="second")
    with_software(second, software("v2"))
    second.engine.deployer.policies_of = policy(max_unavailable=1, pause_s=30.0, health_gate=False)
    second.engine.deployer.tick_s = 0.02
    await second.engine.start()
    try:
        await tick(second, clock, 61.0)  # the first engine's deployer lease runs out; the pause too
        for batch in (2, 3, 4):
            await until(
                in_phase(second, cid, RolloutPhase.PAUSE, batch), lambda: f"{rollout(second, cid)}"
            )
            await tick(second, clock, 31.0)
        await until(in_phase(second, cid, RolloutPhase.DONE), lambda: f"{rollout(second, cid)}")
        # app-1 completed before the restart and did not run again.
        assert all(v == ["v1", "v2"] for v in runs_by_node(second).values()), runs_by_node(second)
    finally:
        await second.engine.stop()
