"""`shoal up`, `describe`, `scale`, `nodegroup`, `apply`, `delete` end to end, embedded, on sim."""

from __future__ import annotations

from pathlib import Path

from tests.cli.support import EXAMPLES, Shoal, explain, nodes_by_group

SHOP = str(EXAMPLES / "three-tier.yaml")

WEB = """\
name: web
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
    min: 1
    max: 8
    zones: [az1, az2]
"""


def test_up_waits_and_prints_the_nodes_table(shoal: Shoal) -> None:
    done = shoal.ok("up", SHOP)
    header = next(line for line in done.stdout.splitlines() if "name" in line)
    for column in ("name", "kind", "group", "status", "zone", "host", "address"):
        assert column in header
    assert "cluster shop: ACTIVE" in done.stdout
    for node in ("bastion", "web-1", "app-3", "db-1-server", "db-2-data"):
        assert node in done.stdout
    assert "CLUSTER_CREATE" in done.stderr  # progress: the action's events
    assert "Traceback" not in done.stderr


def test_describe_json_is_the_api_cluster_object(shoal: Shoal) -> None:
    shoal.ok("up", SHOP)
    cluster = shoal.json("describe", "cluster", "shop")
    assert cluster["name"] == "shop"
    assert cluster["status"] == "ACTIVE"
    assert len(cluster["nodes"]) == 12
    for node in cluster["nodes"]:
        assert {"name", "kind", "status", "zone", "host", "address"} <= node.keys()
        assert node["status"] == "ACTIVE"
        assert node["kind"] in ("server", "volume")
    servers = [n for n in cluster["nodes"] if n["kind"] == "server"]
    assert all(n["address"] for n in servers)
    assert {g["name"] for g in cluster["node_groups"]} == {"web", "app", "db"}
    table = shoal.ok("describe", "cluster", "shop").stdout
    assert "node groups" in table and "web-4" in table and "ACTIVE" in table


