"""Restarts of replicas on `local` with real podman containers (issue 36, item 5), the engine on a
`ManualClock` so what it decided is read in engine seconds, never wall time:

- a `kill -9` of a replica's container is restarted at once: the exit is told by the node's
  podman event log, which wakes the keeper's tick with the clock where it was, so the restart
  is recorded at the very engine instant of the kill (no back-off, no tick to wait for);
- killed again soon after, it waits the back-off (10 s of engine time), and starts once the
  clock passes it;
- the replica then answers on its node's address again;
- a replica on a node that is deleted is never listed on it (the view, polled through the
  delete, names only nodes that are there), and ends up running on the other server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest_asyncio

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.engine.runtime import Engine
from shoal.engine.workloads import replica_key
from shoal.model.enums import ActionStatus, NodeStatus
from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions
from shoal.service.clusters import ClusterService
from shoal.service.replicas import replicas as replicas_view
from shoal.store import actions as action_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.workloads import ReplicaRow
from tests.containers.conftest import IMAGE
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.support.server import free_port
from tests.workloads.support import events, rows

PORT = 8093


def _doc(servers: int) -> str:
    script = (
        'mkdir -p /tmp/www && echo "$SHOAL_REPLICA on $SHOAL_NODE_ADDRESS" > /tmp/www/index.html'
        f" && exec /bin/httpd -f -p $SHOAL_NODE_ADDRESS:{PORT} -h /tmp/www"
    )
    return json.dumps(
        {
            "name": "kept",
            "node_groups": [
                {
                    "name": "web",
                    "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
                    "count": servers,
                }
            ],
            "workloads": {
                "api": {
                    "replicas": 1,
                    "containers": [
                        {
                            "name": "web",
                            "image": IMAGE,
                            "command": ["/bin/sh", "-c", script],
                            "ports": [PORT],
                            "readiness": {"http": "/", "port": PORT, "period_s": 1},
                        }
                    ],
                }
            },
        }
    )


class _Rig:
    def __init__(self, db: Database, home: Path) -> None:
        self.db = db
        self.clock = ManualClock()
        self.provider = LocalProvider(
            home / "local",
            None,
            LocalOptions(port=free_port(), boot_timeout_s=60.0, stop_grace_s=2.0),
        )
        self.engine = Engine(
            db,
            self.provider,
            clock=self.clock,
            poll_s=0.02,
            retry=RetryPolicy(attempts=2, backoff_s=0.0),
        )
        self.service: ClusterService | None = None

    async def start(self) -> ClusterService:
        inventory = await self.provider.inventory()
        self.service = ClusterService(self.db, lambda: inventory, self.clock, self.engine.wake)
        await self.engine.start()
        return self.service


@pytest_asyncio.fixture
async def rig(db: Database, home: Path) -> AsyncIterator[_Rig]:
    made = _Rig(db, home)
    try:
        yield made
    finally:
        await made.engine.stop()
        if (home / "local" / "resources").is_dir():
            await LocalProvider(home / "local").purge()


def _answers(rig: _Rig, cid: str, replica: str) -> bool:
    with rig.db.reading() as conn:
        found = {n.name: n for n in node_repo.list_nodes(conn, cid)}
    row = rows(rig.db, cid).get(replica)
    node = found.get(row.node) if row is not None else None
    if node is None or not node.address:
        return False
    try:
        page = httpx.get(f"http://{node.address.split(':')[0]}:{PORT}/", timeout=2)
    except httpx.HTTPError:
        return False
    return page.status_code == 200 and page.text.startswith(f"{replica} on ")


def _succeeded(db: Database, action_id: str) -> bool:
    with db.reading() as conn:
        found = action_repo.get_action(conn, action_id)
    return found is not None and found.status is ActionStatus.SUCCEEDED


async def _kill(rig: _Rig, cid: str, replica: str) -> None:
    pids = await rig.provider.replicas.container_pids(replica_key(cid, replica))
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)


async def test_a_first_exit_restarts_at_once_and_a_second_backs_off(rig: _Rig) -> None:
    service = await rig.start()
    clock = rig.clock
    sub = await asyncio.to_thread(service.create, ADMIN, _doc(1))
    cid = sub.cluster.id
    await until(lambda: _succeeded(rig.db, sub.action.id), clock=clock, step_s=0.5, in_thread=True)
    await until(lambda: (r := rows(rig.db, cid).get("api-1")) and r.ready, clock=clock)
    await until(lambda: _answers(rig, cid, "api-1"), in_thread=True)

    # The first exit: the clock is not moved from here on until the restart is recorded, so
    # only the exit itself (the node's event log) can have woken the keeper.
    killed = clock.now()
    await _kill(rig, cid, "api-1")

    def restarted(n: int) -> ReplicaRow | None:
        row = rows(rig.db, cid)["api-1"]
        return row if row.restarts == n and row.started_at is not None else None

    first = await until(lambda: restarted(1), "api-1 restarted", in_thread=True)
    assert first.started_at == killed  # restarted at the engine instant of the kill
    assert any("api-1's container exited; restart 1 at once" in e for e in events(rig.db, cid))
    await until(lambda: _answers(rig, cid, "api-1"), in_thread=True)

    # Killed again within 10 minutes: the second exit in a row waits 10 s of engine time.
    again = clock.now()
    await _kill(rig, cid, "api-1")
    waiting = await until(
        lambda: (r := rows(rig.db, cid)["api-1"]).restarts == 2 and r, in_thread=True
    )
    assert not waiting.ready
    assert waiting.not_before == again + 10.0
    assert any("api-1's container exited; restart 2 in 10 s" in e for e in events(rig.db, cid))
    second = await until(
        lambda: (r := rows(rig.db, cid)["api-1"]).started_at != first.started_at and r,
        clock=clock,
        step_s=0.5,
        in_thread=True,
    )
    assert second.started_at is not None and second.started_at >= again + 10.0
    await until(lambda: rows(rig.db, cid)["api-1"].ready, clock=clock, step_s=0.5)
    await until(lambda: _answers(rig, cid, "api-1"), in_thread=True)


async def test_a_replica_on_a_deleted_node_is_never_listed(rig: _Rig) -> None:
    service = await rig.start()
    clock = rig.clock
    sub = await asyncio.to_thread(service.create, ADMIN, _doc(2))
    cid = sub.cluster.id
    await until(lambda: _succeeded(rig.db, sub.action.id), clock=clock, step_s=0.5, in_thread=True)
    await until(lambda: (r := rows(rig.db, cid).get("api-1")) and r.ready, clock=clock)
    carrier = rows(rig.db, cid)["api-1"].node

    def gone_but_listed() -> list[str]:
        """Replicas the view lists on a node that was not there (gone, going, or no row) when
        the view began: the nodes are read first, and a node gone stays gone (no node is made
        in this test, so a replica cannot have moved to one made in between)."""
        with rig.db.reading() as conn:
            there = {
                n.name
                for n in node_repo.list_nodes(conn, cid)
                if n.status not in (NodeStatus.DELETING, NodeStatus.DELETED)
            }
        view = replicas_view(rig.db, ADMIN, cid, 100, None)
        listed = view["replicas"]
        return [f"{r['replica']} on {r['node']}" for r in listed if r["node"] not in there]

    out = await asyncio.to_thread(service.del_nodes, ADMIN, cid, [carrier])
    seen_gone: list[str] = []

    def moved() -> bool:
        seen_gone.extend(gone_but_listed())
        row = rows(rig.db, cid).get("api-1")
        return (
            _succeeded(rig.db, out.action.id)
            and row is not None
            and row.node != carrier
            and row.ready
            and _answers(rig, cid, "api-1")
        )

    await until(moved, "api-1 ready on the other server", clock=clock, step_s=0.5, in_thread=True)
    assert seen_gone == []
    view = replicas_view(rig.db, ADMIN, cid, 100, None)
    assert [(r["replica"], r["node"]) for r in view["replicas"]] == [
        ("api-1", rows(rig.db, cid)["api-1"].node)
    ]
