"""Active management at scale on the sim provider: a 1,000-node cluster (four groups of 250
over 200 hosts in four zones, spread over zones, at most 6 per host) that loses hosts, loses
node processes, rolls one group to a new flavor, and short-circuits when too much of a group
breaks at once. SQLite only (this is about scale, the database paths are covered elsewhere);
time is a ManualClock, real-time waits are bounded and generous, nothing asserts on timing."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shoal.clock import ManualClock
from shoal.documents import cluster_from_tree
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import synthetic_inventory
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeStatus
from shoal.model.inventory import Inventory
from shoal.placement.verify import verify_placement
from shoal.providers.base import ResourceState
from shoal.providers.sim.provider import SimProvider
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord
from tests.databases import database_url
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

GROUPS = ("g1", "g2", "g3", "g4")
PER_GROUP = 250
TOTAL = PER_GROUP * len(GROUPS)
MAX_UNHEALTHY = 25  # "10%" of a 250-node group
BATCH = 25


def _document(g1_flavor: str = "m1.tiny") -> str:
    lines = [
        "name: big",
        "health: {check: provider, interval_s: 1, failures: 1, grace_s: 0,",
        '         recovery: rebuild, max_unhealthy: "10%"}',
        "node_groups:",
    ]
    for g in GROUPS:
        flavor = g1_flavor if g == "g1" else "m1.tiny"
        lines += [
            f"  - name: {g}",
            f"    profile: {{type: server, flavor: {flavor}, image: cirros}}",
            f"    count: {PER_GROUP}",
        ]
        if g == "g1":
            lines.append(f"    update: {{max_unavailable: {BATCH}, gate_timeout_s: 30}}")
    lines += [
        "groupings:",
        "  - {name: zones, members: [g1, g2, g3, g4], rule: spread, scope: zone}",
        "  - {name: apart, members: [g1, g2, g3, g4], rule: anti-affinity, scope: host,",
        "     max_per_domain: 6}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
async def big(tmp_path: Path) -> AsyncIterator[tuple[Rig, ManualClock, str]]:
    """A started engine and a created, settled 1,000-node cluster."""
    with database_url("sqlite", tmp_path) as url:
        db = Database(url)
        db.migrate()
        clock = ManualClock()
        provider = SimProvider(synthetic_inventory(200, 4), clock_sleep=clock.sleep)
        rig = make_rig(
            db, provider=provider, clock=clock, retry=RetryPolicy(attempts=2, backoff_s=0)
        )
        assert rig.engine.manager is not None
        rig.engine.manager.reconcile_s = 1.0
        await rig.engine.start()
        try:
            sub = await asyncio.to_thread(rig.service.create, ADMIN, _document())
            cid = sub.cluster.id
            await until(lambda: _settled(rig, cid), clock=clock)
            assert _violations(rig, cid, await provider.inventory()) == ()
            yield rig, clock, cid
        finally:
            await rig.engine.stop()
            db.dispose()


def _nodes(rig: Rig, cid: str) -> list[NodeRecord]:
    with rig.db.reading() as conn:
        return node_repo.list_nodes(conn, cid)


def _cluster(rig: Rig, cid: str) -> ClusterRecord:
    with rig.db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cid)
    assert cluster is not None
    return cluster


def _recoveries(rig: Rig, cid: str) -> list[ActionRecord]:
    with rig.db.reading() as conn:
        found = action_repo.list_actions(conn, None, cluster_id=cid, top_level=True)
    return [a for a in found if a.kind is ActionKind.CLUSTER_RECOVER]


def _settled(rig: Rig, cid: str) -> bool:
    """No action holds the cluster and exactly its 1,000 nodes exist, all ACTIVE."""
    nodes = _nodes(rig, cid)
    return (
        _cluster(rig, cid).lock_action_id is None
        and len(nodes) == TOTAL
        and all(n.status is NodeStatus.ACTIVE for n in nodes)
    )


def _violations(rig: Rig, cid: str, inventory: Inventory) -> tuple[str, ...]:
    """Hard rule violations of the recorded node -> host map against the declared cluster,
    judged on the provider's current inventory (a node on a failed host is on no host)."""
    spec = cluster_from_tree(_cluster(rig, cid).document, inventory)
    hosts = {n.name: n.host for n in _nodes(rig, cid) if n.host is not None}
    return verify_placement(spec, inventory, hosts).hard_violations


