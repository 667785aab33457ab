"""A replaced node runs its DELETE deployments before it goes, although it was renamed.

The replacement takes the old node's name at once (`app-2`) and the old node leaves as
`app-2~1a2b3c4d`, while its deployment rows were written under `app-2`. On the sim provider,
SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import dataclasses

from shoal.model.enums import ActionStatus
from shoal.model.software import DeployAction, DeploymentStatus, SoftwareSpec
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, make_rig
from tests.engine.test_deployments import (
    create,
    rows,
    runs_of,
    settled,
    software,
    with_software,
)
from tests.support.polling import until


def with_app_delete() -> SoftwareSpec:
    base = software()
    every = frozenset({DeployAction.CREATE, DeployAction.UPDATE, DeployAction.DELETE})
    return dataclasses.replace(
        base,
        deployments=tuple(
            dataclasses.replace(d, actions=every) if d.name == "app-setup" else d
            for d in base.deployments
        ),
    )


async def test_a_replaced_node_runs_delete_under_its_new_name(db: Database) -> None:
    rig = make_rig(db)
    with_software(rig, with_app_delete())
    await rig.engine.start()
    try:
        cid = await create(rig)
        await until(settled(rig, cid, 4), lambda: f"not settled: {rows(rig, cid)}")
        with rig.db.reading() as conn:
            old = next(n for n in node_repo.list_nodes(conn, cid) if n.name == "app-2")
        sub = await asyncio.to_thread(
            lambda: rig.service.recover(ADMIN, "ctl", nodes=["app-2"], how="replace")
        )
        assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED

        def replacement_deployed() -> bool:
            r = rows(rig, cid).get(("app-setup", "app-2"))
            return (
                r is not None
                and r.node_id != old.id
                and r.status is DeploymentStatus.COMPLETE
                and settled(rig, cid, 4)()
            )

        await until(replacement_deployed, lambda: f"not replaced: {rows(rig, cid)}")
        deletes = [r for r in runs_of(rig).runs if r.action is DeployAction.DELETE]
        renamed = f"app-2~{old.id[:8]}"
        assert [(r.deployment, r.node) for r in deletes] == [("app-setup", renamed)]
        # Only the old node ran DELETE; nothing else did, and the replacement ran CREATE.
        creates = [
            r.node
            for r in runs_of(rig).runs
            if r.deployment == "app-setup" and r.action is DeployAction.CREATE
        ]
        assert creates.count("app-2") == 2
    finally:
        await rig.engine.stop()
