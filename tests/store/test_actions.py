"""Action claims, leases, completion and dependencies, on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import threading
import uuid

import pytest

from shoal.model.enums import ActionKind, ActionStatus
from shoal.store import actions as repo
from shoal.store.actions import Completion, NewAction
from shoal.store.database import Database
from shoal.store.records import ActionRecord

NOW = 1_000.0


def _children(db: Database, n: int, parent: str = "p") -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(n)]
    with db.transaction() as conn:
        repo.insert_actions(
            conn,
            [
                NewAction(id=i, project_id="proj", kind=ActionKind.NODE_CREATE, parent_id=parent)
                for i in ids
            ],
            NOW,
        )
    return ids


def _claim(db: Database, owner: str, limit: int = 100, now: float = NOW) -> list[str]:
    with db.transaction() as conn:
        got = repo.claim(
            conn,
            owner=owner,
            now=now,
            lease_s=10,
            limit=limit,
            node_level=True,
            skip_locked=not db.is_sqlite,
        )
    return [a.id for a in got]


def test_claims_never_hand_one_action_to_two_owners(db: Database) -> None:
    ids = _children(db, 200)
    results: dict[str, list[str]] = {}

    def worker(name: str) -> None:
        mine: list[str] = []
        for _ in range(30):
            mine.extend(_claim(db, name, limit=7))
        results[name] = mine

    threads = [threading.Thread(target=worker, args=(f"e{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [a for got in results.values() for a in got]
    assert len(claimed) == len(set(claimed)) == len(ids)
    # Interleaved claimers take disjoint batches.
    more = _children(db, 10, parent="q")
    first, second = _claim(db, "x", limit=5), _claim(db, "y", limit=5)
    assert len(first) == len(second) == 5 and not set(first) & set(second)
    assert set(first) | set(second) == set(more)


def test_a_claim_lasts_until_its_lease_runs_out(db: Database) -> None:
    (only,) = _children(db, 1)
    assert _claim(db, "a") == [only]
    assert _claim(db, "b", now=NOW + 5) == []
    with db.transaction() as conn:
        repo.heartbeat(conn, "a", NOW + 5, 10)
    assert _claim(db, "b", now=NOW + 12) == []
    assert _claim(db, "b", now=NOW + 16) == [only]
    with db.reading() as conn:
        action = repo.get_action(conn, only)
    assert action is not None and action.owner == "b" and action.attempts == 2


def test_only_the_current_owner_can_complete(db: Database) -> None:
    (only,) = _children(db, 1)
    _claim(db, "a")
    _claim(db, "b", now=NOW + 11)  # a's lease ran out; b took over
    with db.transaction() as conn:
        stale = repo.complete(conn, [Completion(only, ActionStatus.SUCCEEDED)], "a", NOW + 12)
        fresh = repo.complete(conn, [Completion(only, ActionStatus.FAILED, "x")], "b", NOW + 12)
    assert stale == [] and fresh == [only]
    with db.reading() as conn:
        action = repo.get_action(conn, only)
    assert action is not None and action.status is ActionStatus.FAILED


def test_dependents_become_ready_when_all_they_wait_on_succeed(db: Database) -> None:
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    with db.transaction() as conn:
        repo.insert_actions(
            conn,
            [
                NewAction(id=a, project_id="p", kind=ActionKind.NODE_CREATE, parent_id="x"),
                NewAction(id=b, project_id="p", kind=ActionKind.NODE_CREATE, parent_id="x"),
                NewAction(
                    id=c, project_id="p", kind=ActionKind.BARRIER, parent_id="x", depends_on=[a, b]
                ),
            ],
            NOW,
        )
    assert sorted(_claim(db, "e")) == sorted([a, b])
    with db.transaction() as conn:
        repo.complete(conn, [Completion(a, ActionStatus.SUCCEEDED)], "e", NOW)
    assert _claim(db, "e") == []
    with db.transaction() as conn:
        repo.complete(conn, [Completion(b, ActionStatus.SUCCEEDED)], "e", NOW)
    assert _claim(db, "e") == [c]


def test_a_failed_dependency_leaves_dependents_waiting_until_cancelled(db: Database) -> None:
    a, c = str(uuid.uuid4()), str(uuid.uuid4())
    with db.transaction() as conn:
        repo.insert_actions(
            conn,
            [
                NewAction(id=a, project_id="p", kind=ActionKind.NODE_CREATE, parent_id="x"),
                NewAction(
                    id=c, project_id="p", kind=ActionKind.NODE_CREATE, parent_id="x", depends_on=[a]
                ),
            ],
            NOW,
        )
    _claim(db, "e")
    with db.transaction() as conn:
        repo.complete(conn, [Completion(a, ActionStatus.FAILED, "boom")], "e", NOW)
        assert repo.cancel_pending_children(conn, "x", NOW, "parent failed") == 1
        counts = repo.child_counts(conn, "x")
    assert counts == {ActionStatus.FAILED: 1, ActionStatus.CANCELLED: 1}


def test_a_dead_owners_actions_are_claimed_before_ready_ones(db: Database) -> None:
    """Issue 23's 100,000-node chaos run: a killed engine's running actions, their leases run
    out, waited behind every READY action created before them (one plan's 100,000 siblings),
    117 s with a 10 s lease. Claims now take expired leases first."""
    orphaned = _children(db, 10)
    assert sorted(_claim(db, "dead", limit=10)) == sorted(orphaned)
    ready = [str(uuid.uuid4()) for _ in range(300)]
    with db.transaction() as conn:
        repo.insert_actions(
            conn,
            [
                NewAction(id=i, project_id="proj", kind=ActionKind.NODE_CREATE, parent_id="old")
                for i in ready
            ],
            NOW - 5,  # older than the orphans: first by creation
        )
    assert sorted(_claim(db, "b", limit=10, now=NOW + 20)) == sorted(orphaned)
    assert set(_claim(db, "b", limit=10, now=NOW + 20)) <= set(ready)


def test_a_flush_sized_completion_writes_each_actions_own_outputs(db: Database) -> None:
    """Issue 23: a flush of hundreds of completions is one statement on PostgreSQL (values as
    arrays); each action keeps its own status, reason and outputs, and only held ones end."""
    ids = _children(db, 150)
    held = _claim(db, "e", limit=140)
    done = [
        Completion(
            a,
            ActionStatus.SUCCEEDED if k % 4 else ActionStatus.FAILED,
            "" if k % 4 else f"no {k}",
            {"provider_id": f"srv-{k}", "address": None} if k % 4 else {},
        )
        for k, a in enumerate(ids)
    ]
    with db.transaction() as conn:
        finished = repo.complete(conn, done, "e", NOW + 1)
    assert sorted(finished) == sorted(held)
    with db.reading() as conn:
        for k, a in enumerate(ids):
            got = repo.get_action(conn, a)
            assert got is not None
            if a not in held:
                assert (got.status, got.ended_at) == (ActionStatus.READY, None)
                continue
            assert got.status is (ActionStatus.SUCCEEDED if k % 4 else ActionStatus.FAILED)
            assert got.status_reason == ("" if k % 4 else f"no {k}")
            assert got.outputs == ({"provider_id": f"srv-{k}", "address": None} if k % 4 else {})
            assert (got.ended_at, got.lease_expires_at) == (NOW + 1, None)


def test_a_small_completion_with_shared_values_writes_each_action(db: Database) -> None:
    """Issue 23: columns every row sets alike (one status, empty outputs) go as one value,
    the others as arrays, in batches of any size; each action still gets its own."""
    ids = _children(db, 5)
    held = _claim(db, "e", limit=5)
    shared = [Completion(a, ActionStatus.SUCCEEDED, "", {}) for a in ids[:3]]
    varying = [
        Completion(a, ActionStatus.SUCCEEDED, "", {"provider_id": f"srv-{k}"})
        for k, a in enumerate(ids[3:])
    ]
    with db.transaction() as conn:
        assert sorted(repo.complete(conn, shared, "e", NOW + 1)) == sorted(ids[:3])
        assert sorted(repo.complete(conn, varying, "e", NOW + 1)) == sorted(ids[3:])
    assert sorted(held) == sorted(ids)
    with db.reading() as conn:
        for k, a in enumerate(ids):
            got = repo.get_action(conn, a)
            assert got is not None
            assert (got.status, got.status_reason, got.ended_at) == (
                ActionStatus.SUCCEEDED,
                "",
                NOW + 1,
            )
            assert got.outputs == ({} if k < 3 else {"provider_id": f"srv-{k - 3}"})


def test_a_claimed_record_is_the_stored_one_and_frozen(db: Database) -> None:
    """A claim builds its records by a faster path (issue 23): equal to the row as read, frozen
    like any `ActionRecord`."""
    (action_id,) = _children(db, 1)
    with db.transaction() as conn:
        (got,) = repo.claim(
            conn, owner="e1", now=NOW, lease_s=10, limit=1, node_level=True, skip_locked=False
        )
    with db.reading() as conn:
        stored = repo.get_action(conn, action_id)
    assert type(got) is ActionRecord
    assert got == stored
    assert got.status is ActionStatus.RUNNING and got.kind is ActionKind.NODE_CREATE
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.status = ActionStatus.READY  # type: ignore[misc]
    assert dataclasses.replace(got, owner="e2").owner == "e2"
