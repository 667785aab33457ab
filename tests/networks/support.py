"""Real TCP on loopback for the network tests: small servers on chosen addresses, connects
from a chosen source address, and a cluster's networking built from a real document."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from collections.abc import Sequence
from pathlib import Path

from shoal.documents import load_cluster
from shoal.model.catalogs import default_inventory
from shoal.model.networks import NetworkSpec
from shoal.providers.local import netfilter
from shoal.providers.networking import ClusterNetworks, ServerAddress
from shoal.store.records import NodeRecord
from tests.support import ports
from tests.support.records import node_record


def addresses(n: int) -> list[str]:
    """`n` loopback addresses in 127.200-239.x.y, random per run so tests running side by
    side (and other checkouts on the machine) do not meet."""
    second = random.randrange(200, 240)
    third = random.randrange(1, 255)
    start = random.randrange(2, 250 - n)
    return [f"127.{second}.{third}.{start + i}" for i in range(n)]


def networking(document: str) -> NetworkSpec:
    return load_cluster(document, default_inventory()).networking


def cluster(
    spec: NetworkSpec, servers: Sequence[tuple[str, str, str]], cluster_id: str
) -> ClusterNetworks:
    """`servers`: (node name, group, address)."""
    return ClusterNetworks(
        cluster_id,
        "net-test",
        spec,
        tuple(ServerAddress(name, group, None, addr) for name, group, addr in servers),
    )


class Serving:
    """A TCP server on `address:port` answering every connection (or HTTP request) with a
    line naming it."""

    def __init__(self, name: str, address: str, port: int) -> None:
        self.name, self.address, self.port = name, address, port
        self._server: asyncio.Server | None = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.read(4096), 5.0)
            body = self.name.encode()
            if head.startswith(b"GET") or head.startswith(b"HEAD"):
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (len(body), body)
                )
            else:
                writer.write(body)
            await writer.drain()
        except (TimeoutError, OSError):
            pass
        finally:
            writer.close()

    async def start(self) -> Serving:
        self._server = await asyncio.start_server(self._handle, self.address, self.port)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None


def free_port(address: str) -> int:
    """A port free on `address`, handed to no other test process (tests/support/ports.py)."""
    return ports.free_port(address)


async def connect(source: str, address: str, port: int, timeout: float = 5.0) -> str:
    """Connect from `source` and send a probe: "ok:<answer>", "refused", or "timeout"."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(address, port, local_addr=(source, 0)), timeout
        )
    except ConnectionRefusedError:
        return "refused"
    except TimeoutError:
        return "timeout"
    try:
        writer.write(b"hello\n")
        await writer.drain()
        data = await asyncio.wait_for(reader.read(4096), timeout)
        return "ok:" + data.decode(errors="replace")
    except (ConnectionResetError, TimeoutError) as e:
        return f"reset:{type(e).__name__}"
    finally:
        writer.close()


async def http_get(address: str, port: int, timeout: float = 5.0) -> str | None:
    """The body of GET / (None when nothing answered well)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout)
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(f"GET / HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(65536), timeout)
    except (OSError, TimeoutError):
        return None
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return body.decode(errors="replace") if head.startswith(b"HTTP/1.1 200") else None


def sweep(root: Path) -> None:
    """Stop every HAProxy and drop every nftables table that homes under `root` made (a
    failed or killed test must not leave filters on the machine's loopback)."""
    clusters: set[str] = set()
    for directory in root.rglob("networking"):
        for pidfile in directory.glob("*/lb-*.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
        clusters.update(d.name.lower().replace("-", "_") for d in directory.iterdir())
    if clusters:
        for table in asyncio.run(netfilter.tables("shoal_")):
            if any(table.endswith("_" + c) for c in clusters):
                asyncio.run(netfilter.delete(table))


def server_node(name: str, address: str) -> NodeRecord:
    """An ACTIVE server of group `web` at `address`, as the node rows give it."""
    return node_record(name, cluster_id="c", address=address)
