"""The built-in node: a small HTTP service that a local server runs when its image has no command.

`python -m shoal.providers.local.nodeserver --name N --address IP --port P --workdir DIR
--node-id KEY` serves `GET /` (who and where it is, with the volumes attached right now),
`GET /health`, and `GET /www/NAME`: a file that software deployed on the node wrote into
`WORKDIR/www/` (what `curl` of a deployed service answers; docs/software.md). The node id sits
in its command line so the provider can tell this process from an unrelated one that later got
the same pid. Standard library only, so it starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from shoal.files import read_beneath
from shoal.providers.local.volumes import attached_views

_WWW_MAX = 1024 * 1024
"""The largest file `GET /www/NAME` serves."""

PID_FILE = ".shoal-pid"
"""Where the provider writes the pid the host knows a sandboxed node by (its own is its pid
namespace's); `GET /` shows that one, so the node's pid means the same inside and out."""


class NodeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self._host_pid: int | None = None
        self.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        super().__init__((options.address, options.port), NodeHandler)

    def describe(self) -> dict[str, Any]:
        o = self.options
        return {
            "name": o.name,
            "node_id": o.node_id,
            "address": o.address,
            "port": o.port,
            "host": o.host,
            "zone": o.zone,
            "volumes": attached_views(Path(o.workdir)),
            "pid": self.host_pid(),
            "started_at": self.started_at,
        }

    def host_pid(self) -> int:
        """Read once and kept: the node's directory may later be lost behind its back."""
        if self._host_pid is None:
            raw = read_beneath(Path(self.options.workdir), PID_FILE, 32)
            text = (raw or b"").decode(errors="replace").strip()
            if text.isdigit():
                self._host_pid = int(text)
        return os.getpid() if self._host_pid is None else self._host_pid


class NodeHandler(BaseHTTPRequestHandler):
    server: NodeHTTPServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self._send(200, b"ok", "text/plain")
        elif path == "/":
            body = json.dumps(self.server.describe()).encode()
            self._send(200, body, "application/json")
        elif path.startswith("/www/"):
            self._www(path.removeprefix("/www/"))
        else:
            self._send(404, b"not found", "text/plain")

    def _www(self, name: str) -> None:
        # One plain name inside www/: no path separators, no dot-files, nothing outside it.
        if not name or "/" in name or "\\" in name or name.startswith("."):
            self._send(404, b"not found", "text/plain")
            return
        # Opened without following a link anywhere below the workdir (www/ itself included).
        body = read_beneath(Path(self.server.options.workdir), f"www/{name}", _WWW_MAX)
        if body is None:
            self._send(404, b"not found", "text/plain")
            return
        kind = "text/html" if name.endswith(".html") else "text/plain"
        self._send(200, body, f"{kind}; charset=utf-8")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: health polls would fill the node's log."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="shoal-node", description=__doc__)
    p.add_argument("--name", required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--node-id", required=True)
    p.add_argument("--host", default=None)
    p.add_argument("--zone", default=None)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_args(argv)
    os.chdir(options.workdir)
    server = NodeHTTPServer(options)
    print(f"node {options.name} serving on {options.address}:{options.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
