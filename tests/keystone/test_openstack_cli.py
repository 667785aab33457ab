"""The real `openstack cluster ...` CLI (python-openstackclient + python-senlinclient 3.1.0, in
their own cached venv) against Shoal in keystone mode, found through the real Keystone's catalog:
what an operator types, end to end, as tenant alice, with bob next door.

Every command is a subprocess with password auth from `OS_*` variables; `-f json` output is
parsed. Commands that start an action (expand, shrink, resize, check, recover, attach, delete)
print its id in a sentence; a test waits until `cluster show` has no action holding the cluster
(Shoal's `data.shoal.action`), then checks the actions' outcomes in one `cluster action list`.
Calls run one at a time: each one is a password auth, and Keystone 30 on SQLite writes the
user's `last_active_at` on every one; two at once can fail with "database is locked" (a 500).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from shoal import __version__
from tests.keystone.conftest import USER_PASSWORD, Keystone, osc_venv
from tests.senlin.conftest import NOVA_SPEC

WAIT_S = 60
PROJECTS = {"alice": "alpha", "bob": "beta"}
ACCEPTED = re.compile(r"accepted by action:? ([0-9a-f-]{36})")

DELETION_SPEC: dict[str, Any] = {
    "type": "senlin.policy.deletion",
    "version": "1.0",
    "properties": {"criteria": "OLDEST_FIRST", "destroy_after_deletion": True},
}
SCALING_SPEC: dict[str, Any] = {
    "type": "senlin.policy.scaling",
    "version": "1.0",
    "properties": {
        "event": "CLUSTER_SCALE_OUT",
        "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 2},
    },
}


@dataclass
class Osc:
    """`openstack` from the clients' venv, authenticated as one of the test users."""

    bin: Path
    auth_url: str
    specs: Path

    def env(self, user: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env.update(
            OS_AUTH_URL=self.auth_url,
            OS_USERNAME=user,
            OS_PASSWORD=USER_PASSWORD,
            OS_PROJECT_NAME=PROJECTS[user],
            OS_USER_DOMAIN_ID="default",
            OS_PROJECT_DOMAIN_ID="default",
            OS_IDENTITY_API_VERSION="3",
            OS_CLIENT_CONFIG_FILE=os.devnull,  # no clouds.yaml from the machine
        )
        return env

    def run(self, *args: str, user: str = "alice") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin), *args],
            env=self.env(user),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ok(self, *args: str, user: str = "alice") -> str:
        done = self.run(*args, user=user)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
        return done.stdout

    def json(self, *args: str, user: str = "alice") -> Any:
        return json.loads(self.ok(*args, "-f", "json", user=user))

    def many(self, *commands: tuple[str, ...], user: str = "alice") -> list[Any]:
        """`json` of each command, in order."""
        return [self.json(*args, user=user) for args in commands]

    def spec_file(self, name: str, spec: dict[str, Any]) -> str:
        path = self.specs / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec))
        return str(path)

    def act(self, *args: str) -> str:
        """Run a command that starts an action; the action's id."""
        out = self.ok(*args)
        found = ACCEPTED.search(out)
        assert found is not None, f"{args}: no action in {out!r}"
        return found.group(1)

    def settled(self, cluster: str) -> dict[str, Any]:
        """`cluster show` once no action holds the cluster."""
        deadline = time.monotonic() + WAIT_S
        while True:
            shown: dict[str, Any] = self.json("cluster", "show", cluster)
            if shown["data"]["shoal"]["action"] is None:
                return shown
            assert time.monotonic() < deadline, f"cluster {cluster} still busy: {shown}"
            time.sleep(0.2)

    def step(self, *args: str) -> tuple[str, dict[str, Any]]:
        """Run a command that starts an action on the cluster named last; the action's id and
        the cluster once it is done."""
        action_id = self.act(*args)
        return action_id, self.settled(args[-1])

    def actions(self, cluster_id: str) -> dict[str, tuple[str, str]]:
        """The cluster's actions: id -> (action, status)."""
        listed = self.json(
            "cluster", "action", "list", "--full-id", "--filters", f"cluster_id={cluster_id}"
        )
        return {a["id"]: (a["action"], a["status"]) for a in listed}

    def wait_gone(self, cluster: str) -> subprocess.CompletedProcess[str]:
        deadline = time.monotonic() + WAIT_S
        while True:
            done = self.run("cluster", "show", cluster, "-f", "json")
            if done.returncode != 0:
                return done
            assert time.monotonic() < deadline, f"cluster {cluster} not deleted: {done.stdout}"
            time.sleep(0.2)

    def nodes(self, cluster: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.json("cluster", "node", "list", "--cluster", cluster)
        return found


def size(shown: dict[str, Any]) -> tuple[str, int, int]:
    """Status, desired capacity and number of nodes of a shown cluster."""
    node_ids = [n for n in str(shown["node_ids"]).split("\n") if n]  # the CLI joins them
    return shown["status"], int(shown["desired_capacity"]), len(node_ids)


@pytest.fixture(scope="module")
def osc(keystone: Keystone, catalog: str, tmp_path_factory: pytest.TempPathFactory) -> Osc:
    return Osc(osc_venv() / "bin" / "openstack", keystone.url, tmp_path_factory.mktemp("specs"))


@pytest.fixture(scope="module")
def profile(osc: Osc) -> dict[str, Any]:
    created: dict[str, Any] = osc.json(
        "cluster", "profile", "create", "--spec-file", osc.spec_file("nova", NOVA_SPEC), "cli-web"
    )
    return created


@pytest.fixture(scope="module")
def cluster(osc: Osc, profile: dict[str, Any]) -> dict[str, Any]:
    """alice's cluster `cli-c1` once ACTIVE (as `cluster show` has it), with its nodes then."""
    created = osc.json(
        "cluster",
        "create",
        "--profile",
        "cli-web",
        "--desired-capacity",
        "2",
        "--min-size",
        "1",
        "--max-size",
        "5",
        "cli-c1",
    )
    assert created["name"] == "cli-c1"
    assert created["status"] in ("INIT", "CREATING", "ACTIVE")
    shown = wait_active(osc, created["id"])
    return {**shown, "nodes_when_created": osc.nodes(created["id"])}


def wait_active(osc: Osc, cluster: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while True:
        shown: dict[str, Any] = osc.json("cluster", "show", cluster)
        if shown["status"] == "ACTIVE":
            return shown
        assert shown["status"] in ("INIT", "CREATING"), shown
        assert time.monotonic() < deadline, f"cluster {cluster} still {shown['status']}"
        time.sleep(0.2)


def test_build_info_and_profile_types(osc: Osc) -> None:
    info, types = osc.many(("cluster", "build", "info"), ("cluster", "profile", "type", "list"))
    assert json.loads(info["api"]) == {"revision": f"shoal-{__version__}"}
    assert json.loads(info["engine"]) == {"revision": f"shoal-{__version__}"}
    # From microversion 1.5 type names are bare, with the version beside them (as in Senlin).
    by_name = {t["name"]: t for t in types}
    assert by_name["os.nova.server"]["version"] == "1.0"
    assert "SUPPORTED" in by_name["os.nova.server"]["support_status"]


def test_profile_create_list_show(osc: Osc, keystone: Keystone, profile: dict[str, Any]) -> None:
    assert profile["name"] == "cli-web"
    assert profile["type"] == "os.nova.server-1.0"
    assert profile["project_id"] == keystone.ids["alpha"]
    assert "m1.tiny" in profile["spec"] and "cirros" in profile["spec"]
    short = profile["id"][:8]
    listed, by_name, by_short = osc.many(
        ("cluster", "profile", "list"),
        ("cluster", "profile", "show", "cli-web"),
        ("cluster", "profile", "show", short),  # the short id the list shows: Senlin finds it
    )
    mine = {p["name"]: p for p in listed}["cli-web"]
    assert (mine["id"], mine["type"]) == (short, "os.nova.server-1.0")
    assert by_name["id"] == by_short["id"] == profile["id"]


def test_create_becomes_active_with_its_sizes_and_nodes(
    osc: Osc, keystone: Keystone, profile: dict[str, Any], cluster: dict[str, Any]
) -> None:
    assert size(cluster) == ("ACTIVE", 2, 2)
    assert (cluster["min_size"], cluster["max_size"]) == (1, 5)
    assert (cluster["profile_id"], cluster["profile_name"]) == (profile["id"], "cli-web")
    assert cluster["project_id"] == keystone.ids["alpha"]
    nodes = cluster["nodes_when_created"]
    assert sorted(n["name"] for n in nodes) == ["cli-c1-1", "cli-c1-2"]
    assert {(n["status"], n["profile_name"]) for n in nodes} == {("ACTIVE", "cli-web")}
    listed = {c["name"]: c for c in osc.json("cluster", "list")}
    assert (listed["cli-c1"]["id"], listed["cli-c1"]["status"]) == (cluster["id"][:8], "ACTIVE")


def test_expand_shrink_resize(osc: Osc, cluster: dict[str, Any]) -> None:
    out, shown = osc.step("cluster", "expand", "--count", "2", "cli-c1")
    assert size(shown) == ("ACTIVE", 4, 4)
    in_, shown = osc.step("cluster", "shrink", "cli-c1")  # by one
    assert size(shown) == ("ACTIVE", 3, 3)
    resize, shown = osc.step("cluster", "resize", "--capacity", "2", "cli-c1")
    assert size(shown) == ("ACTIVE", 2, 2)
    # past max_size: refused with Senlin's message; senlinclient prints it but exits 0 for
    # anything but a 409 here
    said = osc.ok("cluster", "expand", "--count", "10", "cli-c1")
    assert "Request error" in said
    assert "The target capacity (12) is greater than the cluster's max_size (5)." in said
    shown, listed = osc.many(
        ("cluster", "show", "cli-c1"),
        ("cluster", "action", "list", "--full-id", "--filters", f"cluster_id={cluster['id']}"),
    )
    assert size(shown) == ("ACTIVE", 2, 2)
    actions = {a["id"]: (a["action"], a["status"]) for a in listed}
    assert actions[out] == ("CLUSTER_SCALE_OUT", "SUCCEEDED")
    assert actions[in_] == ("CLUSTER_SCALE_IN", "SUCCEEDED")
    assert actions[resize] == ("CLUSTER_RESIZE", "SUCCEEDED")


def test_check_and_recover(osc: Osc, cluster: dict[str, Any]) -> None:
    check, before = osc.step("cluster", "check", "cli-c1")
    recover, after = osc.step("cluster", "recover", "--check", "true", "cli-c1")
    assert size(after) == size(before)
    assert after["node_ids"] == before["node_ids"]  # healthy nodes are left alone
    nodes, listed = osc.many(
        ("cluster", "node", "list", "--cluster", "cli-c1"),
        ("cluster", "action", "list", "--full-id", "--filters", f"cluster_id={cluster['id']}"),
    )
    assert {n["status"] for n in nodes} == {"ACTIVE"}
    actions = {a["id"]: (a["action"], a["status"]) for a in listed}
    assert actions[check] == ("CLUSTER_CHECK", "SUCCEEDED")
    assert actions[recover] == ("CLUSTER_RECOVER", "SUCCEEDED")


def test_policies_attach_bind_and_act(osc: Osc, cluster: dict[str, Any]) -> None:
    deletion, scaling = osc.many(
        (
            "cluster",
            "policy",
            "create",
            "--spec-file",
            osc.spec_file("del", DELETION_SPEC),
            "p-old",
        ),
        ("cluster", "policy", "create", "--spec-file", osc.spec_file("out", SCALING_SPEC), "p-out"),
    )
    assert deletion["type"] == "senlin.policy.deletion-1.0"
    assert scaling["type"] == "senlin.policy.scaling-1.0"
    listed, shown = osc.many(
        ("cluster", "policy", "list"), ("cluster", "policy", "show", deletion["id"][:8])
    )
    assert {p["name"]: p["id"] for p in listed}["p-old"] == deletion["id"][:8]
    assert shown["id"] == deletion["id"]
    # by name, and by the short id the list shows
    attached = [
        osc.step("cluster", "policy", "attach", "--policy", ref, "cli-c1")[0]
        for ref in ("p-old", scaling["id"][:8])
    ]
    bindings, bound = osc.many(
        ("cluster", "policy", "binding", "list", "cli-c1"),
        ("cluster", "policy", "binding", "show", "--policy", "p-out", "cli-c1"),
    )
    by_name = {b["policy_name"]: b for b in bindings}
    assert set(by_name) == {"p-old", "p-out"}
    assert by_name["p-old"]["policy_type"] == "senlin.policy.deletion-1.0"
    assert by_name["p-out"]["is_enabled"] is True
    assert (bound["policy_id"], bound["cluster_name"]) == (scaling["id"], "cli-c1")
    # the scaling policy sizes an expand without --count (by 2); the deletion policy picks
    # the oldest nodes when it shrinks
    _, shown = osc.step("cluster", "expand", "cli-c1")
    assert size(shown) == ("ACTIVE", 4, 4)
    four = {n["id"]: n["created_at"] for n in osc.nodes("cli-c1")}
    _, shown = osc.step("cluster", "resize", "--capacity", "2", "cli-c1")
    assert size(shown) == ("ACTIVE", 2, 2)
    kept = {n[:8] for n in str(shown["node_ids"]).split("\n")}
    removed = [at for short, at in four.items() if short not in kept]
    assert len(removed) == 2
    assert max(removed) <= min(four[short] for short in kept)
    detached, _ = osc.step("cluster", "policy", "detach", "--policy", "p-out", "cli-c1")
    bindings = osc.json("cluster", "policy", "binding", "list", "cli-c1")
    assert [b["policy_name"] for b in bindings] == ["p-old"]
    actions = osc.actions(cluster["id"])
    assert {actions[a] for a in attached} == {("CLUSTER_ATTACH_POLICY", "SUCCEEDED")}
    assert actions[detached] == ("CLUSTER_DETACH_POLICY", "SUCCEEDED")


def test_actions_and_events(osc: Osc, cluster: dict[str, Any]) -> None:
    full = cluster["id"]
    actions, events = osc.many(
        ("cluster", "action", "list", "--filters", f"cluster_id={full}"),
        ("cluster", "event", "list", "--filters", f"cluster_id={full}"),
    )
    creates = [a for a in actions if a["action"] == "CLUSTER_CREATE"]
    assert len(creates) == 1
    assert (creates[0]["status"], creates[0]["target_id"]) == ("SUCCEEDED", full[:8])
    assert sum(a["action"] == "NODE_CREATE" for a in actions) >= 2
    assert {e["cluster_id"] for e in events} == {full[:8]}
    on_cluster = {(e["action"], e["status"]) for e in events if e["obj_type"] == "CLUSTER"}
    assert ("CLUSTER_CREATE", "ACTIVE") in on_cluster
    up = {e["obj_name"] for e in events if (e["obj_type"], e["status"]) == ("NODE", "ACTIVE")}
    assert {"cli-c1-1", "cli-c1-2"} <= up
    # `action show` with the short id the list shows
    shown = osc.json("cluster", "action", "show", creates[0]["id"])
    assert len(shown["id"]) == 36 and shown["id"].startswith(creates[0]["id"])
    assert (shown["action"], shown["cluster_id"]) == ("CLUSTER_CREATE", full)


def test_webhook_receiver(osc: Osc, cluster: dict[str, Any]) -> None:
    made = osc.json(
        "cluster",
        "receiver",
        "create",
        "--type",
        "webhook",
        "--cluster",
        "cli-c1",
        "--action",
        "CLUSTER_SCALE_OUT",
        "cli-hook",
    )
    assert (made["name"], made["type"], made["action"]) == (
        "cli-hook",
        "webhook",
        "CLUSTER_SCALE_OUT",
    )
    assert made["cluster_id"] == cluster["id"]
    # senlinclient shows a new receiver by reading it back, and Shoal shows a webhook's secret
    # URL only in the answer to its creation: `channel` has no alarm_url here (docs/api.md).
    # The webhook itself is tested in tests/senlin/test_receivers.py.
    short = made["id"][:8]
    listed, shown = osc.many(
        ("cluster", "receiver", "list"), ("cluster", "receiver", "show", short)
    )
    assert {r["name"]: r["id"] for r in listed}["cli-hook"] == short
    assert shown["id"] == made["id"]
    assert f"Receiver deleted: ['{short}']" in osc.ok(
        "cluster", "receiver", "delete", "--force", short
    )
    assert "cli-hook" not in {r["name"] for r in osc.json("cluster", "receiver", "list")}


def test_another_tenant_sees_none_of_it(
    osc: Osc, profile: dict[str, Any], cluster: dict[str, Any]
) -> None:
    for ref in (cluster["name"], cluster["id"], cluster["id"][:8]):
        done = osc.run("cluster", "show", ref, "-f", "json", user="bob")
        assert done.returncode != 0, ref
        assert f"Cluster not found: {ref}" in done.stderr
    done = osc.run("cluster", "profile", "show", profile["id"], user="bob")
    assert done.returncode != 0
    assert "Profile not found" in done.stderr
    clusters, profiles = osc.many(("cluster", "list"), ("cluster", "profile", "list"), user="bob")
    assert "cli-c1" not in {c["name"] for c in clusters}
    assert "cli-web" not in {p["name"] for p in profiles}


def test_a_bad_request_exits_non_zero_with_the_reason(osc: Osc, profile: dict[str, Any]) -> None:
    create = ("cluster", "create", "-f", "json", "--profile")
    done = osc.run(*create, "no-such-profile", "cli-bad")
    assert done.returncode != 0
    assert "BadRequestException: 400" in done.stderr
    assert "The specified profile 'no-such-profile' could not be found." in done.stderr
    done = osc.run(*create, "cli-web", "--desired-capacity", "6", "--max-size", "5", "cli-bad")
    assert done.returncode != 0
    assert "The target capacity (6) is greater than the specified max_size (5)." in done.stderr
    assert "cli-bad" not in {c["name"] for c in osc.json("cluster", "list")}


def test_delete_until_gone(osc: Osc, profile: dict[str, Any]) -> None:
    made = osc.json(
        "cluster", "create", "--profile", "cli-web", "--desired-capacity", "1", "cli-tmp"
    )
    assert size(wait_active(osc, made["id"])) == ("ACTIVE", 1, 1)
    deleted = osc.act("cluster", "delete", "--force", "cli-tmp")
    gone = osc.wait_gone("cli-tmp")
    assert "Cluster not found: cli-tmp" in gone.stderr
    action, listed = osc.many(("cluster", "action", "show", deleted), ("cluster", "list"))
    assert (action["action"], action["status"]) == ("CLUSTER_DELETE", "SUCCEEDED")
    assert "cli-tmp" not in {c["name"] for c in listed}
