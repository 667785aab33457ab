"""`shoal server [stop|status]`: the HTTP API under uvicorn, with the engine in the app's lifespan.

A server records itself in `$SHOAL_HOME/server.json`, so commands without `--url` talk to it;
`--background` (used by those commands, see background.py) listens on a free loopback port.
The heavy imports (uvicorn, the app, the runtime) happen only when a server really starts.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from shoal.cli import background, screen, serverlog
from shoal.cli.errors import EXIT_FAILED, EXIT_INVALID, EXIT_OK, CliError
from shoal.cli.runner import run
from shoal.cli.serverlog import LogFormat
from shoal.cli.where import home_dir
from shoal.files import private_dir, write_private

if TYPE_CHECKING:
    from shoal.settings import Settings

GC_THRESHOLDS = (50_000, 20, 10)
"""The server's collector thresholds (issue 23): with the default (700, 10, 10) collections
took 0.5 s of the engines' CPU in a 10,000-node create."""

app = typer.Typer(
    help="Serve Shoal's HTTP API with the engine and manager; `stop` and `status` for the "
    "background one.",
)


@app.callback(invoke_without_command=True)
def server(
    ctx: typer.Context,
    port: Annotated[
        int | None, typer.Option("--port", "-p", help="TCP port; default 8470 (SHOAL_PORT).")
    ] = None,
    bind: Annotated[
        str | None,
        typer.Option("--bind", help="Address to listen on; default 127.0.0.1 (SHOAL_BIND)."),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="Log level of uvicorn and the engine.")
    ] = "info",
    log_format: Annotated[
        LogFormat,
        typer.Option("--log-format", help="The engine's log lines: text or json."),
    ] = LogFormat.TEXT,
    tls_certfile: Annotated[
        Path | None, typer.Option("--tls-certfile", help="Serve HTTPS with this certificate (PEM).")
    ] = None,
    tls_keyfile: Annotated[
        Path | None, typer.Option("--tls-keyfile", help="The certificate's private key (PEM).")
    ] = None,
    in_background: Annotated[
        bool,
        typer.Option(
            "--background",
            hidden=True,
            help="Serve on a free loopback port as the home's background Shoal.",
        ),
    ] = False,
) -> None:
    """Serve Shoal's HTTP API on this machine until Ctrl-C (or `shoal server stop`)."""
    if ctx.invoked_subcommand is not None:
        return

    async def body() -> int:
        import uvicorn

        from shoal.api.app import create_app, warm_up
        from shoal.cli.client import load_settings
        from shoal.cli.header_timeout import with_timeout
        from shoal.cli.stopping import DRAIN_SHARE, BoundedServer
        from shoal.runtime import Runtime

        settings = load_settings()
        tls = _tls(tls_certfile, tls_keyfile)
        serverlog.configure(log_level, log_format)
        host = "127.0.0.1" if in_background else (bind or settings.bind)
        listen = 0 if in_background else (port if port is not None else settings.port)
        sock = _listen(host, listen)
        listen = sock.getsockname()[1]
        # Issue 39: the agents' own listener, all a local node may reach of Shoal.
        agents = None if settings.agent_url else _agents_listener(host, settings)
        try:
            runtime = await Runtime.open(settings)
        except ValueError as e:
            for s in (sock, agents):
                if s is not None:
                    s.close()
            raise CliError(str(e), EXIT_INVALID) from None
        shown = f"[{host}]" if ":" in host else host
        scheme = "https" if tls else "http"
        url = f"{scheme}://{_reachable(shown)}:{listen}"
        agent_port = agents.getsockname()[1] if agents is not None else None
        agent_url = f"{scheme}://{_reachable(shown)}:{agent_port}" if agents else None
        runtime.engine.deployer.agent_url = settings.agent_url or agent_url  # issue 11: agents
        recorded = background.running(settings.home) is None
        try:
            err = screen.err()
            if runtime.new_admin_token is not None:
                err.print(f"created the admin token: {runtime.token_path}")
            else:
                err.print(f"admin token: {runtime.token_path}")
            err.print(
                f"Shoal {settings.provider} provider, data in {settings.home}; "
                f"serving {scheme}://{shown}:{listen} (docs at /docs)"
            )
            if runtime.capabilities.single_tenant:
                err.print(f"serving the admin only: {runtime.capabilities.single_tenant}")
            if recorded:
                state = background.ServerState(os.getpid(), url, in_background)
                background.write_state(settings.home, state)
            app = create_app(runtime, run_engine=True, agent_port=agent_port)
            await warm_up(app)  # before the freeze: what it builds lives as long as the app
            # Issue 23: everything built so far (modules, the app, the runtime) lives as long
            # as the process, yet each full collection walked it again: 0.2 s a collection,
            # a quarter of the engines' CPU during a 10,000-node create. Frozen, a collection
            # walks only what was made since.
            gc.collect()
            gc.freeze()
            # The engine makes and drops many small objects per batch (rows, records,
            # events): at the default 700 the young generation was collected every few
            # hundred of them, each time walking what a batch still held.
            gc.set_threshold(*GC_THRESHOLDS)
            config = uvicorn.Config(
                app,
                lifespan="on",
                log_level=log_level,
                ssl_certfile=tls[0] if tls else None,
                ssl_keyfile=tls[1] if tls else None,
                timeout_graceful_shutdown=max(1, int(settings.stop_grace_s * DRAIN_SHARE)),
                http=with_timeout(settings.header_timeout_s),
            )
            # uvicorn shuts down gracefully on SIGTERM, then re-raises it: make that an
            # interrupt, so the runtime below still closes.
            signal.signal(signal.SIGTERM, _interrupt)

            def forget_me() -> None:
                if recorded:
                    background.clear_state(settings.home, os.getpid())

            served = BoundedServer(
                config,
                grace_s=settings.stop_grace_s,
                on_forced_exit=forget_me,
                on_stop=runtime.engine.stop,
            )
            await served.serve(sockets=[sock] if agents is None else [sock, agents])
        finally:
            if recorded:
                background.clear_state(settings.home, os.getpid())
            await runtime.close()
        return EXIT_OK

    try:
        run(body, until_interrupted=True)
    except typer.Exit as done:
        # Everything is written and closed: skip the interpreter's teardown of a big process
        # (seconds on a loaded machine), which would spend the stop's bounded grace.
        end_now(done.exit_code)


