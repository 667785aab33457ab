"""`shoal import senlin` against a real Senlin 16 database (rows by Senlin's own DB API) and
servers in Shoal's simulated cloud: what maps, what is adopted, what is reported and refused;
nothing written to the cloud or to Senlin's database; a second run changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shoal.engine.manager import Manager
from shoal.providers.base import Provider
from shoal.service.senlin_import import ImportReport, SenlinImport
from shoal.store import actions as action_repo
from shoal.store import auth, senlin_adopt
from tests.databases import database_url
from tests.senlin.conftest import Senlin, serving
from tests.senlin_import.harness import SenlinDb
from tests.senlin_import.scenario import PROJECT, Deployment, write_deployment


def importer(s: Senlin) -> SenlinImport:
    rt = s.runtime
    return SenlinImport(rt.db, rt.provider, rt.service, rt.engine.inventory_now, rt.clock)


async def cloud(provider: Provider) -> list[tuple[str, str | None, str]]:
    return sorted((r.id, r.host, str(r.state)) for r in await provider.list_resources())


def by_name(report: ImportReport) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report.to_json()["clusters"]}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_import_adopts_in_place_and_reports_the_rest(
    senlin_db: SenlinDb, tmp_path: Path, backend: str
) -> None:
    with database_url(backend, tmp_path) as url:
        await _import_adopts_in_place(senlin_db, tmp_path, url)


async def _import_adopts_in_place(senlin_db: SenlinDb, tmp_path: Path, url: str) -> None:
    async with serving(tmp_path / "home", url) as s:
        provider = s.runtime.provider
        dep: Deployment = await write_deployment(senlin_db, provider, s.runtime.inventory)
        before_cloud, before_senlin = await cloud(provider), senlin_db.dump()

        dry = await importer(s).run(senlin_db.url, None, dry_run=True)
        plans = by_name(dry)
        assert plans["web"]["outcome"] == "import"
        with s.runtime.db.reading() as conn:
            assert not senlin_adopt.cluster_exists(conn, dep.clusters["web"])  # nothing written

        report = await importer(s).run(senlin_db.url, None, dry_run=False)
        plans = by_name(report)
        assert await cloud(provider) == before_cloud  # no server created, rebuilt or deleted
        assert senlin_db.dump() == before_senlin  # Senlin's database untouched

        web = plans["web"]
        assert web["outcome"] == "import" and web["desired_capacity"] == 3
        assert (web["min_size"], web["max_size"]) == (1, 6)
        mapped = {p["name"]: p["mapped"] for p in web["policies"]}
        assert mapped == {
            "deletion-p": True,
            "scaling-p": True,
            "health-p": True,
            "affinity-p": True,
            "zone_placement-p": True,
            "loadbalance-p": False,
        }
        assert any("anti-affinity already broken" in w for w in web["warnings"])
        assert {r["name"]: r["mapped"] for r in web["receivers"]} == {
            "web-out": True,
            "web-msg": False,
        }
        assert all(n["adopted"] for n in web["nodes"])

        db = plans["db"]
        assert db["desired_capacity"] == 1
        why = {n["name"]: n.get("why", "") for n in db["nodes"]}
        assert why["db-1"] == "" and "ERROR" in why["db-2"] and "no longer exists" in why["db-3"]
        assert plans["locked"]["outcome"] == "refused"
        assert "cluster_lock" in plans["locked"]["reasons"][0]
        assert plans["acting"]["outcome"] == "refused"
        assert "CLUSTER_SCALE_OUT" in plans["acting"]["reasons"][0]
        stacks = plans["stacks"]
        assert stacks["outcome"] == "import" and "Heat stack" in stacks["nodes"][0]["why"]
        out = report.to_json()
        assert [n["name"] for n in out["standalone_nodes"]] == ["loner"]
        assert [r["name"] for r in out["receivers_without_cluster"]] == ["queue"]
        assert out["credentials"]["found"] == 1 and out["credentials"]["copied"] == 0

        # Clients of Senlin's project find the clusters, nodes, policies and receivers by
        # their Senlin ids.
        with s.runtime.db.transaction() as conn:
            s.token = auth.issue_token(conn, PROJECT, s.runtime.clock.now()).secret
        cid = dep.clusters["web"]
        shown = (await s.ok("GET", f"/clusters/{cid}"))["cluster"]
        assert shown["name"] == "web" and shown["status"] == "ACTIVE"
        assert sorted(shown["nodes"]) == sorted(dep.nodes[f"web-00{i}"] for i in (1, 2, 3))
        assert shown["metadata"] == {"tier": "web", "replicas": 3}
        assert shown["profile_id"] == dep.profiles["nova"]
        node = (await s.ok("GET", f"/nodes/{dep.nodes['web-002']}"))["node"]
        assert node["physical_id"] == dep.servers["web-002"]
        assert node["data"]["host"] == "az1-host1" and node["status"] == "ACTIVE"
        bound = (await s.ok("GET", f"/clusters/{cid}/policies"))["cluster_policies"]
        assert len(bound) == 5
        rid = dep.receivers["web-out"]
        receiver = (await s.ok("GET", f"/receivers/{rid}"))["receiver"]
        assert receiver["params"] == {"count": "1"} and receiver["cluster_id"] == cid

        # The engine takes the adopted nodes as they are: a management pass (reconcile and
        # health checks) repairs nothing and records no action.
        manager = Manager(s.runtime.engine.context, reconcile_s=0.0)
        await manager.tick()
        await manager.close()
        with s.runtime.db.reading() as conn:
            for name in ("web", "db"):
                cluster_id = dep.clusters[name]
                assert action_repo.list_actions(conn, None, cluster_id=cluster_id) == []
        assert await cloud(provider) == before_cloud

        # Idempotent: a second run changes nothing.
        again = by_name(await importer(s).run(senlin_db.url, None, dry_run=False))
        assert again["web"]["outcome"] == "unchanged" and again["db"]["outcome"] == "unchanged"
        assert again["locked"]["outcome"] == "refused"
        assert await cloud(provider) == before_cloud

        # Senlin's own webhook URL is served by Shoal. The web cluster's broken anti-affinity
        # is not repaired by surprise: its scale-out is refused, naming the rule.
        r = await s.http.post(f"/clustering/v1/webhooks/{rid}/trigger?V=1")
        assert r.status_code == 409 and "anti-affinity" in r.text, r.text
        # The same receiver at Shoal's root (an old Senlin endpoint proxied to Shoal as it is),
        # in the form Senlin 16 itself hands out: `?V=2` and the receiver's params.
        r = await s.http.post(f"/v1/webhooks/{rid}/trigger?V=2&count=1")
        assert r.status_code == 409 and "anti-affinity" in r.text, r.text
        # The db cluster's resize webhook scales out by one: one new server, the rest kept.
        resize = dep.receivers["db-resize"]
        r = await s.http.post(f"/clustering/v1/webhooks/{resize}/trigger?V=1")
        assert r.status_code == 202, r.text
        action = await s.wait(r.headers["Location"].rsplit("/", 1)[-1])
        assert action["status"] == "SUCCEEDED", action
        after = await cloud(provider)
        assert set(before_cloud) < set(after) and len(after) == len(before_cloud) + 1
        shown = (await s.ok("GET", f"/clusters/{dep.clusters['db']}"))["cluster"]
        assert shown["desired_capacity"] == 2 and len(shown["nodes"]) == 2
        assert dep.nodes["db-1"] in shown["nodes"]
        # Without V=1 and without a token, nothing runs.
        r = await s.http.post(f"/clustering/v1/webhooks/{resize}/trigger")
        assert r.status_code == 404
