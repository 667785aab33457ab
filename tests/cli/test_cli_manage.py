"""`shoal plan --cluster`, `apply --dry-run`, `shoal host list|fail|recover` and `shoal recover`.

On the sim provider, embedded, with the manager off (SHOAL_MANAGE=false) so that nothing but
the commands themselves changes the cluster between two of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.support import Shoal, explain
from tests.cli.test_cli_remote import Server, client, server  # noqa: F401 (fixture)

WEB = """\
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 4
    update: {max_unavailable: 2}
groupings:
  - {name: apart, members: [web], rule: anti-affinity, scope: host}
"""


@pytest.fixture
def calm(home: Path) -> Shoal:
    """Embedded Shoal on the sim provider without active management."""
    return Shoal(
        home,
        provider="sim",
        provider_options={"state_path": "sim.db"},
        extra={"SHOAL_MANAGE": "false"},
    )


def make_shop(shoal: Shoal, tmp_path: Path) -> dict[str, Any]:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    cluster: dict[str, Any] = shoal.json("describe", "cluster", "shop")
    return cluster


def hosts_of(cluster: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["host"] for n in cluster["nodes"]}


def test_plan_with_cluster_shows_the_rolling_batches(calm: Shoal, tmp_path: Path) -> None:
    before = hosts_of(make_shop(calm, tmp_path))
    changed = tmp_path / "web-small.yaml"
    changed.write_text(WEB.replace("m1.tiny", "m1.small").replace("count: 4", "count: 5"))

    shown = calm.ok("plan", str(changed), "--cluster", "shop")
    out = shown.stdout
    assert "rolling update" in out, explain(shown)
    assert "batch" in out and "web-5" in out, explain(shown)
    assert "1 to create, 0 to delete, 4 to replace in 2 batch(es)" in out, explain(shown)

    plan = calm.json("plan", str(changed), "--cluster", "shop")
    assert plan["cluster"] == "shop"
    assert [c["node"] for c in plan["create"]] == ["web-5"]
    assert plan["create"][0]["host"] not in before.values()  # anti-affinity: a fresh host
    assert plan["delete"] == []
    batches = plan["update_batches"]
    assert [b["group"] for b in batches] == ["web", "web"]
    assert sorted(n for b in batches for n in b["nodes"]) == sorted(before)
    assert all(len(b["nodes"]) == 2 for b in batches)  # max_unavailable: 2

    dry = calm.ok("apply", str(changed), "--dry-run", "-o", "yaml")
    assert "update_batches:" in dry.stdout and "web-5" in dry.stdout, explain(dry)

    # nothing was changed by any of it
    after = calm.json("describe", "cluster", "shop")
    assert hosts_of(after) == before
    assert "m1.tiny" in after["document"]["node_groups"][0]["profile"]["flavor"]

    # the same document as now: no changes
    same = tmp_path / "web.yaml"
    assert "no changes" in calm.ok("plan", str(same), "--cluster", "shop").stdout

    # without --cluster, plan stays offline placement
    offline = calm.ok("plan", str(changed))
    assert "placement of shop" in offline.stdout, explain(offline)

    # a change that cannot be placed: 5 anti-affine nodes fit, 7 do not on 6 hosts
    crowded = tmp_path / "crowded.yaml"
    crowded.write_text(WEB.replace("count: 4", "count: 7"))
    refused = calm("plan", str(crowded), "--cluster", "shop")
    assert refused.returncode == 1, explain(refused)
    assert "cannot be placed" in refused.stderr, explain(refused)

    unknown = calm("plan", str(changed), "--cluster", "nope")
    assert unknown.returncode == 2 and "no cluster" in unknown.stderr, explain(unknown)


def test_dry_run_of_a_new_cluster_shows_its_create_plan(calm: Shoal, tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(WEB.replace("name: shop", "name: fresh"))
    shown = calm("apply", str(new), "--dry-run")
    assert shown.returncode == 0, explain(shown)
    assert "no cluster fresh yet" in shown.stderr, explain(shown)
    assert "placement of fresh" in shown.stdout and "web-4" in shown.stdout, explain(shown)
    # what `shoal plan` answers, with its exit codes: 0 placed, 1 infeasible, 2 invalid
    data, offline = calm.json("apply", str(new), "--dry-run"), calm.json("plan", str(new))
    data.pop("stats"), offline.pop("stats")  # the solver's own time differs
    assert data["feasible"] is True and data == offline
    crowded = tmp_path / "crowded.yaml"
    crowded.write_text(WEB.replace("name: shop", "name: fresh").replace("count: 4", "count: 7"))
    refused = calm("apply", str(crowded), "--dry-run")
    assert refused.returncode == 1 and "cannot be placed" in refused.stdout, explain(refused)
    bad = tmp_path / "bad.yaml"
    bad.write_text(WEB.replace("name: shop", "name: fresh").replace("count: 4", "count: many"))
    invalid = calm("apply", str(bad), "--dry-run")
    assert invalid.returncode == 2 and "/node_groups/0/count" in invalid.stderr, explain(invalid)
    # from stdin too, read once
    piped = calm("apply", "-", "--dry-run", stdin=new.read_text())
    assert piped.returncode == 0 and "placement of fresh" in piped.stdout, explain(piped)
    assert calm.json("get", "clusters")["clusters"] == []  # nothing was created


def test_host_fail_and_recover_then_recover_the_node(calm: Shoal, tmp_path: Path) -> None:
    cluster = make_shop(calm, tmp_path)
    node = cluster["nodes"][0]
    lost_host = node["host"]

    hosts = {h["name"]: h for h in calm.json("host", "list")["hosts"]}
    assert len(hosts) == 6 and not any(h["failed"] for h in hosts.values())
    assert hosts[lost_host]["resources"] == 1
    # capacity: what each host offers and what Shoal's nodes hold on it (m1.tiny: 1 vCPU)
    assert hosts[lost_host]["used"]["vcpus"] == 1
    assert hosts[lost_host]["capacity"]["vcpus"] > hosts[lost_host]["used"]["vcpus"]
    assert sum(h["used"]["vcpus"] for h in hosts.values()) == 4
    table = calm.ok("host", "list").stdout
    assert "resources" in table and lost_host in table
    assert "vcpus used/free" in table and "ram used/free" in table, table
    size = hosts[lost_host]["capacity"]["vcpus"]
    row = next(line for line in table.splitlines() if lost_host in line)
    assert f"1/{size - 1}" in row, table

    failed = calm.ok("host", "fail", lost_host)
    assert f"host {lost_host} failed; 1 resource(s)" in failed.stdout, explain(failed)
    # named as the node was when the host failed, never by provider id (issue 36)
    assert f"shop/{node['name']}" in failed.stdout and "srv-" not in failed.stdout, explain(failed)
    hosts = {h["name"]: h for h in calm.json("host", "list")["hosts"]}
    assert hosts[lost_host]["failed"] is True

    nowhere = calm("host", "fail", "az9-host9")
    assert nowhere.returncode == 2 and "no host" in nowhere.stderr, explain(nowhere)

    # by hand: replace the lost node on another host, keeping anti-affinity
    done = calm.ok("recover", "shop", "--node", node["name"], "--how", "replace")
    assert "cluster shop: ACTIVE" in done.stdout, explain(done)
    after = hosts_of(calm.json("describe", "cluster", "shop"))
    assert after[node["name"]] != lost_host
    assert len(set(after.values())) == 4

    # refusals: nothing to recover, an unknown node (with the error's details)
    idle = calm("recover", "shop")
    assert idle.returncode == 2 and "needs recovering" in idle.stderr, explain(idle)
    ghost = calm("recover", "shop", "--node", "web-99")
    assert ghost.returncode == 2, explain(ghost)
    assert "no node web-99" in ghost.stderr and "/nodes/0" in ghost.stderr, explain(ghost)

    # with nothing named, `recover` sees nodes on a lost host too (the manager is off here)
    other = calm.json("describe", "cluster", "shop")["nodes"][1]
    second_host = other["host"]
    failed = calm.ok("host", "fail", second_host)
    assert f"shop/{other['name']}" in failed.stdout, explain(failed)  # named, not an id
    healed = calm.ok("recover", "shop")
    assert "cluster shop: ACTIVE" in healed.stdout, explain(healed)
    after = hosts_of(calm.json("describe", "cluster", "shop"))
    assert after[other["name"]] not in (lost_host, second_host)
    assert len(set(after.values())) == 4

    for h in (lost_host, second_host):
        back = calm.ok("host", "recover", h)
        assert f"host {h} recovered" in back.stdout
    hosts = {h["name"]: h for h in calm.json("host", "list")["hosts"]}
    assert not any(h["failed"] for h in hosts.values())


def test_hosts_are_for_admins_only(server: Server, tmp_path: Path) -> None:  # noqa: F811
    admin = client(tmp_path, server.url, server.token)
    token = admin.json("project", "create", "tenant")["token"]
    tenant = client(tmp_path, server.url, token)
    for args in (("host", "list"), ("host", "fail", "az1-host1"), ("host", "recover", "az1-host1")):
        refused = tenant(*args)
        assert refused.returncode == 2, explain(refused)
        assert "forbidden" in refused.stderr and "admin" in refused.stderr, explain(refused)
    assert len(admin.json("host", "list")["hosts"]) == 6
