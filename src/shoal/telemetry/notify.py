"""Notifications on the message bus (issue 27), through oslo.messaging, as Senlin sends them.

Ceilometer, Aodh or an operator's own consumer read versioned notifications from the bus;
Shoal publishes its cluster, node and action lifecycle there when `notifications_url` is set
(off by default). The engine only hands a notification to a bounded buffer (`emit`, never
blocking); one publisher thread sends them. A slow or lost bus fills the buffer, and what does
not fit is dropped and counted (`shoal_notifications_total{outcome="dropped"}`): a lost bus
never blocks or fails an action.

What is sent is built by the engine (`engine/notifications.py`) from plain values; this module
knows nothing of clusters, only of event types, priorities and JSON payloads.
"""

from __future__ import annotations

import logging
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


_STOP = Notification("", {})


class BusNotifier:
    """Publishes to an oslo.messaging notification transport from a thread of its own."""

    enabled = True

    def __init__(
        self,
        url: str,
        *,
        topic: str = "versioned_notifications",
        buffer: int = 10_000,
        publisher: str | None = None,
    ) -> None:
        self.url = url
        self.topic = topic
        self.publisher = publisher or f"shoal-engine:{socket.gethostname()}"
        self._queue: queue.Queue[Notification] = queue.Queue(maxsize=buffer)
        self._thread = threading.Thread(target=self._run, name="shoal-notify", daemon=True)
        self._thread.start()

    def emit(self, note: Notification) -> None:
        try:
            self._queue.put_nowait(note)
        except queue.Full:
            NOTIFICATIONS.labels("dropped").inc()

    def close(self, timeout_s: float = 5.0) -> None:
        """Send what is buffered (for at most `timeout_s`), then stop the thread."""
        try:
            self._queue.put(_STOP, timeout=timeout_s)
        except queue.Full:
            return
        self._thread.join(timeout_s)

    def _run(self) -> None:
        import oslo_messaging
        from oslo_config import cfg

        conf = cfg.ConfigOpts()
        conf([], project="shoal", default_config_files=[], default_config_dirs=[])
        transport = oslo_messaging.get_notification_transport(conf, url=self.url)
        # retry=0: a send fails fast when the bus is gone; the buffer absorbs the outage.
        notifier = oslo_messaging.Notifier(
            transport,
            publisher_id=self.publisher,
            driver="messagingv2",
            topics=[self.topic],
            retry=0,
        )
        try:
            while True:
                note = self._queue.get()
                if note is _STOP:
                    return
                send = notifier.error if note.priority == "ERROR" else notifier.info
                try:
                    send({}, note.event_type, note.payload)
                except Exception as e:
                    NOTIFICATIONS.labels("failed").inc()
                    log.warning("notification %s not sent: %s", note.event_type, e)
                else:
                    NOTIFICATIONS.labels("sent").inc()
        finally:
            transport.cleanup()
