"""The built-in node serves what deployments wrote into its www/ directory, and nothing else."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.providers.local.nodeserver import NodeHTTPServer, parse_args


@pytest.fixture
def node(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    workdir = tmp_path / "node"
    (workdir / "www").mkdir(parents=True)
    args = ["--name", "lb", "--address", "127.0.0.1", "--port", "0", "--workdir", str(workdir)]
    options = parse_args([*args, "--node-id", "n-1"])
    server = NodeHTTPServer(options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", workdir
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def test_a_file_a_deployment_wrote_is_served(node: tuple[str, Path]) -> None:
    base, workdir = node
    (workdir / "www" / "index.html").write_text("server 127.0.1.1:8080\n")
    assert _get(f"{base}/www/index.html") == (200, "server 127.0.1.1:8080\n")


@pytest.mark.parametrize(
    "path", ["/www/", "/www/missing.html", "/www/../secret", "/www/%2e%2e/secret", "/www/.env"]
)
def test_nothing_outside_www_is_served(node: tuple[str, Path], path: str) -> None:
    base, workdir = node
    (workdir / "secret").write_text("no")
    (workdir / "www" / ".env").write_text("no")
    assert _get(f"{base}{path}")[0] == 404


def test_a_link_out_of_www_is_not_followed(node: tuple[str, Path]) -> None:
    base, workdir = node
    (workdir / "secret").write_text("no")
    (workdir / "www" / "link").symlink_to(workdir / "secret")
    assert _get(f"{base}/www/link")[0] == 404


def test_a_www_directory_swapped_for_a_link_is_not_followed(
    node: tuple[str, Path], tmp_path: Path
) -> None:
    base, workdir = node
    (tmp_path / "admin-token").write_text("secret")
    (workdir / "www").rmdir()
    (workdir / "www").symlink_to(tmp_path, target_is_directory=True)
    assert _get(f"{base}/www/admin-token") == (404, "")
