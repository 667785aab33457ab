"""The simulated cloud kept in a SQLite file, so several Shoal processes share one cloud.

WAL mode lets readers run beside a writer; a reservation runs in `BEGIN IMMEDIATE`, so its
check of the key, the host and the free capacity and its insert are one step across processes.
Calls are short and synchronous: the file is local and each statement touches a few rows.
Triggers log the cluster of every change (a resource made, changed or removed, its host failed
or back) in `changes`, whatever process or statement made it: the change feed a real cloud
gives as Nova's `changes-since` (`changes_since`, issue 37).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shoal.files import narrow, private_dir, private_file
from shoal.model.inventory import Host
from shoal.model.nodes import Demand
from shoal.providers.sim.state import ACTIVE, BUILDING, ERROR, NoCapacityError, SimRecord, fits

FIRST_SLOT = 2
_KEPT_CHANGES = 100_000
"""Changes the feed keeps (at least): a reader further behind takes every cluster as changed."""

# Every index is written by every reservation's commit, so none is kept that another covers:
# `(host, slot)` serves the lookups by host, and only attached volumes enter `attached_to`'s
# (a file made by an older version loses its two earlier indexes when first opened).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    cluster TEXT NOT NULL,
    host TEXT NOT NULL,
    zone TEXT NOT NULL,
    state TEXT NOT NULL,
    vcpus INTEGER NOT NULL,
    ram_mb INTEGER NOT NULL,
    disk_gb INTEGER NOT NULL,
    volume_gb INTEGER NOT NULL,
    slot INTEGER,
    attached_to TEXT,
    flavor TEXT NOT NULL DEFAULT '',
    image TEXT NOT NULL DEFAULT '',
    UNIQUE (kind, key)
);
CREATE INDEX IF NOT EXISTS resources_host_slot ON resources (host, slot);
CREATE INDEX IF NOT EXISTS resources_cluster ON resources (cluster);
CREATE INDEX IF NOT EXISTS resources_attached_to ON resources (attached_to)
    WHERE attached_to IS NOT NULL;
CREATE TABLE IF NOT EXISTS failed_hosts (host TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, cluster TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS resources_made AFTER INSERT ON resources
    BEGIN INSERT INTO changes (cluster) VALUES (NEW.cluster); END;
CREATE TRIGGER IF NOT EXISTS resources_changed AFTER UPDATE ON resources
    BEGIN INSERT INTO changes (cluster) VALUES (NEW.cluster); END;
CREATE TRIGGER IF NOT EXISTS resources_removed AFTER DELETE ON resources
    BEGIN INSERT INTO changes (cluster) VALUES (OLD.cluster); END;
CREATE TRIGGER IF NOT EXISTS hosts_failed AFTER INSERT ON failed_hosts
    BEGIN INSERT INTO changes (cluster)
        SELECT DISTINCT cluster FROM resources WHERE host = NEW.host; END;
CREATE TRIGGER IF NOT EXISTS hosts_back AFTER DELETE ON failed_hosts
    BEGIN INSERT INTO changes (cluster)
        SELECT DISTINCT cluster FROM resources WHERE host = OLD.host; END;
DROP INDEX IF EXISTS resources_host;
DROP INDEX IF EXISTS resources_attached;
"""

_COLUMNS = (
    "id, kind, key, name, cluster, host, zone, state, vcpus, ram_mb, disk_gb, volume_gb, "
    "slot, attached_to, flavor, image"
)


