"""Deployment rows on SQLite and PostgreSQL: publishing runs, counting attempts per digest,
finishing only the run that owns the row, bounded tails, keys made once; and the migration
creates exactly the tables the code declares."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from shoal.model.software import DeployAction, DeploymentStatus
from shoal.store import deployments as repo
from shoal.store.database import Database
from shoal.store.deployments import TAIL_CHARS, Finish, Publish
from shoal.store.tables import deployments, metadata, software_keys


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


def test_keys_are_made_once(db: Database) -> None:
    with db.transaction() as conn:
        first = repo.key(conn, "server")
    with db.transaction() as conn:
        assert repo.key(conn, "server") == first
        assert repo.key(conn, "signal") != first


def test_the_migration_matches_the_tables(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    mine = {deployments.name, software_keys.name}
    ours = [d for d in diff if any(name in repr(d) for name in mine)]
    assert ours == [], ours
