"""`shoal server`: the HTTP API under uvicorn, with the engine running in the app's lifespan."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from shoal.cli import screen
from shoal.cli.client import load_settings
from shoal.cli.errors import EXIT_INVALID, EXIT_OK, CliError
from shoal.cli.runner import run


def server(
    port: Annotated[
        int | None, typer.Option("--port", "-p", help="TCP port; default 8470 (SHOAL_PORT).")
    ] = None,
    bind: Annotated[
        str | None,
        typer.Option("--bind", help="Address to listen on; default 127.0.0.1 (SHOAL_BIND)."),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
    tls_certfile: Annotated[
        Path | None, typer.Option("--tls-certfile", help="Serve HTTPS with this certificate (PEM).")
    ] = None,
    tls_keyfile: Annotated[
        Path | None, typer.Option("--tls-keyfile", help="The certificate's private key (PEM).")
    ] = None,
) -> None:
    """Serve Shoal's HTTP API on this machine until Ctrl-C."""

    async def body() -> int:
        import uvicorn

        from shoal.api.app import create_app
        from shoal.runtime import Runtime

        settings = load_settings()
        tls = _tls(tls_certfile, tls_keyfile)
        host = bind or settings.bind
        listen = port if port is not None else settings.port
        try:
            runtime = await Runtime.open(settings)
        except ValueError as e:
            raise CliError(str(e), EXIT_INVALID) from None
        try:
            err = screen.err()
            shown = f"[{host}]" if ":" in host else host
            if runtime.new_admin_token is not None:
                err.print(f"created the admin token: {runtime.token_path}")
            else:
                err.print(f"admin token: {runtime.token_path}")
            err.print(
                f"Shoal {settings.provider} provider, data in {settings.home}; "
                f"serving {'https' if tls else 'http'}://{shown}:{listen} (docs at /docs)"
            )
            app = create_app(runtime, run_engine=True)
            config = uvicorn.Config(
                app,
                host=host,
                port=listen,
                lifespan="on",
                log_level=log_level,
                ssl_certfile=tls[0] if tls else None,
                ssl_keyfile=tls[1] if tls else None,
            )
            # uvicorn shuts down gracefully on SIGTERM, then re-raises it: make that an
            # interrupt, so the runtime below still closes.
            signal.signal(signal.SIGTERM, _interrupt)
            await uvicorn.Server(config).serve()
        finally:
            await runtime.close()
        return EXIT_OK

    run(body, until_interrupted=True)


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


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