class SqliteState:
    def __init__(self, path: Path) -> None:
        private_dir(path.parent, ours=False)
        private_file(path)  # its WAL and SHM files take the database's mode
        for suffix in ("-wal", "-shm"):
            narrow(path.with_name(path.name + suffix))
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        # No fsync, even at checkpoints: a simulated cloud need not outlive the machine, and
        # WAL with synchronous=OFF still survives a killed process (the chaos benchmark). The
        # checkpoints' fsyncs were a quarter of a reservation's CPU.
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)

    def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        db = self._db
        top, low = db.execute("SELECT coalesce(max(seq), 0), min(seq) FROM changes").fetchone()
        if cursor is None or (low is not None and cursor < low - 1):
            return int(top), None  # none yet, or older than what is kept: everything
        clusters = frozenset(
            c
            for (c,) in db.execute(
                "SELECT DISTINCT cluster FROM changes WHERE seq > ? AND seq <= ?", (cursor, top)
            )
        )
        if low is not None and top - low > _KEPT_CHANGES * 2:
            db.execute("DELETE FROM changes WHERE seq <= ?", (top - _KEPT_CHANGES,))
        return int(top), clusters

    def by_key(self, kind: str, key: str) -> SimRecord | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM resources WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        return _record(row) if row else None

    def by_id(self, resource_id: str) -> SimRecord | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM resources WHERE id = ?", (resource_id,)
        ).fetchone()
        return _record(row) if row else None

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        (outcome,) = self.reserve_many([(record, host)])
        if isinstance(outcome, NoCapacityError):
            raise outcome
        return outcome

    def reserve_many(
        self, wanted: Sequence[tuple[SimRecord, Host]]
    ) -> list[tuple[SimRecord, bool] | NoCapacityError]:
        """`reserve` of each, in order, in one transaction: one lock and one commit (the
        commit, which writes every page an insert touched, is most of a reservation's CPU)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            outcomes: list[tuple[SimRecord, bool] | NoCapacityError] = []
            for record, host in wanted:
                try:
                    outcomes.append(self._reserve(record, host))
                except NoCapacityError as e:
                    outcomes.append(e)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return outcomes

    def _reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        """One reservation inside the caller's transaction; it writes only once it fits."""
        db = self._db
        existing = self.by_key(record.kind, record.key)
        if existing is not None:
            return existing, False
        if db.execute("SELECT 1 FROM failed_hosts WHERE host = ?", (host.name,)).fetchone():
            raise NoCapacityError(f"host {host.name} is down")
        row = db.execute(
            "SELECT COALESCE(SUM(vcpus), 0), COALESCE(SUM(ram_mb), 0), "
            "COALESCE(SUM(disk_gb), 0), COALESCE(SUM(volume_gb), 0) "
            "FROM resources WHERE host = ?",
            (host.name,),
        ).fetchone()
        short = fits(host, Demand(*row), record.demand)
        if short is not None:
            raise NoCapacityError(short)
        if record.kind == "server":
            record.slot = self._free_slot(host.name)
        d = record.demand
        db.execute(
            f"INSERT INTO resources ({_COLUMNS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.kind,
                record.key,
                record.name,
                record.cluster,
                record.host,
                record.zone,
                record.state,
                d.vcpus,
                d.ram_mb,
                d.disk_gb,
                d.volume_gb,
                record.slot,
                record.attached_to,
                record.flavor,
                record.image,
            ),
        )
        return record, True

    def _free_slot(self, host: str) -> int:
        """The lowest slot number not taken on `host`: one index lookup when the taken slots
        have no gap (the usual case), else one query for the first gap."""
        count, low, high = self._db.execute(
            "SELECT COUNT(slot), MIN(slot), MAX(slot) FROM resources "
            "WHERE host = ? AND slot IS NOT NULL",
            (host,),
        ).fetchone()
        if count == 0 or low > FIRST_SLOT:
            return FIRST_SLOT
        if high - low + 1 == count:
            return int(high) + 1
        (gap,) = self._db.execute(
            "SELECT MIN(r.slot) + 1 FROM resources r WHERE r.host = ? AND r.slot IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM resources t WHERE t.host = r.host "
            "AND t.slot = r.slot + 1)",
            (host,),
        ).fetchone()
        return int(gap)

    def set_state(self, resource_id: str, state: str) -> bool:
        changed = self._db.execute(
            "UPDATE resources SET state = ? WHERE id = ?", (state, resource_id)
        ).rowcount
        return bool(changed)

    def finish_builds(self, resource_ids: Sequence[str]) -> tuple[list[bool], frozenset[str]]:
        """`set_state(id, ACTIVE)` of each, in one transaction, and the failed hosts then."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            changed = [
                bool(
                    db.execute(
                        "UPDATE resources SET state = ? WHERE id = ?", (ACTIVE, rid)
                    ).rowcount
                )
                for rid in resource_ids
            ]
            failed = frozenset(h for (h,) in db.execute("SELECT host FROM failed_hosts"))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return changed, failed

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if self.by_id(resource_id) is None:
                db.execute("COMMIT")
                return None
            row = db.execute(
                "SELECT COALESCE(SUM(vcpus), 0), COALESCE(SUM(ram_mb), 0), "
                "COALESCE(SUM(disk_gb), 0), COALESCE(SUM(volume_gb), 0) "
                "FROM resources WHERE host = ? AND id != ?",
                (host.name, resource_id),
            ).fetchone()
            short = fits(host, Demand(*row), demand)
            if short is not None:
                raise NoCapacityError(short)
            db.execute(
                "UPDATE resources SET vcpus = ?, ram_mb = ?, disk_gb = ?, volume_gb = ?, "
                "flavor = ?, image = ?, state = ? WHERE id = ?",
                (
                    demand.vcpus,
                    demand.ram_mb,
                    demand.disk_gb,
                    demand.volume_gb,
                    flavor,
                    image,
                    BUILDING,
                    resource_id,
                ),
            )
            record = self.by_id(resource_id)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return record

    def set_attached(self, resource_id: str, server_id: str | None) -> None:
        self._db.execute(
            "UPDATE resources SET attached_to = ? WHERE id = ?", (server_id, resource_id)
        )

    def remove(self, resource_id: str) -> SimRecord | None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            record = self.by_id(resource_id)
            if record is not None:
                db.execute("DELETE FROM resources WHERE id = ?", (resource_id,))
                db.execute(
                    "UPDATE resources SET attached_to = NULL WHERE attached_to = ?",
                    (resource_id,),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return record

    def records(self, cluster: str | None = None) -> list[SimRecord]:
        if cluster is None:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM resources ORDER BY rowid")
        else:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM resources WHERE cluster = ? ORDER BY rowid", (cluster,)
            )
        return [_record(row) for row in rows]

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        # `#` (0x23) then `$` (0x24): the stored keys `key#...`, a range of the UNIQUE index.
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM resources WHERE kind = ? "
            "AND (key = ? OR (key >= ? AND key < ?)) ORDER BY rowid",
            (kind, key, key + "#", key + "$"),
        )
        return [_record(row) for row in rows]

    def failed_hosts(self) -> set[str]:
        return {h for (h,) in self._db.execute("SELECT host FROM failed_hosts")}

    def mark_host(self, host: str, failed: bool) -> list[str]:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            ids = [
                rid
                for (rid,) in db.execute(
                    "SELECT id FROM resources WHERE host = ? ORDER BY rowid", (host,)
                )
            ]
            if failed:
                db.execute("INSERT OR IGNORE INTO failed_hosts (host) VALUES (?)", (host,))
                db.execute(
                    "UPDATE resources SET state = ? WHERE host = ? AND kind = 'server'",
                    (ERROR, host),
                )
            else:
                db.execute("DELETE FROM failed_hosts WHERE host = ?", (host,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return ids

    def host_counts(self) -> dict[str, int]:
        return {
            host: n
            for host, n in self._db.execute("SELECT host, COUNT(*) FROM resources GROUP BY host")
        }

    def close(self) -> None:
        self._db.close()


def _record(row: tuple[Any, ...]) -> SimRecord:
    (rid, kind, key, name, cluster, host, zone, state, vcpus, ram, disk, vol, slot, att, fl, im) = (
        row
    )
    return SimRecord(
        id=rid,
        kind=kind,
        key=key,
        name=name,
        cluster=cluster,
        host=host,
        zone=zone,
        state=state,
        demand=Demand(vcpus, ram, disk, vol),
        slot=slot,
        attached_to=att,
        flavor=fl,
        image=im,
    )
