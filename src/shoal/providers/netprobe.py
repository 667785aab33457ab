"""Network probes of a replica (an http GET, a tcp connect) from the engine's host.

Two runtimes probe replicas over the network: the `local` podman runtime and the runtime
carried by the servers' agents (engine/agent_replicas.py). Both judge a probe the way
Kubernetes does (an http status of 200..399 passes; a connect that succeeds passes), so the
judgement lives here once. Blocking: callers run them in a thread.
"""

from __future__ import annotations

import contextlib
import http.client
import socket

__all__ = ["http_ok", "tcp_ok"]


def http_ok(address: str, port: int, path: str, timeout_s: float) -> bool:
    """A GET of `path` answered 200..399 within `timeout_s`."""
    conn = http.client.HTTPConnection(address, port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        return 200 <= conn.getresponse().status < 400
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def tcp_ok(address: str, port: int, timeout_s: float) -> bool:
    """A TCP connect to `address:port` succeeded within `timeout_s`."""
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout_s):
        return True
    return False
