"""Waking engines when work appears, with the database's own means (issue 23).

On PostgreSQL, a transaction that makes actions runnable (new READY actions, dependents whose
count reached zero) sends `NOTIFY shoal_work`; PostgreSQL delivers it at commit, only if the
transaction commits, and folds repeats within one transaction into one. Each engine holds one
connection that LISTENs (a `Listener`, on its own thread) and wakes its loops, so idle engines
need not poll the actions table every 50 ms: they look now and then (a lease that ran out is
noticed by time, not by a write) and at once when told. SQLite has no such channel between
processes; there the engine keeps its short poll (`Listener.available` is False).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable

from sqlalchemy import Connection, text

from shoal.store.database import Database

log = logging.getLogger("shoal.store.wakeups")

CHANNEL = "shoal_work"


_STOP_CHECK_S = 5.0
"""How often a listener idle on its connection looks whether it was asked to stop, should the
NOTIFY on its own channel that `stop` sends not arrive (issue 23: looking every 0.1 s was a
quarter of an idle engine's CPU)."""


def notify_work(conn: Connection) -> None:
    """Tell listening engines, at this transaction's commit, that there is work to claim."""
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"NOTIFY {CHANNEL}"))


class Listener:
    """One LISTEN connection on a daemon thread calling `wake` for each notification.

    A lost connection is opened again after a pause; meanwhile `healthy` is False and the
    engine falls back to its short poll."""

    def __init__(self, db: Database, wake: Callable[[], None], *, retry_s: float = 1.0) -> None:
        self._db = db
        self._url = db.engine.url
        self._own = f"shoal_stop_{uuid.uuid4().hex[:16]}"
        """This listener's own channel: `stop` wakes the thread through it."""
        self.available = db.engine.dialect.name == "postgresql"
        self._wake = wake
        self._retry_s = retry_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.healthy = False

    def start(self) -> None:
        if not self.available or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="shoal-listen", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and self.healthy:
            try:
                with self._db.engine.connect() as conn:
                    conn.execute(text(f"NOTIFY {self._own}"))
                    conn.commit()
            except Exception:  # the database is gone: the thread sees `_stop` within its wait
                log.debug("waking the listener to stop failed", exc_info=True)
        if thread is not None:
            thread.join(timeout=5)
        self.healthy = False

    def _conninfo(self) -> str:
        url = self._url.set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    def _run(self) -> None:
        import psycopg  # only with PostgreSQL, whose driver is then installed

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._conninfo(), autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    conn.execute(f"LISTEN {self._own}")
                    self.healthy = True
                    self._wake()  # anything sent while we were not listening
                    while not self._stop.is_set():
                        for n in conn.notifies(timeout=_STOP_CHECK_S, stop_after=1):
                            if n.channel == CHANNEL:
                                self._wake()
            except Exception as e:  # the database restarted, the network dropped
                log.warning("listening for work failed (%s); polling until it is back", e)
            self.healthy = False
            self._stop.wait(self._retry_s)