def _tls(certfile: Path | None, keyfile: Path | None) -> tuple[str, str] | None:
    """uvicorn's certfile and keyfile, or a clear refusal (exit 2) before anything starts."""
    if certfile is None and keyfile is None:
        return None
    if certfile is None or keyfile is None:
        raise CliError("give both --tls-certfile and --tls-keyfile", EXIT_INVALID)
    for flag, path in (("--tls-certfile", certfile), ("--tls-keyfile", keyfile)):
        if not path.is_file():
            raise CliError(f"{flag}: no file {path}", EXIT_INVALID)
    return str(certfile), str(keyfile)


@app.command("stop")
def stop() -> None:
    """Stop the Shoal serving this SHOAL_HOME (the background one commands started)."""
    home = home_dir()
    ended = background.stop(home)
    out = screen.out()
    if ended is None:
        out.print(f"no Shoal server runs for {home}")
    else:
        out.print(f"stopped the Shoal at {ended.url} (pid {ended.pid})")
    raise typer.Exit(EXIT_OK)


@app.command("status")
def status() -> None:
    """Whether a Shoal serves this SHOAL_HOME, and where (exit 1 if none)."""
    home = home_dir()
    found = background.running(home)
    out = screen.out()
    if found is None:
        out.print(f"no Shoal server runs for {home}; the next command starts one")
        raise typer.Exit(EXIT_FAILED)
    kind = "background" if found.background else "foreground"
    out.print(f"{kind} Shoal at {found.url} (pid {found.pid}); data in {home}")
    if found.background:
        out.print(f"log: {background.log_path(home)}")
    raise typer.Exit(EXIT_OK)


def _listen(host: str, port: int) -> socket.socket:
    """A bound socket (port 0: a free one), so the port is known before uvicorn starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise CliError(f"cannot listen on {host}:{port}: {e.strerror or e}", EXIT_FAILED) from None
    sock.set_inheritable(True)
    return sock


AGENT_PORT_FILE = "agent-port"
"""The agents' port last used by the home's server: taken again when free, so nodes that
outlived a restart keep polling the URL they were given (their agents are not restarted)."""


def _agents_listener(host: str, settings: Settings) -> socket.socket:
    remembered = settings.home / AGENT_PORT_FILE
    port = settings.agent_port
    if port == 0:
        with contextlib.suppress(OSError, ValueError):
            port = int(remembered.read_text())
    try:
        sock = _listen(host, port)
    except CliError:
        if settings.agent_port:
            raise
        sock = _listen(host, 0)
    if settings.agent_port == 0:
        # The first server of a new home gets here before the store has made the home.
        private_dir(settings.home)
        write_private(remembered, str(sock.getsockname()[1]))
    return sock


def _reachable(host: str) -> str:
    """The address a client on this machine uses for a server bound to `host`."""
    return {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}.get(host, host)


def end_now(code: int) -> NoReturn:
    """Flush what was printed and logged, then leave without the interpreter's teardown."""
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
