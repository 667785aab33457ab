"""The openstack provider's connection and its REST clients, one per service, sharing one
worker pool (openstacksdk blocks: rest.py runs its calls there)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shoal.providers.errors import ProviderError
from shoal.providers.openstack.rest import Rest

COMPUTE_MICROVERSION = "2.74"
"""Tags at boot (2.52), "networks": "none" (2.37), max_server_per_host (2.64), host (2.74)."""
VOLUME_MICROVERSION = "3.0"


class OpenStackClients:
    def __init__(
        self, connection: Callable[[], Any], concurrency: int, request_timeout_s: float
    ) -> None:
        self._factory = connection
        self._connection: Any = None
        self._executor = ThreadPoolExecutor(max(1, concurrency), "shoal-openstack")
        t = request_timeout_s
        self.compute = Rest(
            lambda: self.conn().compute,
            self._executor,
            microversion=COMPUTE_MICROVERSION,
            timeout_s=t,
        )
        self.block_storage = Rest(
            lambda: self.conn().block_storage,
            self._executor,
            microversion=VOLUME_MICROVERSION,
            timeout_s=t,
        )
        self.image = Rest(lambda: self.conn().image, self._executor, timeout_s=t)
        self.network = Rest(lambda: self.conn().network, self._executor, timeout_s=t)
        self.load_balancer = Rest(lambda: self.conn().load_balancer, self._executor, timeout_s=t)

    def conn(self) -> Any:
        # Made on first use, in a worker thread: openstacksdk may read files and authenticate.
        if self._connection is None:
            self._connection = self._factory()
        return self._connection

    def close(self) -> None:
        conn = self._connection
        self._connection = None
        if conn is not None:
            with contextlib.suppress(ProviderError, OSError, RuntimeError):
                conn.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
