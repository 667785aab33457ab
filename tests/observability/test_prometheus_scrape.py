"""A real Prometheus (Debian's `prometheus`) scraping a real `shoal server` on loopback with a
bearer token every second, through a create on sim, a host failure and the repair that
follows; then Prometheus' HTTP API is asked for the series an operator would look at, and for
the shipped alert rules, loaded and evaluated without error (issue 27)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import eventually, free_port, server_env

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "shoal-alerts.yml"
DOC = """
name: watched
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
"""


@contextlib.contextmanager
def process(args: list[str], log: Path, **kw: Any) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kw
        )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(20)


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=10)
    assert r.status_code == 200, r.text
    result: list[dict[str, Any]] = r.json()["data"]["result"]
    return result


def scalar(prom: str, expr: str) -> float | None:
    found = query(prom, expr)
    return float(found[0]["value"][1]) if found else None


def test_prometheus_scrapes_a_create_a_host_failure_and_the_repair(tmp_path: Path) -> None:
    binary = shutil.which("prometheus")
    assert binary, "Debian's prometheus package is needed: .ci/run installs it"
    home = tmp_path / "home"
    home.mkdir()
    port, prom_port = free_port(), free_port()
    env = server_env(home, port=port, provider="sim", lease_s=3.0)
    env["SHOAL_RECONCILE_INTERVAL_S"] = "1"
    shoal = f"http://127.0.0.1:{port}"
    server = [sys.executable, "-m", "shoal", "server", "--port", str(port)]
    with process(server, tmp_path / "shoal.log", env=env, cwd=home):
        eventually(lambda: answers(f"{shoal}/healthz"), timeout_s=90)
        token = (home / "admin-token").read_text().strip()
        assert httpx.get(f"{shoal}/metrics", timeout=10).status_code == 401
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: ['{RULES}']\n"
            "scrape_configs:\n"
            "  - job_name: shoal\n"
            f"    authorization: {{type: Bearer, credentials_file: '{home / 'admin-token'}'}}\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
        )
        prom_args = [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ]
        prom = f"http://127.0.0.1:{prom_port}"
        with process(prom_args, tmp_path / "prometheus.log"):
            eventually(lambda: answers(f"{prom}/-/ready"), timeout_s=90)
            eventually(lambda: scalar(prom, 'up{job="shoal"}') == 1, timeout_s=60)
            with httpx.Client(
                base_url=shoal, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as client:
                run(client, prom)


def run(client: httpx.Client, prom: str) -> None:
    r = client.post("/v1/clusters", content=DOC)
    assert r.status_code == 202, r.text

    def cluster() -> dict[str, Any]:
        found: dict[str, Any] = client.get("/v1/clusters/watched", params={"nodes": 1000}).json()[
            "cluster"
        ]
        return found

    eventually(lambda: cluster()["status"] == "ACTIVE", timeout_s=120)
    lost = next(n["host"] for n in cluster()["nodes"] if n["name"] == "web-1")
    assert client.post(f"/v1/hosts/{lost}/fail").status_code == 200

    def repaired() -> bool:
        c = cluster()
        hosts = {n["name"]: n["host"] for n in c["nodes"]}
        return c["status"] == "ACTIVE" and lost not in hosts.values() and len(hosts) == 3

    eventually(repaired, timeout_s=120, every_s=0.3)
    # What Prometheus now holds (a scrape every second; each checked until it shows).
    expected = {
        'sum(shoal_actions_total{kind="CLUSTER_CREATE",result="SUCCEEDED"})': 1,
        'sum(shoal_actions_total{kind="CLUSTER_RECOVER",result="SUCCEEDED"})': 1,
        'sum(shoal_repairs_total{reason="host_lost",how="replace"})': 1,
        'sum(shoal_nodes{status="ACTIVE",provider="sim"})': 3,
        'sum(shoal_clusters{status="ACTIVE"})': 1,
        "sum(shoal_manager_lease_held)": 1,
        'sum(shoal_placements_total{outcome="placed"})': 2,
        'sum(shoal_provider_calls_total{service="sim",operation="create_server",error="none"})': 4,
        'sum(shoal_action_duration_seconds_count{kind="NODE_CREATE"})': 4,
        "sum(shoal_health_checks_total) >= 0 or vector(0)": 0,
    }
    for expr, least in expected.items():
        try:
            eventually(lambda e=expr, n=least: (scalar(prom, e) or 0) >= n, timeout_s=30)
        except AssertionError:
            name = expr.split("(", 1)[1].split("{")[0].split(")")[0]
            raise AssertionError(f"{expr} < {least}: {query(prom, name)}") from None
    # The shipped rules are loaded and evaluate without error against these series.
    rules = httpx.get(f"{prom}/api/v1/rules", timeout=10).json()["data"]["groups"]
    loaded = [r for g in rules for r in g["rules"]]
    assert len(loaded) >= 6
    assert all(r["health"] == "ok" for r in loaded), [
        (r["name"], r.get("lastError")) for r in loaded
    ]
    firing = {
        a["labels"]["alertname"]
        for a in httpx.get(f"{prom}/api/v1/alerts").json()["data"]["alerts"]
    }
    assert "ShoalNoManager" not in firing


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
