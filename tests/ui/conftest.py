"""Fixtures for the dashboard tests: a real `shoal server` process and a real headless Chromium.

`ui_server(provider=...)` runs the `shoal server` command (the one users run) on a free
loopback port with its own SHOAL_HOME, and kills its process group (and any local node it left)
at teardown. `browser` is Debian's Chromium driven by Selenium; with no Chromium installed the
test fails, naming the packages to install.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from tests.api.conftest import Api, api  # noqa: F401  (the in-process API fixture, reused)
from tests.e2e.flows import MANAGED
from tests.keystone.conftest import Keystone, keystone  # noqa: F401  (a real Keystone, reused)
from tests.support.server import free_port, server_env, sweep_local_nodes
from tests.ui.browser import BrowserMissing, start_chromium
from tests.ui.server import ShoalServer


class UiServer(Protocol):
    def __call__(
        self,
        *,
        provider: str = "local",
        provider_options: dict[str, Any] | None = None,
        extra: dict[str, str] | None = None,
    ) -> ShoalServer: ...


@pytest.fixture
def ui_server(tmp_path: Path) -> Iterator[UiServer]:
    started: list[ShoalServer] = []

    def start(
        *,
        provider: str = "local",
        provider_options: dict[str, Any] | None = None,
        extra: dict[str, str] | None = None,
    ) -> ShoalServer:
        home = tmp_path / f"home-{len(started)}"
        home.mkdir(parents=True)
        port = free_port()
        options = dict(provider_options or {})
        if provider == "local":
            options.setdefault("port", free_port())
        env = server_env(
            home,
            port=port,
            provider=provider,
            provider_options=options,
            extra={**MANAGED, **(extra or {})},
        )
        server = ShoalServer(home, env, tmp_path / f"server-{port}.log")
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.kill()
        for server in started:
            sweep_local_nodes(server.home)


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    try:
        driver = start_chromium()
    except BrowserMissing as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield driver
    finally:
        driver.quit()
