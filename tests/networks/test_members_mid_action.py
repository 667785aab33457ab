"""A balancer's members follow a scale-out or a scale-in while the action still runs (issue
26, gap 2), on `local` with the real HAProxy and real node processes, in-process (an engine
over a real `LocalProvider`): the create of one new server is held until the test releases it,
so the action cannot end before the other new server serves through the balancer; a scale-in's
deletes are held, so it cannot end before its victims leave the pool. The node work marks the
cluster (engine/member_marks.py) and the manager re-syncs its networking mid-action."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest_asyncio

from shoal.engine.member_marks import MemberMarks
from shoal.engine.nodework import RetryPolicy
from shoal.engine.runtime import Engine
from shoal.model.enums import ActionStatus, NodeKind
from shoal.providers.base import Resource, ServerRequest
from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions
from shoal.service.clusters import ClusterService
from shoal.store import actions as action_repo
from shoal.store.database import Database
from tests.databases import database_url
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.support.server import free_port


class HeldLocal(LocalProvider):
    """A real local provider whose create of a server named `held` waits for `release`, and
    whose servers' deletes wait for `deletes`."""

    held = "-web-3"
    release: asyncio.Event
    deletes: asyncio.Event
    """Servers' deletes wait for it."""

    async def create_server(self, request: ServerRequest) -> Resource:
        if request.name.endswith(self.held):
            await self.release.wait()
        return await super().create_server(request)

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        if kind is NodeKind.SERVER:
            await self.deletes.wait()
        await super().delete(kind, resource_id)


@pytest_asyncio.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[Database]:
    """SQLite only: the store is not what this test is about (both are covered elsewhere)."""
    with database_url("sqlite", tmp_path) as url:
        database = Database(url)
        database.migrate()
        try:
            yield database
        finally:
            database.dispose()


def _served(vip: str, port: int) -> set[str]:
    names: set[str] = set()
    for _ in range(8):
        try:
            r = httpx.get(f"http://{vip}:{port}/", timeout=2.0, trust_env=False)
        except httpx.HTTPError:
            continue
        if r.status_code == 200:
            names.add(str(r.json()["name"]).removeprefix("midway-"))
    return names


async def test_a_new_member_serves_before_the_scale_out_ends(
    sqlite: Database, tmp_path: Path
) -> None:
    node_port, listen = free_port(), free_port()
    home = tmp_path / "local"
    options = LocalOptions(port=node_port, boot_timeout_s=30.0, stop_grace_s=2.0)
    provider = HeldLocal(home, None, options)
    provider.release = asyncio.Event()
    provider.deletes = asyncio.Event()
    engine = Engine(
        sqlite,
        provider,
        poll_s=0.02,
        retry=RetryPolicy(attempts=2, backoff_s=0.0),
        manage_tick_s=0.2,
    )
    inventory = await provider.inventory()
    service = ClusterService(sqlite, lambda: inventory, engine.clock, engine.wake)
    document = {
        "name": "midway",
        "node_groups": [
            {
                "name": "web",
                "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
                "count": 1,
                "max": 4,
            }
        ],
        "networks": [{"name": "app", "cidr": "10.83.0.0/24"}],
        "load_balancers": [
            {
                "name": "front",
                "network": "app",
                "listeners": [{"port": listen, "protocol": "HTTP", "pool": "web"}],
                "pools": [{"name": "web", "members": "web", "port": node_port, "protocol": "HTTP"}],
            }
        ],
    }
    await engine.start()
    try:
        sub = await asyncio.to_thread(service.create, ADMIN, json.dumps(document))
        cid = sub.cluster.id
        vips = home / "networking" / cid / "vips.json"
        await until(vips.exists, every_s=0.1, in_thread=True)
        vip = json.loads(vips.read_text())["front"]
        await until(lambda: _served(vip, listen) == {"web-1"}, every_s=0.1, in_thread=True)

        out = await asyncio.to_thread(
            lambda: service.scale(ADMIN, cid, out=True, count=2, nodegroup="web")
        )

        def action_status() -> ActionStatus:
            with sqlite.reading() as conn:
                found = action_repo.get_action(conn, out.action.id)
            assert found is not None
            return found.status

        # web-3's create is held, so the action runs on; web-2 must serve meanwhile.
        await until(lambda: "web-2" in _served(vip, listen), every_s=0.1, in_thread=True)
        assert action_status() not in (ActionStatus.SUCCEEDED, ActionStatus.FAILED)
        assert "web-3" not in _served(vip, listen)

        provider.release.set()
        await until(lambda: action_status() is ActionStatus.SUCCEEDED, every_s=0.1, in_thread=True)
        await until(
            lambda: _served(vip, listen) == {"web-1", "web-2", "web-3"}, every_s=0.1, in_thread=True
        )

        # A scale-in whose deletes are held: the victims leave the pool before it ends.
        back = await asyncio.to_thread(
            lambda: service.scale(ADMIN, cid, out=False, count=2, nodegroup="web")
        )
        await until(lambda: _served(vip, listen) == {"web-1"}, every_s=0.1, in_thread=True)
        assert _status(sqlite, back.action.id) not in (ActionStatus.SUCCEEDED, ActionStatus.FAILED)
        provider.deletes.set()
        await until(
            lambda: _status(sqlite, back.action.id) is ActionStatus.SUCCEEDED,
            every_s=0.1,
            in_thread=True,
        )
        gone = await asyncio.to_thread(service.delete, ADMIN, cid)
        await until(
            lambda: _status(sqlite, gone.action.id) is ActionStatus.SUCCEEDED,
            every_s=0.1,
            in_thread=True,
        )
    finally:
        provider.release.set()
        provider.deletes.set()
        await engine.stop()
        if (home / "resources").is_dir():
            await LocalProvider(home).purge()


def _status(db: Database, action_id: str) -> ActionStatus | None:
    with db.reading() as conn:
        found = action_repo.get_action(conn, action_id)
    return found.status if found is not None else None


def test_marks_are_bounded_oldest_first_and_taken_a_batch_at_a_time() -> None:
    marks = MemberMarks(limit=3)
    for cid in ("a", "b", "a", "c", "d"):  # a marked twice is one mark; d drops the oldest
        marks.mark(cid)
    assert len(marks) == 3
    assert marks.take(2) == ["b", "c"]
    assert marks.take(2) == ["d"] and marks.take() == []
