"""The sim's change feed (issue 37, `ChangeFeed`): in memory and in a shared file, every kind of
change names its cluster once after the cursor it was read at; a second provider on the same
file sees the first one's changes; nothing changed, nothing named."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.model.catalogs import default_inventory
from shoal.model.enums import NodeKind
from shoal.providers.base import ChangeFeed
from shoal.providers.sim import SimProvider

from .support import server_request


@pytest.mark.parametrize("shared", [False, True])
async def test_every_change_names_its_cluster(tmp_path: Path, shared: bool) -> None:
    inventory = default_inventory()
    h1, h2 = inventory.hosts[0].name, inventory.hosts[1].name
    path = tmp_path / "sim.db" if shared else None
    p = SimProvider(inventory, state_path=path)
    other = SimProvider(inventory, state_path=path) if shared else p
    try:
        assert isinstance(p, ChangeFeed)
        cursor, first = await p.changes_since(None)
        assert first is None  # no cursor yet: take everything as changed
        a = await other.create_server(server_request("a1", h1, cluster="ca"))
        await other.create_server(server_request("b1", h2, cluster="cb"))
        cursor, changed = await p.changes_since(cursor)
        assert changed == {"ca", "cb"}
        cursor, changed = await p.changes_since(cursor)
        assert changed == frozenset()  # nothing since
        await other.kill_node_process(a.id)
        cursor, changed = await p.changes_since(cursor)
        assert changed == {"ca"}
        await other.fail_host(h2)
        cursor, changed = await p.changes_since(cursor)
        assert changed == {"cb"}
        await other.recover_host(h2)
        await other.delete(NodeKind.SERVER, a.id)
        cursor, changed = await p.changes_since(cursor)
        assert changed == {"ca", "cb"}
    finally:
        await p.close()
        if other is not p:
            await other.close()
