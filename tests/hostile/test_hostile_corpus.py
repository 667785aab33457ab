"""The hostile-input corpus (benchmarks/hostile_cases.py) against a real `shoal server`.

One server per database (SQLite, PostgreSQL), the sim provider; each case is sent once and
must be answered with a 4xx (or, for a case that is merely large, anything but a 5xx), the
server must still answer `/healthz`, and its resident memory must stay within 100 MB of where
it was before the case. Times are printed, never asserted (benchmarks/hostile.py measures
them against the 2 s bound).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.postgres import fresh_database
from tests.support.server import ServerProcess, free_port, server_env

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import hostile_cases

MAX_GROWTH_MB = 100.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    with fresh_database() if request.param == "postgresql" else _no_database() as url:
        home = tmp_path / "home"
        home.mkdir()
        env = server_env(
            home,
            port=free_port(),
            provider="sim",
            provider_options={"state_path": "memory"},
            database_url=url,
        )
        proc = ServerProcess(home, env, tmp_path / "server.log").start()
        try:
            yield proc
        finally:
            proc.kill()


class _no_database:  # noqa: N801 - used like fresh_database()
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_every_hostile_case_is_refused_and_the_server_stays_small(server: ServerProcess) -> None:
    assert server.proc is not None
    pid = server.proc.pid
    headers = {"Authorization": f"Bearer {server.token}", "X-Auth-Token": server.token}
    wrong: list[str] = []
    with httpx.Client(base_url=server.url, timeout=120.0) as http:
        for case in hostile_cases.cases():
            if not case.asserted:
                continue
            before = rss_mb(pid)
            t0 = time.monotonic()
            r = http.request(
                case.method,
                case.path,
                content=case.body,
                headers={**headers, "Content-Type": case.content_type},
            )
            took = time.monotonic() - t0
            status = r.status_code
            if case.follow is not None and status < 300:
                status = http.get(case.follow, headers=headers).status_code
            growth = rss_mb(pid) - before
            print(f"{case.name}: {status} in {took:.3f}s, RSS {growth:+.1f} MB")
            ok = 400 <= status < 500 if case.refused else status < 500
            if not ok:
                wrong.append(f"{case.name}: {status} {r.text[:300]}")
            if growth > MAX_GROWTH_MB:
                wrong.append(f"{case.name}: RSS grew by {growth:.0f} MB")
            assert http.get("/healthz").status_code == 200, f"after {case.name}"
    assert not wrong, "\n".join(wrong)
