"""Senlin as the oracle for Shoal's /clustering façade (issue 28 part 5).

`observe` runs one script of openstacksdk calls — create, check, recover, resize, add, delete
and replace nodes, policy attach, a node named like its cluster, two clusters of one name, and
calls that fail — and records what each leaves behind: the cluster's status and status_reason,
its members, the action's record, the cluster's events, and the words of each error. Ids,
times and random name parts are normalised away, so the same script against real Senlin and
against Shoal gives two comparable maps. `differences` lists every key whose values differ;
`allowed` reads the differences docs/senlin.md accepts, each with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openstack import exceptions
from openstack.connection import Connection

from tests.senlin_live.cloud_ops import SERVER_SPEC, wait_action, wait_node

DOCS = Path(__file__).resolve().parents[2] / "docs" / "senlin.md"
ALLOWED_HEADING = "### Differences from Senlin the oracle test accepts"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SHORT = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}(?![0-9a-f])")  # `cluster_create_1a2b3c4d`
_NODE_NAME = re.compile(r"^node-[A-Za-z0-9]{8}$")

DELETION = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {"criteria": "OLDEST_FIRST"},
}


def norm(value: Any) -> Any:
    """Ids (full and the 8-character prefixes Senlin names actions with) and random node-name
    suffixes replaced by placeholders; lists of records sorted."""
    if isinstance(value, str):
        if _NODE_NAME.match(value):
            return "node-<random>"
        return _SHORT.sub("<id8>", _UUID.sub("<uuid>", value))
    if isinstance(value, list | tuple):
        items = [norm(v) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    return value


class Observer:
    def __init__(self, conn: Connection) -> None:
        self.conn, self.cc = conn, conn.clustering
        self.seen: dict[str, Any] = {}
        self.ids: set[str] = set()

    def cluster(self, step: str, cluster_id: str) -> None:
        c = self.cc.get_cluster(cluster_id)
        self.seen[f"{step}.cluster.status"] = c.status
        self.seen[f"{step}.cluster.status_reason"] = norm(c.status_reason)
        self.seen[f"{step}.cluster.size"] = [c.desired_capacity, c.min_size, c.max_size]
        nodes = list(self.cc.nodes(cluster_id=cluster_id))
        self.ids.update(n.id for n in nodes)
        self.seen[f"{step}.nodes"] = norm(
            [[n.name, n.index, n.status, n.status_reason, n.role or ""] for n in nodes]
        )
        self.seen[f"{step}.node_ids_match"] = sorted(n.id for n in nodes) == sorted(c.node_ids)

    def action(self, step: str, call: Callable[[], Any]) -> None:
        """The action a call started, waited for; or the call's error, recorded as such (the
        script goes on: a step one side refuses is a difference, not the end of the run)."""
        try:
            answer = call()
        except exceptions.HttpException as e:
            self.seen[f"{step}.action"] = ["refused", e.status_code, norm(e.details or str(e))]
            return
        if not isinstance(answer, dict) or "action" not in answer:
            # openstacksdk hands some refusals back as the error body instead of raising.
            body = answer if isinstance(answer, dict) else {}
            self.seen[f"{step}.action"] = ["refused", body.get("code"), norm(body.get("error"))]
            return
        action = wait_action(self.conn, answer["action"])
        self.ids.add(action.id)
        self.seen[f"{step}.action"] = norm(
            [action.name, action.action, action.status, action.status_reason, action.cause]
        )

    def error(self, step: str, call: Callable[[], Any]) -> None:
        try:
            call()
        except exceptions.HttpException as e:
            self.seen[f"{step}.error"] = [e.status_code, norm(e.details or str(e))]
            return
        self.seen[f"{step}.error"] = "no error"


def creation(conn: Connection, cluster_id: str) -> str:
    """The CLUSTER_CREATE action of a cluster (openstacksdk's create_cluster keeps no
    Location), found as a client would: the actions list filtered by target."""
    found = [a.id for a in conn.clustering.actions(target=cluster_id, action="CLUSTER_CREATE")]
    assert len(found) == 1, found
    return found[0]


def observe(conn: Connection, prefix: str) -> dict[str, Any]:
    """The script, run once against one endpoint; what it left behind, normalised."""
    o = Observer(conn)
    cc = conn.clustering
    profile = cc.create_profile(name=f"{prefix}-server", spec=SERVER_SPEC)
    name = f"{prefix}-web"

    created = cc.create_cluster(
        name=name, profile_id=profile.id, desired_capacity=2, min_size=1, max_size=5
    )
    o.ids.add(created.id)
    o.action("create", lambda: {"action": creation(conn, created.id)})
    o.cluster("create", created.id)
    cid = created.id

    o.action("check", lambda: cc.check_cluster(cid))
    o.cluster("check", cid)
    o.action("recover", lambda: cc.recover_cluster(cid))
    o.cluster("recover", cid)
    o.action("resize", lambda: cc.resize_cluster(cid, adjustment_type="EXACT_CAPACITY", number=3))
    o.cluster("resize", cid)

    # Senlin lets a node share its cluster's name.
    loner = cc.create_node(name=name, profile_id=profile.id)
    o.ids.add(loner.id)
    loner = wait_node(conn, loner.id)
    o.seen["standalone.node"] = norm([loner.name, loner.index, loner.status, loner.cluster_id])
    o.action("add_nodes", lambda: cc.add_nodes_to_cluster(cid, [loner.id]))
    o.cluster("add_nodes", cid)
    o.action("del_nodes", lambda: cc.remove_nodes_from_cluster(cid, [loner.id]))
    o.cluster("del_nodes", cid)
    o.seen["del_nodes.node"] = norm(
        [cc.get_node(loner.id).cluster_id or "", cc.get_node(loner.id).index]
    )

    spare = wait_node(conn, cc.create_node(name=f"{prefix}-spare", profile_id=profile.id).id)
    o.ids.add(spare.id)
    first = min(cc.nodes(cluster_id=cid), key=lambda n: n.index)
    o.action("replace_nodes", lambda: cc.replace_nodes_in_cluster(cid, {first.id: spare.id}))
    o.cluster("replace_nodes", cid)

    policy = cc.create_policy(name=f"{prefix}-oldest", spec=DELETION)
    o.action("policy_attach", lambda: cc.attach_policy_to_cluster(cid, policy.id, enabled=True))
    o.cluster("policy_attach", cid)
    bindings = list(cc.cluster_policies(cid))
    o.seen["policy_attach.bindings"] = norm(
        [[b.policy_name, b.policy_type, b.is_enabled] for b in bindings]
    )

    # The words of errors.
    o.error("missing_cluster", lambda: cc.get_cluster(f"{prefix}-nothing"))
    o.error(
        "resize_over_max",
        lambda: cc.resize_cluster(cid, adjustment_type="EXACT_CAPACITY", number=9),
    )
    o.error("bad_profile", lambda: cc.create_cluster(name=f"{prefix}-x", profile_id="nope"))
    o.error(
        "bad_spec",
        lambda: cc.create_profile(name=f"{prefix}-bad", spec={"type": "os.nova.server"}),
    )
    o.error("min_over_max", lambda: cc.update_cluster(cid, min_size=9))
    # Names need not be unique: a second cluster of one name is made; by name it is ambiguous.
    twin = cc.create_cluster(name=name, profile_id=profile.id, desired_capacity=0)
    o.ids.add(twin.id)
    o.action("twin", lambda: {"action": creation(conn, twin.id)})
    o.error("ambiguous_name", lambda: cc.get_cluster(name))

    o.seen["events"] = norm(
        sorted(
            {(e.obj_type, e.action, e.status) for e in conn.clustering.events(obj_id=cid)},
            key=repr,
        )
    )
    return o.seen


def differences(senlin: dict[str, Any], shoal: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {
        k: (senlin.get(k), shoal.get(k))
        for k in sorted(set(senlin) | set(shoal))
        if senlin.get(k) != shoal.get(k)
    }


def allowed(text: str | None = None) -> dict[str, str]:
    """The accepted differences: docs/senlin.md's table under ALLOWED_HEADING,
    `| key | reason |` rows, each with a reason."""
    doc = text if text is not None else DOCS.read_text()
    _, _, rest = doc.partition(ALLOWED_HEADING)
    out: dict[str, str] = {}
    for line in rest.splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            out[cells[0].strip("`")] = cells[1]
    return out
