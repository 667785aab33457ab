"""Keystone slow or down is the identity service's fault, not the caller's: 503 with
Retry-After (as keystonemiddleware answers), never a 401 that sends clients to log in again.
Shoal runs under uvicorn in keystone mode against a port that accepts connections and never
answers, then against one that refuses them; no real Keystone is needed for either."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.keystone.conftest import Keystone, KeystoneShoal
from tests.support.server import free_port


@pytest.fixture
def hanging_port() -> Iterator[int]:
    """A listening socket nobody accepts on: the kernel completes the handshake, then silence."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield s.getsockname()[1]


def _shoal(home: Path, port: int) -> KeystoneShoal:
    served = KeystoneShoal(home, Keystone(venv=Path(), state=Path(), port=port))
    served.settings = served.settings.model_copy(update={"keystone_timeout_s": 1.0})
    return served.start()


def _assert_unavailable(url: str) -> None:
    headers = {"X-Auth-Token": "some-token"}
    r = httpx.get(f"{url}/v1/clusters", headers=headers, timeout=30)
    assert r.status_code == 503, r.text
    assert r.headers["Retry-After"].isdigit()
    error = r.json()["error"]
    assert error["code"] == "unavailable" and "identity service" in error["message"]
    assert "WWW-Authenticate" not in r.headers
    senlin = httpx.get(f"{url}/clustering/v1/clusters", headers=headers, timeout=30)
    assert senlin.status_code == 503, senlin.text
    assert senlin.headers["Retry-After"].isdigit()


def test_a_keystone_that_never_answers_gives_503(hanging_port: int, tmp_path: Path) -> None:
    served = _shoal(tmp_path / "home", hanging_port)
    try:
        _assert_unavailable(served.url)
    finally:
        served.stop()


def test_a_keystone_that_refuses_connections_gives_503(tmp_path: Path) -> None:
    served = _shoal(tmp_path / "home", free_port())  # nothing listens there
    try:
        _assert_unavailable(served.url)
    finally:
        served.stop()
