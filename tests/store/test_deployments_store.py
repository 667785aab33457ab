"""Deployment rows on SQLite and PostgreSQL: publishing runs, counting attempts per digest,
finishing only the run that owns the row, bounded tails, keys made once, the previous revision
kept for a rollback, rollouts stored; and the migration creates exactly the tables the code
declares."""

from __future__ import annotations

import dataclasses

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.model.rollouts import RolloutPhase, SoftwareRollout
from shoal.model.software import DeployAction, DeploymentStatus, HookGroup, SoftwareConfig
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as repo
from shoal.store import nodes as node_repo
from shoal.store import rollouts as rollout_repo
from shoal.store.database import Database
from shoal.store.deployments import TAIL_CHARS, Finish, Publish
from shoal.store.records import NewNode, NodeChange
from shoal.store.tables import deployments, metadata, software_keys, software_rollouts


def run(action_id: str, digest: str = "d1") -> Publish:
    return Publish(
        id=action_id,
        project_id="p",
        cluster_id="c",
        node_id="n1",
        node_name="app-1",
        name="setup",
        config="setup",
        hook="script",
        action=DeployAction.CREATE,
        digest=digest,
        inputs={"password": "******", "port": 80},
        secret_inputs=("password",),
        action_id=action_id,
        signal_hash="h",
    )


def test_runs_attempts_and_stale_signals(db: Database) -> None:
    with db.transaction() as conn:
        repo.publish(conn, [run("a1")], 1.0)
        assert repo.finish(conn, [Finish("a1", DeploymentStatus.FAILED, 1, "", "boom")], 2.0) == [
            "a1"
        ]
        repo.publish(conn, [run("a2")], 3.0)  # a retry: same digest
        [row] = repo.for_node(conn, "n1")
        assert row.attempts == 2 and row.status is DeploymentStatus.IN_PROGRESS
        assert row.id == "a1"  # one row per (node, deployment), whatever the run
        # A late signal of the first run changes nothing; the second run's does.
        assert repo.finish(conn, [Finish("a1", DeploymentStatus.COMPLETE, 0)], 4.0) == []
        long = "x" * (TAIL_CHARS + 10) + "END"
        assert repo.finish(
            conn, [Finish("a2", DeploymentStatus.COMPLETE, 0, long, "", {"url": "u"})], 5.0
        ) == ["a2"]
        [row] = repo.for_node(conn, "n1")
        assert row.status is DeploymentStatus.COMPLETE and row.outputs == {"url": "u"}
        assert len(row.stdout) == TAIL_CHARS and row.stdout.endswith("END")
        assert row.record().attempts == 2 and row.record().action is DeployAction.CREATE
        repo.publish(conn, [run("a3", digest="d2")], 6.0)  # new inputs: attempts start again
        [row] = repo.for_node(conn, "n1")
        assert row.attempts == 1 and row.action_id == "a3"
        assert repo.by_action(conn, "a3") is not None and repo.by_action(conn, "a1") is None


