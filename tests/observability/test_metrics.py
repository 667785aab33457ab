"""GET /metrics (issue 27): admin only, Prometheus' text format, bounded labels, and the
installation-wide gauges exported by one engine only when several share a database."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from shoal.api.app import create_app
from shoal.clock import ManualClock
from shoal.engine.metrics import EngineCollector, EngineView, Exposition
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store import auth as auth_repo
from shoal.store import leases
from shoal.store.database import Database
from tests.observability.conftest import Api
from tests.support.server import free_port

DOC = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
"""


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(text: str, name: str, **labels: str) -> float:
    want = frozenset(labels.items())
    found = [v for (n, ls), v in samples(text).items() if n == name and want <= ls]
    return sum(found)


async def test_metrics_need_the_admin_token(api: Api) -> None:
    r = await api.http.get("/metrics")
    assert r.status_code == 401
    assert r.json()["error"]["code"]
    with api.runtime.db.transaction() as conn:
        project = auth_repo.create_project(conn, "tenant", api.clock.now())
        issued = auth_repo.issue_token(conn, project, api.clock.now())
    r = await api.http.get("/metrics", headers={"Authorization": f"Bearer {issued.secret}"})
    assert r.status_code == 403, r.text
    r = await api.call("GET", "/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")


async def test_metrics_answer_an_operators_questions(api: Api) -> None:
    await api.up(DOC)
    r = await api.call("GET", "/metrics")
    assert r.status_code == 200, r.text
    text = r.text
    names = {f.name for f in text_string_to_metric_families(text)}
    assert all(n.startswith("shoal_") for n in names), names
    assert value(text, "shoal_actions_total", kind="CLUSTER_CREATE", result="SUCCEEDED") >= 1
    assert value(text, "shoal_actions_total", kind="NODE_CREATE", result="SUCCEEDED") >= 3
    assert value(text, "shoal_action_duration_seconds_count", kind="NODE_CREATE") >= 3
    assert value(text, "shoal_placements_total", outcome="placed") >= 1
    assert value(text, "shoal_provider_calls_total", operation="create_server", error="none") >= 3
    assert value(text, "shoal_provider_call_duration_seconds_count", service="sim") >= 3
    # Management is off in this fixture: this engine exports the installation's gauges itself.
    assert value(text, "shoal_cluster_gauges_exported") == 1
    assert value(text, "shoal_nodes", status="ACTIVE", provider="sim") == 3
    assert value(text, "shoal_clusters", status="ACTIVE") == 1
    assert value(text, "shoal_action_queue_depth") == 0
    assert "shoal_db_pool_size" in names
    # Bounded labels: no node's name or id, no cluster's name.
    nodes = await api.nodes("shop")
    for n in nodes:
        assert n["name"] not in text and n["id"] not in text
    assert '"shop"' not in text


async def test_one_engine_exports_the_installation_gauges(api: Api, db: Database) -> None:
    """Two engines on one database: only the manager-lease holder exports nodes, clusters and
    the queue, so a sum() over engines counts each node once."""
    await api.up(DOC)
    clock = ManualClock(api.clock.now())

    def render(engine_id: str) -> str:
        view = EngineView(engine_id, manages=True, inflight=lambda: 0, provider="sim")
        return Exposition(EngineCollector(db, clock, view, cache_s=0)).render().decode()

    assert leases.acquire(db, "manager", "engine-a", clock.now(), 30.0)
    a, b = render("engine-a"), render("engine-b")
    assert value(a, "shoal_manager_lease_held") == 1
    assert value(b, "shoal_manager_lease_held") == 0
    assert value(a, "shoal_cluster_gauges_exported") == 1
    assert value(b, "shoal_cluster_gauges_exported") == 0
    assert value(a, "shoal_nodes", status="ACTIVE") == 3
    assert "shoal_nodes{" not in b and "shoal_clusters{" not in b
    clock.advance(31.0)  # a's lease ran out and nobody took it: nobody exports them
    assert value(render("engine-a"), "shoal_manager_lease_holders") == 0
    assert value(render("engine-a"), "shoal_cluster_gauges_exported") == 0


async def test_metrics_bind_serves_them_without_a_token(tmp_path: Path) -> None:
    """`metrics_bind`: the same exposition on an address of its own, no token asked."""
    port = free_port()
    settings = Settings(
        home=tmp_path / "home",
        provider="sim",
        provider_options={"state_path": "memory"},
        manage=False,
        metrics_bind=f"127.0.0.1:{port}",
    )
    runtime = await Runtime.open(settings, clock=ManualClock())
    try:
        create_app(runtime)
        async with httpx.AsyncClient() as http:
            r = await http.get(f"http://127.0.0.1:{port}/metrics")
        assert r.status_code == 200
        assert value(r.text, "shoal_cluster_gauges_exported") == 1
    finally:
        await runtime.close()
