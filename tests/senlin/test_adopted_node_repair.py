"""A standalone node adopted by a cluster (`add_nodes`) is managed like any member: the
reconciler finds its server (made under the standalone grouping, not the cluster's) and
leaves it alone, instead of "recreating" it every reconcile for as long as Shoal runs.
The manager is driven by a ManualClock, many ticks; the count of recover actions is the test.
"""

from __future__ import annotations

import asyncio
import dataclasses

from shoal.clock import ManualClock
from shoal.engine.manager import Manager
from tests.senlin.conftest import Senlin


async def _settled(senlin: Senlin, name: str) -> dict[str, object]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while True:
        c: dict[str, object] = (await senlin.ok("GET", f"/clusters/{name}"))["cluster"]
        if c["status"] in ("ACTIVE", "WARNING", "ERROR"):
            return c
        assert loop.time() < deadline, c
        await asyncio.sleep(0.02)


async def test_an_adopted_node_is_not_repaired_forever(senlin: Senlin) -> None:
    await senlin.cluster(size=1)
    profile = (await senlin.ok("GET", "/clusters/web"))["cluster"]["profile_id"]
    body = {"node": {"name": "n1", "profile_id": profile}}
    await senlin.accepted("POST", "/nodes", json=body)
    physical = (await senlin.ok("GET", "/nodes/n1"))["node"]["physical_id"]
    await senlin.accepted("POST", "/clusters/web/actions", json={"add_nodes": {"nodes": ["n1"]}})

    clock = ManualClock()
    ctx = dataclasses.replace(senlin.runtime.engine.context, clock=clock, owner="test-manager")
    manager = Manager(ctx, reconcile_s=5.0)
    try:
        for _ in range(40):
            clock.advance(5.0)
            await manager.tick()
            await _settled(senlin, "web")
    finally:
        await manager.close()
    actions = (await senlin.ok("GET", "/actions?action=CLUSTER_RECOVER"))["actions"]
    assert actions == []
    node = (await senlin.ok("GET", "/nodes/n1"))["node"]
    assert node["physical_id"] == physical and node["status"] == "ACTIVE"
    assert (await _settled(senlin, "web"))["status"] == "ACTIVE"
