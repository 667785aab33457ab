"""The server wrapper both peers share (`neutron_serve.py`, `octavia_serve.py`): a threaded
wsgiref server on a loopback port, then the `READY <url> <project>` line the tests wait for.
Imported as a plain module (the peers run as scripts in their own venvs, like `dbcache`)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

App = Callable[[dict[str, Any], Any], Iterable[bytes]]


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def start(application: App, port: int) -> str:
    """Serve `application` on 127.0.0.1:`port` in a daemon thread; its base URL."""
    httpd = make_server("127.0.0.1", port, application, server_class=_Server, handler_class=_Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{port}"


def ready(url: str, project: str, schema: str, started: float, migrated: float) -> None:
    """Report the start-up times and `READY`, then serve until killed."""
    print(
        f"startup: schema ({schema}) {migrated - started:.1f} s, "
        f"services {time.monotonic() - migrated:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    print(f"READY {url} {project}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        os._exit(0)