def test_up_json_reports_action_and_cluster(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    body = shoal.json("up", str(doc))
    assert body["action"]["status"] == "SUCCEEDED"
    assert body["action"]["action"] == "CLUSTER_CREATE"
    assert body["cluster"]["status"] == "ACTIVE"
    assert len(body["cluster"]["nodes"]) == 2


def test_scale_sets_the_exact_count(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    shoal.ok("scale", "web", "--nodegroup", "web", "--count", "5")
    cluster = shoal.json("describe", "cluster", "web")
    assert len(cluster["nodes"]) == 5
    assert {n["status"] for n in cluster["nodes"]} == {"ACTIVE"}
    shoal.ok("scale", "web", "--count", "1")  # one node group: --nodegroup may be left out
    assert len(shoal.json("describe", "cluster", "web")["nodes"]) == 1


def test_scale_beyond_max_is_refused_with_exit_2(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    done = shoal("scale", "web", "--nodegroup", "web", "--count", "9")
    assert done.returncode == 2, explain(done)
    assert "Traceback" not in done.stderr
    missing = shoal("scale", "web", "--nodegroup", "nope", "--count", "2")
    assert missing.returncode == 2, explain(missing)
    assert "nope" in missing.stderr


def test_nodegroup_create_with_the_seed_flags(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    # seed 000: magnum nodegroup-create --bay XXX --flavor m1.small --count 2 --availability-zone
    shoal.ok(
        "nodegroup", "create", "--cluster", "web", "--name", "small",
        "--flavor", "m1.small", "--count", "2", "--availability-zone", "az1",
    )  # fmt: skip
    shoal.ok(
        "nodegroup", "create", "--bay", "web", "--flavor", "m1.medium", "--count", "3",
        "--availability-zone", "az2", "--image", "cirros", "--min", "1", "--max", "4",
        "--role", "worker",
    )  # fmt: skip
    cluster = shoal.json("describe", "cluster", "web")
    groups = nodes_by_group(cluster)
    assert [n["zone"] for n in groups["small"]] == ["az1", "az1"]
    assert len(groups["ng-m1-medium-az2"]) == 3
    assert {n["zone"] for n in groups["ng-m1-medium-az2"]} == {"az2"}
    listed = shoal.json("get", "nodegroups", "--cluster", "web")["nodegroups"]
    medium = next(g for g in listed if g["name"] == "ng-m1-medium-az2")
    assert (medium["count"], medium["min"], medium["max"], medium["role"]) == (3, 1, 4, "worker")
    assert medium["zones"] == ["az2"]

    shoal.ok("nodegroup", "update", "--cluster", "web", "small", "--count", "1")
    shoal.ok("nodegroup", "delete", "--cluster", "web", "ng-m1-medium-az2")
    groups = nodes_by_group(shoal.json("describe", "cluster", "web"))
    assert set(groups) == {"web", "small"}
    assert len(groups["small"]) == 1


def test_nodegroup_create_with_an_unknown_flavor_exits_2(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    done = shoal("nodegroup", "create", "--cluster", "web", "--flavor", "m1.huge", "--count", "1")
    assert done.returncode == 2, explain(done)
    assert "flavor" in done.stderr and "m1.huge" in done.stderr
    assert "--flavor" in done.stderr and "/node_groups/" not in done.stderr, explain(done)
    nowhere = shoal(
        "nodegroup", "create", "-c", "web", "--flavor", "m1.small", "--availability-zone", "az9"
    )
    assert nowhere.returncode == 2, explain(nowhere)
    assert "--availability-zone" in nowhere.stderr and "az9" in nowhere.stderr, explain(nowhere)
    assert "/node_groups/" not in nowhere.stderr, explain(nowhere)


def test_apply_creates_then_changes(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("apply", str(doc))
    assert len(shoal.json("describe", "cluster", "web")["nodes"]) == 2
    actions = len(shoal.json("get", "actions")["actions"])
    same = shoal.ok("apply", str(doc))  # unchanged: nothing recorded
    assert "cluster web: no change" in same.stdout, explain(same)
    assert len(shoal.json("get", "actions")["actions"]) == actions
    doc.write_text(WEB.replace("count: 2", "count: 4"))
    shoal.ok("apply", str(doc))
    cluster = shoal.json("describe", "cluster", "web")
    assert len(cluster["nodes"]) == 4
    assert cluster["generation"] >= 2


def test_delete_wait_leaves_no_cluster(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    done = shoal.ok("delete", "web", "--wait")
    assert "deleted" in done.stdout
    assert shoal.json("get", "clusters")["clusters"] == []
    again = shoal("describe", "cluster", "web")
    assert again.returncode == 2
    assert "not found" in again.stderr


def test_invalid_document_exits_2_with_every_pointer(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "bad.yaml"
    doc.write_text(
        "name: bad\n"
        "node_groups:\n"
        "  - name: web\n"
        "    profile: {type: server, flavor: m1.huge, image: cirros}\n"
        "    count: -1\n"
        "    zones: [az9]\n"
    )
    done = shoal("up", str(doc))
    assert done.returncode == 2, explain(done)
    for pointer in (
        "/node_groups/0/profile/flavor:",
        "/node_groups/0/count:",
        "/node_groups/0/zones/0:",
    ):
        assert pointer in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert shoal.json("get", "clusters")["clusters"] == []


def test_unplaceable_document_exits_1_like_plan(shoal: Shoal, tmp_path: Path) -> None:
    """Valid but unplaceable: 1 from `up`, `apply` and offline `plan` alike (the README's codes)."""
    doc = tmp_path / "apart.yaml"
    doc.write_text(
        "name: apart\n"
        "node_groups:\n"
        "  - name: db\n"
        "    profile: {type: server, flavor: m1.small, image: cirros}\n"
        "    count: 7\n"
        "groupings:\n"
        "  - {name: db-apart, members: [db], rule: anti-affinity, scope: host}\n"
    )
    for command in ("up", "apply"):
        done = shoal(command, str(doc))
        assert done.returncode == 1, explain(done)
        assert "cannot be placed" in done.stderr
        assert "Traceback" not in done.stderr
    planned = shoal("plan", str(doc))
    assert planned.returncode == 1, explain(planned)
    from_stdin = shoal("plan", "-", stdin=doc.read_text())
    assert from_stdin.returncode == 1, explain(from_stdin)
    assert "cannot be placed" in from_stdin.stdout
    invalid = shoal("plan", "-", stdin="name: x\nnode_groups: 3\n")
    assert invalid.returncode == 2, explain(invalid)
    assert "/node_groups" in invalid.stderr


def test_unplaceable_document_placed_by_its_action_exits_1(home: Path, tmp_path: Path) -> None:
    """Above `sync_place_max_nodes` the create's action places it (issue 23): the request is
    accepted, the action fails with the reasons, `up` still exits 1, and no cluster is left."""
    shoal = Shoal(
        home,
        provider="sim",
        provider_options={"state_path": "sim.db"},
        extra={"SHOAL_SYNC_PLACE_MAX_NODES": "0"},
    )
    doc = tmp_path / "apart.yaml"
    doc.write_text(
        "name: apart\n"
        "node_groups:\n"
        "  - name: db\n"
        "    profile: {type: server, flavor: m1.small, image: cirros}\n"
        "    count: 7\n"
        "groupings:\n"
        "  - {name: db-apart, members: [db], rule: anti-affinity, scope: host}\n"
    )
    done = shoal("up", str(doc))
    assert done.returncode == 1, explain(done)
    assert "cannot be placed" in done.stderr, explain(done)
    assert "Traceback" not in done.stderr
    assert shoal.json("get", "clusters")["clusters"] == []
    assert shoal.json("get", "nodes")["nodes"] == []


def test_a_missing_file_and_a_taken_name_exit_2(shoal: Shoal, tmp_path: Path) -> None:
    missing = shoal("up", str(tmp_path / "nowhere.yaml"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    taken = shoal("up", str(doc))
    assert taken.returncode == 2, explain(taken)
    assert "/name" in taken.stderr


def test_a_failed_action_exits_1(home: Path, tmp_path: Path) -> None:
    broken = Shoal(
        home,
        provider="sim",
        provider_options={"state_path": "sim.db", "failure_rate": 1.0},
        extra={"SHOAL_ACTION_RETRIES": "1"},
    )
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    done = broken("up", str(doc))
    assert done.returncode == 1, explain(done)
    assert "FAILED" in done.stderr
    assert "Traceback" not in done.stderr


def test_document_from_stdin(shoal: Shoal) -> None:
    done = shoal.ok("up", "-", stdin=WEB)
    assert "cluster web: ACTIVE" in done.stdout
