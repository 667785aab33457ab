"""Rows written column by column (`store/bulk.py`'s `insert_columns`, issue 23): on PostgreSQL
a hand-made COPY text, elsewhere the rows as dicts. What is read back is what was given, on
both: strings COPY must escape, NULLs, enums, booleans, numbers; JSON as `json.dumps` writes
it, whether its objects are shared between rows or not."""

from __future__ import annotations

import json

from sqlalchemy import select

from shoal.model.enums import ActionKind, ActionStatus, NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.store import actions as action_repo
from shoal.store import nodes as node_repo
from shoal.store.actions import NewAction
from shoal.store.bulk import _JsonTexts
from shoal.store.database import Database
from shoal.store.records import NewNode
from shoal.store.tables import action_deps, actions, nodes

ODD = ["plain", "tab\there", "line\nbreak", "cr\rhere", "back\\slash", "\\N", "ünï €", ""]


def test_json_texts_are_json_dumps() -> None:
    shared = {"flavor": "m1.tiny", "meta": {"a": [1, 2.5, None, True]}, "x": 'q"\\'}
    texts = _JsonTexts()
    for value in [
        {},
        [],
        {"node": "n\t1", "profile": shared, "hint": None, "n": 3, "f": 0.1, "b": False},
        {"profile": shared, "list": [shared, "é"], "empty": {}},
        {1: "int key", "s": "x"},
        [shared, {"k": "v"}],
        "text",
        12,
    ]:
        assert texts.text(value) == json.dumps(value)
    assert texts.text(None) == "null"


def test_many_rows_read_back_as_given(db: Database) -> None:
    shared = {"type": "server", "flavor": "m1.tiny", "note": "a\\b\tc\nd é"}
    count = 150  # above bulk.py's COPY_FROM: PostgreSQL's COPY
    new_nodes = [
        NewNode(
            id=f"n{i}",
            project_id="proj",
            name=f"node-{i}-{ODD[i % len(ODD)]}",
            kind=NodeKind.SERVER if i % 2 else NodeKind.VOLUME,
            status=NodeStatus.INIT,
            host=None if i % 3 == 0 else f"h{i % 7}",
            zone="az1",
            profile=shared if i % 5 else {"type": "volume", "size": i, "odd": ODD[i % len(ODD)]},
            demand=Demand(vcpus=i % 4, ram_mb=512, disk_gb=i, volume_gb=0),
            created_at=1.5,
            updated_at=1.5 + i / 3,
            cluster_id=None,  # no cluster row to refer to
            group_name="g\\1" if i % 2 else "g2",
            part=None if i % 4 else "data",
            replica=i,
            status_reason=ODD[i % len(ODD)],
        )
        for i in range(count)
    ]
    new_actions = [
        NewAction(
            id=f"a{i}",
            project_id="proj",
            kind=ActionKind.NODE_CREATE if i % 2 else "NODE_DELETE",
            cluster_id="c1",
            node_id=f"n{i}",
            parent_id=None if i % 3 else "p",
            inputs={"node": f"node-{i}", "profile": shared, "odd": ODD[i % len(ODD)], "i": i},
            depends_on=[f"a{i - 1}", f"a{i - 1}"] if i % 2 else [],
            status=ActionStatus.CANCELLED if i % 10 == 0 else None,
        )
        for i in range(count)
    ]
    with db.transaction() as conn:
        node_repo.insert_nodes(conn, new_nodes)
        action_repo.insert_actions(conn, new_actions, 2.25)
    with db.reading() as conn:
        found = node_repo.get_nodes(conn, [n.id for n in new_nodes])
        rows = {r.id: r for r in conn.execute(select(actions)).mappings()}
        deps = set(conn.execute(select(action_deps.c.action_id, action_deps.c.depends_on)))
        raw = (
            dict(conn.exec_driver_sql("SELECT id, profile::text FROM nodes").fetchall())
            if conn.dialect.name == "postgresql"
            else {}
        )
        assert conn.execute(select(nodes.c.health)).scalars().all() == ["UNKNOWN"] * count
    for n in new_nodes:
        got = found[n.id]
        assert (got.name, got.kind, got.status, got.host, got.zone) == (
            n.name,
            n.kind,
            n.status,
            n.host,
            n.zone,
        )
        assert got.profile == n.profile
        assert (got.vcpus, got.ram_mb, got.disk_gb, got.volume_gb) == (
            n.demand.vcpus,
            n.demand.ram_mb,
            n.demand.disk_gb,
            n.demand.volume_gb,
        )
        assert (got.created_at, got.updated_at, got.deleted_at) == (1.5, n.updated_at, None)
        assert (got.group_name, got.part, got.replica, got.status_reason) == (
            n.group_name,
            n.part,
            n.replica,
            n.status_reason,
        )
        if raw:
            assert raw[n.id] == json.dumps(n.profile)
    for a in new_actions:
        row = rows[a.id]
        status = a.status or (ActionStatus.INIT if a.depends_on else ActionStatus.READY)
        assert (row["kind"], row["status"], row["parent_id"], row["inputs"]) == (
            str(a.kind),
            str(status),
            a.parent_id,
            a.inputs,
        )
        assert (row["outputs"], row["owner"], row["attempts"], row["cancel_requested"]) == (
            {},
            None,
            0,
            False,
        )
        assert (row["deps_pending"], row["created_at"]) == (len(set(a.depends_on)), 2.25)
    assert deps == {(f"a{i}", f"a{i - 1}") for i in range(1, count, 2)}
