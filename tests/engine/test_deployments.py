"""Software deployments run by the engine on the sim provider, on SQLite and PostgreSQL:
dependency order across node groups, outputs feeding inputs, scale-out and replacement nodes
getting their deployments, the load balancer re-running UPDATE when membership changes,
failures with retries marking the node, and an engine dying mid-deployment."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator, Callable

import pytest

from shoal.clock import ManualClock
from shoal.engine.software.inputs import DeployInputs
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import MemberRef
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeStatus
from shoal.model.heat_agent import STDOUT
from shoal.model.policies import UpdatePolicy
from shoal.model.software import (
    ConfigOutput,
    DeployAction,
    Deployment,
    DeploymentStatus,
    HookGroup,
    MemberFactsInput,
    NodeFact,
    OutputInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.providers.sim.provider import SimProvider
from shoal.providers.sim.software import SimDeployments, simulated_output
from shoal.store import actions as action_repo
from shoal.store import deployments as deployment_repo
from shoal.store import events as event_repo
from shoal.store import nodes as node_repo
from shoal.store.actions import NewAction
from shoal.store.database import Database
from shoal.store.deployments import DeploymentRow
from shoal.store.records import ActionRecord, ClusterRecord
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

DOC = """
name: ctl
node_groups:
  - name: db
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    min: 1
    max: 5
  - name: lb
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
"""


def software(retries: int = 0) -> SoftwareSpec:
    script = HookGroup.SCRIPT
    return SoftwareSpec(
        configs=(
            SoftwareConfig("db-config", script, "echo db", outputs=(ConfigOutput("dsn"),)),
            SoftwareConfig("app-config", script, "echo app"),
            SoftwareConfig("lb-config", script, "echo lb"),
        ),
        deployments=(
            Deployment("db-setup", "db-config", MemberRef("db"), retries=retries),
            Deployment(
                "app-setup",
                "app-config",
                MemberRef("app"),
                inputs={"dsn": OutputInput("db-setup", "dsn")},
                retries=retries,
            ),
            Deployment(
                "lb-setup",
                "lb-config",
                MemberRef("lb"),
                inputs={"backends": MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS)},
                depends_on=("app-setup",),
                retries=retries,
            ),
        ),
    )


def runs_of(rig: Rig) -> SimDeployments:
    assert rig.provider.deployments is not None
    return rig.provider.deployments


def rows(rig: Rig, cluster_id: str) -> dict[tuple[str, str], DeploymentRow]:
    with rig.db.reading() as conn:
        live = {n.id for n in node_repo.list_nodes(conn, cluster_id)}
        return {
            (r.name, r.node_name): r
            for r in deployment_repo.for_cluster(conn, cluster_id, revisions=True)
            if r.node_id in live
        }


def settled(rig: Rig, cluster_id: str, expected: int) -> Callable[[], bool]:
    def check() -> bool:
        found = rows(rig, cluster_id)
        return (
            len(found) == expected
            and all(
                r.status in (DeploymentStatus.COMPLETE, DeploymentStatus.FAILED)
                for r in found.values()
            )
            and not _live_deploys(rig, cluster_id)
        )

    return check


def _live_deploys(rig: Rig, cluster_id: str) -> list[str]:
    with rig.db.reading() as conn:
        return [
            a.id
            for a in action_repo.list_actions(conn, None, cluster_id=cluster_id)
            if a.kind is ActionKind.NODE_DEPLOY and not a.status.is_terminal
        ]


def with_software(rig: Rig, spec: SoftwareSpec) -> None:
    def of(_c: ClusterRecord) -> SoftwareSpec:
        return spec

    rig.engine.deployer.software_of = of


@pytest.fixture
async def rig(db: Database) -> AsyncIterator[Rig]:
    r = make_rig(db)
    with_software(r, software())
    await r.engine.start()
    yield r
    await r.engine.stop()


async def create(rig: Rig) -> str:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    done = await rig.wait(sub.action.id)
    assert done.status is ActionStatus.SUCCEEDED, done.status_reason
    return sub.cluster.id


async def test_order_outputs_and_membership_updates(rig: Rig) -> None:
    cid = await create(rig)
    await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
    found = rows(rig, cid)
    assert {r.status for r in found.values()} == {DeploymentStatus.COMPLETE}
    order = [(r.deployment, r.node) for r in runs_of(rig).runs]
    # Across node groups: the database first, then both app servers, then the balancer.
    assert order[0] == ("db-setup", "db-1")
    assert {o for o in order[1:3]} == {("app-setup", "app-1"), ("app-setup", "app-2")}
    assert order[3] == ("lb-setup", "lb-1")
    # An output of one deployment is the input of the next.
    app_run = runs_of(rig).runs[1]
    assert app_run.inputs["dsn"] == simulated_output("db-setup", "dsn", "db-1")
    with rig.db.reading() as conn:
        nodes = {n.name: n for n in node_repo.list_nodes(conn, cid)}
    lb_run = runs_of(rig).runs[3]
    assert lb_run.inputs["backends"] == [nodes["app-1"].address, nodes["app-2"].address]
    assert found[("lb-setup", "lb-1")].action is DeployAction.CREATE

    # Scale out: app-3 gets its deployment, and the balancer re-runs UPDATE with 3 backends.
    out = await asyncio.to_thread(
        lambda: rig.service.scale(ADMIN, "ctl", out=True, count=1, nodegroup="app")
    )
    assert (await rig.wait(out.action.id)).status is ActionStatus.SUCCEEDED

    def lb_updated() -> bool:
        r = rows(rig, cid).get(("lb-setup", "lb-1"))
        return (
            r is not None
            and r.action is DeployAction.UPDATE
            and r.status is DeploymentStatus.COMPLETE
        )

    await until(lb_updated, lambda: f"balancer not updated: {rows(rig, cid)}")
    with rig.db.reading() as conn:
        nodes = {n.name: n for n in node_repo.list_nodes(conn, cid)}
    assert rows(rig, cid)[("app-setup", "app-3")].status is DeploymentStatus.COMPLETE
    last_lb = [r for r in runs_of(rig).runs if r.deployment == "lb-setup"][-1]
    assert last_lb.inputs["backends"] == [nodes[f"app-{i}"].address for i in (1, 2, 3)]
    # Nothing that was complete and unchanged ran again.
    order = [(r.deployment, r.node) for r in runs_of(rig).runs]
    assert order.count(("db-setup", "db-1")) == 1
    assert order.count(("app-setup", "app-1")) == 1


async def test_heat_stdout_of_one_deployment_is_the_input_of_another(db: Database) -> None:
    """Heat keeps deploy_stdout (and stderr, status code) among every deployment's outputs;
    heat-templates' example-deploy-sequence passes one deployment's stdout to the next."""
    r = make_rig(db)
    spec = software()
    previous = {"previous": OutputInput("db-setup", STDOUT)}
    app = dataclasses.replace(spec.deployments[1], inputs=previous)
    with_software(r, dataclasses.replace(spec, deployments=(spec.deployments[0], app)))
    await r.engine.start()
    try:
        cid = await create(r)
        await until(settled(r, cid, 3), lambda: f"not settled: {rows(r, cid)}")
        db_run = runs_of(r).runs[0]
        assert db_run.deployment == "db-setup"
        db_row = rows(r, cid)[("db-setup", "db-1")]
        assert db_row.outputs[STDOUT] == db_row.stdout == f"CREATE db-setup on {db_run.node}"
        assert db_row.outputs["deploy_status_code"] == 0
        app_runs = [x for x in runs_of(r).runs if x.deployment == "app-setup"]
        assert [x.inputs["previous"] for x in app_runs] == [db_row.stdout] * 2
    finally:
        await r.engine.stop()


async def test_a_replacement_node_gets_its_deployments(rig: Rig) -> None:
    cid = await create(rig)
    await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
    with rig.db.reading() as conn:
        before = {n.name: n for n in node_repo.list_nodes(conn, cid)}
    sub = await asyncio.to_thread(
        lambda: rig.service.recover(ADMIN, "ctl", nodes=["app-2"], how="replace")
    )
    assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED

    def replaced() -> bool:
        with rig.db.reading() as conn:
            now = {n.name: n for n in node_repo.list_nodes(conn, cid)}
        r = rows(rig, cid).get(("app-setup", "app-2"))
        return (
            now["app-2"].id != before["app-2"].id
            and r is not None
            and r.node_id == now["app-2"].id
            and r.status is DeploymentStatus.COMPLETE
            and settled(rig, cid, 4)()
        )

    await until(replaced, lambda: f"replacement not deployed: {rows(rig, cid)}")
    runs = [(r.deployment, r.node) for r in runs_of(rig).runs]
    assert runs.count(("app-setup", "app-2")) == 2
    assert runs.count(("db-setup", "db-1")) == 1


async def test_a_failed_deployment_marks_the_node_and_is_retried(db: Database) -> None:
    provider = SimProvider(default_inventory(), deploy_failure_rate=1.0)
    rig = make_rig(db, provider=provider)
    with_software(rig, software(retries=1))
    await rig.engine.start()
    try:
        cid = await create(rig)

        def retried() -> bool:
            r = rows(rig, cid).get(("db-setup", "db-1"))
            return r is not None and r.attempts == 2 and settled(rig, cid, 1)()

        await until(retried, lambda: f"not retried: {rows(rig, cid)}")
        row = rows(rig, cid)[("db-setup", "db-1")]
        assert row.status is DeploymentStatus.FAILED
        assert row.attempts == 2  # the first run and one retry
        assert row.status_code == 1
        assert "simulated failure" in row.stderr
        # Nothing depending on it ran.
        assert {r.deployment for r in runs_of(rig).runs} == {"db-setup"}
        with rig.db.reading() as conn:
            node = next(n for n in node_repo.list_nodes(conn, cid) if n.name == "db-1")
            from shoal.store import clusters as cluster_repo

            cluster = cluster_repo.get_cluster(conn, cid)
        assert node.status is NodeStatus.WARNING
        assert "db-setup" in node.status_reason and "simulated failure" in node.status_reason
        assert cluster is not None and cluster.status is ClusterStatus.WARNING
    finally:
        await rig.engine.stop()


async def test_an_engine_dying_mid_deployment_never_repeats_a_completed_one(
    db: Database,
) -> None:
    clock = ManualClock()
    provider = SimProvider(default_inventory(), clock_sleep=clock.sleep, deploy_s=60.0)
    first = make_rig(db, provider=provider, clock=clock, lease_s=10.0, engine_id="first")
    with_software(first, software())
    await first.engine.start()
    cid = await create(first)

    def row_is(name: str, node: str, status: DeploymentStatus) -> Callable[[], bool]:
        return lambda: (r := rows(first, cid).get((name, node))) is not None and r.status is status

    await until(row_is("db-setup", "db-1", DeploymentStatus.IN_PROGRESS), lambda: "no db run")
    # The row says IN_PROGRESS before the sim's run starts its wait on the clock: moved earlier,
    # the clock would leave that wait 60 s away (a loaded machine lost this race in CI).
    await until(
        lambda: any(r.deployment == "db-setup" for r in runs_of(first).runs),
        lambda: "the db run not started",
    )
    await advance(clock, 60.0)
    await until(row_is("db-setup", "db-1", DeploymentStatus.COMPLETE), lambda: "db not done")
    await until(row_is("app-setup", "app-1", DeploymentStatus.IN_PROGRESS), lambda: "no app run")
    # The first engine dies with the app deployments in flight: their actions stay RUNNING.
    await first.engine.stop()
    with first.db.reading() as conn:
        db_node = next(n for n in node_repo.list_nodes(conn, cid) if n.name == "db-1")
    # A stray second action for the completed deployment (as if decided twice) must not run it.
    db_row = rows(first, cid)[("db-setup", "db-1")]
    stray = NewAction(
        id="stray-db-setup",
        project_id=db_row.project_id,
        kind=ActionKind.NODE_DEPLOY.value,
        cluster_id=cid,
        node_id=db_node.id,
        inputs=DeployInputs(
            "db-setup", "db-1", DeployAction.CREATE, "db-config", "script", db_row.digest
        ).to_json(),
    )
    with first.db.transaction() as conn:
        action_repo.insert_actions(conn, [stray], clock.now())

    # A longer lease for the survivor: the test moves its clock in steps of 3 s.
    second = make_rig(db, provider=provider, clock=clock, lease_s=30.0, engine_id="second")
    with_software(second, software())
    await second.engine.start()
    try:
        clock.advance(11.0)  # the first engine's leases run out; the second takes over
        await until(
            lambda: bool((a := _action(second, "stray-db-setup")) and a.status.is_terminal),
            lambda: "stray action not ended",
        )
        stray_end = _action(second, "stray-db-setup")
        assert stray_end is not None and stray_end.status is ActionStatus.SUCCEEDED

        async def tick() -> None:
            while True:
                await advance(clock, 3.0)

        ticker = asyncio.create_task(tick())
        try:
            await until(settled(second, cid, 4), lambda: f"not settled: {rows(second, cid)}")
        finally:
            ticker.cancel()
        found = rows(second, cid)
        assert {r.status for r in found.values()} == {DeploymentStatus.COMPLETE}
        runs = [(r.deployment, r.node) for r in runs_of(second).runs]
        assert runs.count(("db-setup", "db-1")) == 1, runs
        # The interrupted app runs resumed on the second engine (run again, not published anew).
        assert runs.count(("app-setup", "app-1")) == 2, runs
        assert found[("app-setup", "app-1")].attempts == 1
    finally:
        await second.engine.stop()


async def advance(clock: ManualClock, seconds: float, step: float = 3.0) -> None:
    """Move the clock in steps below any lease, letting the engine run between them."""
    left = seconds
    while left > 0:
        clock.advance(min(step, left))
        left -= step
        await asyncio.sleep(0.01)


def _action(rig: Rig, action_id: str) -> ActionRecord | None:
    with rig.db.reading() as conn:
        return action_repo.get_action(conn, action_id)


async def test_scale_in_runs_delete_first_and_the_balancer_follows(db: Database) -> None:
    base = software()
    app = base.deployment("app-setup")
    assert app is not None
    spec = SoftwareSpec(
        configs=base.configs,
        deployments=tuple(
            dataclasses.replace(
                d,
                actions=frozenset({DeployAction.CREATE, DeployAction.UPDATE, DeployAction.DELETE}),
            )
            if d.name == "app-setup"
            else d
            for d in base.deployments
        ),
    )
    rig = make_rig(db)
    with_software(rig, spec)
    await rig.engine.start()
    try:
        cid = await create(rig)
        await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
        sub = await asyncio.to_thread(
            lambda: rig.service.scale(ADMIN, "ctl", out=False, count=1, nodegroup="app")
        )
        assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED
        deletes = [r for r in runs_of(rig).runs if r.action is DeployAction.DELETE]
        assert [(r.deployment, r.node) for r in deletes] == [("app-setup", "app-2")]

        def lb_has_one_backend() -> bool:
            r = rows(rig, cid).get(("lb-setup", "lb-1"))
            return (
                r is not None
                and r.status is DeploymentStatus.COMPLETE
                and r.action is DeployAction.UPDATE
            )

        await until(lb_has_one_backend, lambda: f"balancer not updated: {rows(rig, cid)}")
        with rig.db.reading() as conn:
            app1 = next(n for n in node_repo.list_nodes(conn, cid) if n.name == "app-1")
        last_lb = [r for r in runs_of(rig).runs if r.deployment == "lb-setup"][-1]
        assert last_lb.inputs["backends"] == [app1.address]
    finally:
        await rig.engine.stop()


def changed_app_config(spec: SoftwareSpec) -> SoftwareSpec:
    return dataclasses.replace(
        spec,
        configs=tuple(
            dataclasses.replace(c, config="echo app v2") if c.name == "app-config" else c
            for c in spec.configs
        ),
    )


def app_updates(rig: Rig, cluster_id: str) -> list[ActionRecord]:
    with rig.db.reading() as conn:
        found = [
            a
            for a in action_repo.list_actions(conn, None, cluster_id=cluster_id)
            if a.kind is ActionKind.NODE_DEPLOY
            and a.inputs.get("deployment") == "app-setup"
            and a.inputs.get("action") == "UPDATE"
        ]
    return sorted(found, key=lambda a: a.started_at or 0.0)


async def test_a_config_change_rolls_through_the_group_one_node_at_a_time(db: Database) -> None:
    provider = SimProvider(default_inventory(), deploy_s=0.05)
    rig = make_rig(db, provider=provider)
    with_software(rig, software())
    rig.engine.deployer.policies_of = lambda _c: {"app": UpdatePolicy(max_unavailable=1)}
    await rig.engine.start()
    try:
        cid = await create(rig)
        await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
        out = await asyncio.to_thread(
            lambda: rig.service.scale(ADMIN, "ctl", out=True, count=1, nodegroup="app")
        )
        assert (await rig.wait(out.action.id)).status is ActionStatus.SUCCEEDED
        await until(
            lambda: len(rows(rig, cid)) == 5 and settled(rig, cid, 5)(),
            lambda: f"not settled: {rows(rig, cid)}",
        )
        with_software(rig, changed_app_config(software()))
        rig.engine.deployer.wake()

        def rolled() -> bool:
            done = app_updates(rig, cid)
            return len(done) == 3 and all(a.status is ActionStatus.SUCCEEDED for a in done)

        await until(rolled, lambda: f"not rolled: {app_updates(rig, cid)}")
        updates = app_updates(rig, cid)
        for before, after in itertools.pairwise(updates):
            assert before.ended_at is not None and after.started_at is not None
            assert after.started_at >= before.ended_at, updates  # never two at once
    finally:
        await rig.engine.stop()


async def test_a_failing_config_change_stops_rolling(db: Database) -> None:
    """Every run fails here, the rollback too: the rollout stops and says so, nothing loops."""
    rig = make_rig(db)
    with_software(rig, software())
    rig.engine.deployer.policies_of = lambda _c: {"app": UpdatePolicy(max_unavailable=1)}
    await rig.engine.start()
    try:
        cid = await create(rig)
        await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
        runs_of(rig).failure_rate = 1.0
        with_software(rig, changed_app_config(software()))
        rig.engine.deployer.wake()

        def stopped() -> bool:
            with rig.db.reading() as conn:
                seen = event_repo.list_events(conn, None, cluster_id=cid, limit=1000)
            return any("rollback failed on app-1" in e.message for e in seen)

        await until(stopped, lambda: f"not stopped: {rows(rig, cid)}")
        found = rows(rig, cid)
        statuses = sorted(
            (found[("app-setup", n)].action, found[("app-setup", n)].status)
            for n in ("app-1", "app-2")
        )
        # app-1 tried the new config and failed, then its rollback failed; app-2 kept the old.
        assert statuses == [
            (DeployAction.CREATE, DeploymentStatus.COMPLETE),
            (DeployAction.UPDATE, DeploymentStatus.FAILED),
        ]
        assert len(app_updates(rig, cid)) == 2  # the new config and the rollback, once each
        assert await asyncio.to_thread(rig.engine.deployer._decide) == 0
    finally:
        await rig.engine.stop()