def test_pages_and_counts_cover_only_the_live_nodes_of_the_cluster(db: Database) -> None:
    """Issue 23: a page looks up each row's node (no list of every live node per page); rows
    on a deleted node, or on a node of another cluster, are neither paged nor counted."""
    with db.transaction() as conn:
        for cid in ("c", "other"):
            cluster_repo.insert_cluster(
                conn, id=cid, project_id="p", name=cid, document={}, source_format="yaml", now=0.0
            )
        node_repo.insert_nodes(
            conn,
            [
                NewNode(
                    id=nid,
                    project_id="p",
                    name=nid,
                    kind=NodeKind.SERVER,
                    status=NodeStatus.ACTIVE,
                    host=None,
                    zone=None,
                    profile={},
                    demand=Demand(vcpus=1, ram_mb=1, disk_gb=1, volume_gb=0),
                    created_at=0.0,
                    updated_at=0.0,
                    cluster_id=cid,
                )
                for nid, cid in (("n1", "c"), ("n2", "c"), ("n3", "c"), ("n4", "other"))
            ],
        )
        for i, nid in enumerate(("n1", "n2", "n3", "n4")):
            repo.publish(conn, [dataclasses.replace(run(f"a{i}"), node_id=nid)], float(i))
        repo.finish(conn, [Finish("a1", DeploymentStatus.COMPLETE, 0)], 9.0)
        node_repo.update_nodes(conn, [NodeChange("n3", 9.0, deleted_at=9.0)])
    with db.reading() as conn:
        got = repo.page_for_cluster(conn, "c", limit=1, marker=None)
        assert got is not None
        first, more = got
        assert [r.node_id for r in first] == ["n1"] and more
        got = repo.page_for_cluster(conn, "c", limit=5, marker=first[0].id)
        assert got is not None and [r.node_id for r in got[0]] == ["n2"] and not got[1]
        got = repo.page_for_cluster(
            conn, "c", limit=5, marker=None, status=DeploymentStatus.COMPLETE
        )
        assert got is not None and [r.node_id for r in got[0]] == ["n2"]
        counts = repo.counts_for_cluster(conn, "c")
        assert counts == {DeploymentStatus.IN_PROGRESS: 1, DeploymentStatus.COMPLETE: 1}


def test_a_newer_revision_keeps_the_one_completed_before(db: Database) -> None:
    v1 = SoftwareConfig("setup", HookGroup.SCRIPT, "echo v1")
    v2 = SoftwareConfig("setup", HookGroup.SCRIPT, "echo v2")
    with db.transaction() as conn:
        repo.publish(conn, [dataclasses.replace(run("a1"), config_body=v1)], 1.0)
        repo.finish(conn, [Finish("a1", DeploymentStatus.COMPLETE, 0)], 2.0)
        [row] = repo.for_node(conn, "n1")
        assert row.config_body == v1 and row.previous is None
        update = dataclasses.replace(run("a2", "d2"), config_body=v2, action=DeployAction.UPDATE)
        repo.publish(conn, [update], 3.0)
        repo.finish(conn, [Finish("a2", DeploymentStatus.FAILED, 1)], 4.0)
        [row] = repo.for_node(conn, "n1")
        assert row.config_body == v2
        assert row.previous is not None and row.previous.config == v1
        assert row.previous.digest == "d1" and row.previous.inputs["password"] == "******"
        # A retry of the failed one, and the rollback itself, keep the same previous revision.
        repo.publish(conn, [dataclasses.replace(update, id="a3", action_id="a3")], 5.0)
        back = dataclasses.replace(run("a4"), config_body=v1, rollback=True)
        repo.publish(conn, [back], 6.0)
        repo.finish(conn, [Finish("a4", DeploymentStatus.COMPLETE, 0)], 7.0)
        [row] = repo.for_node(conn, "n1")
        assert row.digest == "d1" and row.config_body == v1
        assert row.previous is not None and row.previous.digest == "d1"


def test_rollouts_are_stored_per_cluster_and_deployment(db: Database) -> None:
    r = SoftwareRollout("setup", "rev", "app", (("app-1",), ("app-2",)), started_at=1.0)
    with db.transaction() as conn:
        rollout_repo.save(conn, "c", [r], 1.0)
        moved = dataclasses.replace(r, phase=RolloutPhase.GATE, gate_until=9.0)
        rollout_repo.save(conn, "c", [moved], 2.0)
    with db.reading() as conn:
        assert rollout_repo.for_cluster(conn, "c") == {"setup": moved}
        assert rollout_repo.in_phase(conn, RolloutPhase.GATE) == [("c", moved)]
        assert rollout_repo.in_phase(conn, RolloutPhase.RUN) == []


def test_keys_are_made_once(db: Database) -> None:
    with db.transaction() as conn:
        first = repo.key(conn, "server")
    with db.transaction() as conn:
        assert repo.key(conn, "server") == first
        assert repo.key(conn, "signal") != first


def test_the_migration_matches_the_tables(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    mine = {deployments.name, software_keys.name, software_rollouts.name}
    ours = [d for d in diff if any(name in repr(d) for name in mine)]
    assert ours == [], ours