async def test_three_hosts_lost_at_once_are_replaced_under_every_rule(
    big: tuple[Rig, ManualClock, str],
) -> None:
    rig, clock, cid = big
    before = _nodes(rig, cid)
    per_host: dict[str, list[NodeRecord]] = {}
    for n in before:
        assert n.host is not None
        per_host.setdefault(n.host, []).append(n)
    zone = before[0].zone
    # Three hosts of one zone, so the replacements must stay in it to keep the zone spread.
    failed = sorted(h for h in per_host if per_host[h][0].zone == zone)[:3]
    lost = {n.name for h in failed for n in per_host[h]}
    assert len(lost) >= 3
    for h in failed:
        await rig.provider.fail_host(h)

    await until(
        lambda: _settled(rig, cid) and not any(n.host in failed for n in _nodes(rig, cid)),
        clock=clock,
    )
    after = {n.name: n for n in _nodes(rig, cid)}
    assert lost <= set(after)
    assert all(after[name].host not in failed for name in lost)
    inventory = await rig.provider.inventory()
    assert not set(failed) & {h.name for h in inventory.hosts}
    assert _violations(rig, cid, inventory) == ()
    # Every lost node was replaced by a recovery that succeeded. (A host lost in the middle of
    # a manager tick may first be taken for sick nodes whose rebuild fails; that is allowed.)
    replaced = {
        r["node"]
        for a in _recoveries(rig, cid)
        if a.status is ActionStatus.SUCCEEDED
        for r in a.inputs["repairs"]
        if r["how"] == "replace"
    }
    assert lost <= replaced
    # The old resources are gone too: exactly one live resource per node.
    resources = await rig.provider.list_resources(cid)
    assert {r.key for r in resources} == {n.id for n in after.values()}


async def test_forty_killed_node_processes_are_all_recreated(
    big: tuple[Rig, ManualClock, str],
) -> None:
    rig, clock, cid = big
    victims = random.Random(40).sample(_nodes(rig, cid), 40)
    per_group: dict[str, int] = {}
    for n in victims:
        per_group[n.group_name] = per_group.get(n.group_name, 0) + 1
    assert max(per_group.values()) <= MAX_UNHEALTHY  # below the short circuit
    for n in victims:
        assert n.provider_id is not None
        await rig.provider.kill_node_process(n.provider_id)

    async def recreated() -> bool:
        if not _settled(rig, cid):
            return False
        found = await rig.provider.list_resources(cid)
        return len(found) == TOTAL and all(r.state is ResourceState.ACTIVE for r in found)

    await until(recreated, clock=clock)
    after = {n.name: n for n in _nodes(rig, cid)}
    for n in victims:  # recreated in place: same node, same host
        assert after[n.name].id == n.id and after[n.name].host == n.host
    assert _recoveries(rig, cid)
    assert _cluster(rig, cid).status is ClusterStatus.ACTIVE
    assert _violations(rig, cid, await rig.provider.inventory()) == ()


async def test_rolling_update_of_a_250_node_group_in_batches_of_25(
    big: tuple[Rig, ManualClock, str],
) -> None:
    rig, clock, cid = big
    sub = await asyncio.to_thread(rig.service.update, ADMIN, "big", _document("m1.small"))
    worst = 0

    def done() -> bool:
        nonlocal worst
        g1 = [n for n in _nodes(rig, cid) if n.group_name == "g1" and "~" not in n.name]
        up = sum(1 for n in g1 if n.status is NodeStatus.ACTIVE)
        worst = max(worst, PER_GROUP - up)
        with rig.db.reading() as conn:
            a = action_repo.get_action(conn, sub.action.id)
        return a is not None and a.status.is_terminal

    await until(done, clock=clock, step_s=0.25)
    with rig.db.reading() as conn:
        action = action_repo.get_action(conn, sub.action.id)
    assert action is not None and action.status is ActionStatus.SUCCEEDED, action
    nodes = _nodes(rig, cid)
    assert len(nodes) == TOTAL
    assert all(n.status is NodeStatus.ACTIVE for n in nodes)
    flavors = {g: {n.profile["flavor"] for n in nodes if n.group_name == g} for g in GROUPS}
    assert flavors == {"g1": {"m1.small"}, "g2": {"m1.tiny"}, "g3": {"m1.tiny"}, "g4": {"m1.tiny"}}
    assert worst <= BATCH
    assert _violations(rig, cid, await rig.provider.inventory()) == ()


async def test_more_than_max_unhealthy_of_one_group_short_circuits(
    big: tuple[Rig, ManualClock, str],
) -> None:
    rig, clock, cid = big
    g4 = [n for n in _nodes(rig, cid) if n.group_name == "g4"]
    victims = random.Random(4).sample(g4, MAX_UNHEALTHY + 5)
    for n in victims:
        assert n.provider_id is not None
        await rig.provider.kill_node_process(n.provider_id)

    await until(lambda: _cluster(rig, cid).status is ClusterStatus.WARNING, clock=clock)
    for _ in range(10):  # ten more seconds of ticks and reconciles
        clock.advance(1.0)
        await asyncio.sleep(0.05)
    assert _recoveries(rig, cid) == []
    cluster = _cluster(rig, cid)
    assert cluster.status is ClusterStatus.WARNING
    assert "g4" in cluster.status_reason and "max_unhealthy" in cluster.status_reason
    by_id = {r.key: r for r in await rig.provider.list_resources(cid)}
    assert all(by_id[n.id].state is ResourceState.ERROR for n in victims)  # left alone
