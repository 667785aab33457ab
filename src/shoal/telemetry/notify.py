"""Notifications on the message bus (issue 27), through oslo.messaging, as Senlin sends them.

Ceilometer, Aodh or an operator's own consumer read versioned notifications from the bus;
Shoal publishes its cluster, node and action lifecycle there when `notifications_url` is set
(off by default). The engine only hands a notification to a bounded buffer (`emit`, never
blocking); a publisher process of its own sends them. A slow or lost bus fills the buffer, and
what does not fit is dropped and counted (`shoal_notifications_total{outcome="dropped"}`): a
lost bus never blocks or fails an action.

What is sent is built by the engine (`engine/notifications.py`) from plain values; this module
knows nothing of clusters, only of event types, priorities and JSON payloads.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import socket
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from shoal.telemetry.metrics import NOTIFICATIONS

log = logging.getLogger("shoal.notify")


@dataclass(frozen=True, slots=True)
class Notification:
    event_type: str
    """e.g. `cluster.create.start`."""
    payload: dict[str, Any]
    priority: str = "INFO"
    """INFO or ERROR (oslo.messaging's names)."""


class Notifier(Protocol):
    enabled: bool

    def emit(self, note: Notification) -> None: ...

    def close(self) -> None: ...


class Silent:
    """Notifications off (the default): nothing is built, nothing is sent."""

    enabled = False

    def emit(self, note: Notification) -> None:
        return None

    def close(self) -> None:
        return None


class BusNotifier:
    """Publishes to an oslo.messaging notification transport from a process of its own.

    A process, not a thread: oslo.messaging's AMQP path is pure Python and competes with the
    engine for the interpreter lock. With a publisher thread, a 1,000-node create took 2.9x as
    long with the bus on as off (benchmarks/metrics.py, a loaded 2-core machine; that run did
    not separate the transport's start-up); with this process, 1.1x to 1.95x (it takes a core of
    its own). The engine's side of `emit` is a non-blocking put on a bounded queue; the
    publisher reports what it sent and failed through two shared counters, which a sleeping
    thread here adds to the metrics once a second."""

    enabled = True

    def __init__(
        self,
        url: str,
        *,
        topic: str = "versioned_notifications",
        buffer: int = 10_000,
        publisher: str | None = None,
    ) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._queue: Any = ctx.Queue(maxsize=buffer)
        self._sent: Any = ctx.Value("q", 0)
        self._failed: Any = ctx.Value("q", 0)
        self._counted = (0, 0)
        self._ready: Any = ctx.Event()
        self._process = ctx.Process(
            target=_publish,
            args=(
                url,
                topic,
                publisher or f"shoal-engine:{socket.gethostname()}",
                self._queue,
                self._sent,
                self._failed,
                self._ready,
            ),
            name="shoal-notify",
            daemon=True,
        )
        self._process.start()
        self._closed = threading.Event()
        self._counter = threading.Thread(target=self._count, name="shoal-notify-count", daemon=True)
        self._counter.start()

    @property
    def sent(self) -> int:
        """Notifications the publisher has sent so far."""
        return int(self._sent.value)

    def wait_ready(self, timeout_s: float) -> bool:
        """Whether the publisher has connected its transport (a benchmark waits for it)."""
        return bool(self._ready.wait(timeout_s))

    def emit(self, note: Notification) -> None:
        try:
            self._queue.put_nowait((note.event_type, note.payload, note.priority))
        except queue.Full:
            NOTIFICATIONS.labels("dropped").inc()

    def close(self, timeout_s: float = 10.0) -> None:
        """Send what is buffered (for at most `timeout_s`), then stop the publisher."""
        try:
            self._queue.put(None, timeout=timeout_s)
            self._process.join(timeout_s)
        except queue.Full:
            pass
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(5)
        self._closed.set()
        self._counter.join(5)
        self._queue.cancel_join_thread()

    def _count(self) -> None:
        while True:
            stop = self._closed.wait(1.0)
            sent, failed = self._sent.value, self._failed.value
            NOTIFICATIONS.labels("sent").inc(sent - self._counted[0])
            NOTIFICATIONS.labels("failed").inc(failed - self._counted[1])
            self._counted = (sent, failed)
            if stop:
                return


def _publish(
    url: str, topic: str, publisher: str, q: Any, sent: Any, failed: Any, ready: Any
) -> None:
    """The publisher process: send each notification as it comes; None ends it."""
    import oslo_messaging
    from oslo_config import cfg

    conf = cfg.ConfigOpts()
    conf([], project="shoal", default_config_files=[], default_config_dirs=[])
    transport = oslo_messaging.get_notification_transport(conf, url=url)
    # retry=0: a send fails fast when the bus is gone; the buffer absorbs the outage.
    notifier = oslo_messaging.Notifier(
        transport, publisher_id=publisher, driver="messagingv2", topics=[topic], retry=0
    )
    ready.set()
    while True:
        item = q.get()
        if item is None:
            break
        event_type, payload, priority = item
        send = notifier.error if priority == "ERROR" else notifier.info
        try:
            send({}, event_type, payload)
        except Exception as e:
            with failed.get_lock():
                failed.value += 1
            log.warning("notification %s not sent: %s", event_type, e)
        else:
            with sent.get_lock():
                sent.value += 1
    os._exit(0)  # the transport's own threads would keep the process waiting at exit
