"""Active management end to end on the `local` provider: real node processes, real HTTP.

One Shoal server per test (`tests/support/serve.py`), ticking its manager every 0.2 s and
reconciling every second. Each scenario breaks something the way it breaks in life — a node
process killed, a host lost, a workdir deleted behind Shoal's back, a profile rolled out, a bad
image rolled out, a webhook fired — and checks, through the API and by asking the nodes
themselves over HTTP, that Shoal put it right. Waits are bounded; nothing asserts on timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import yaml

from shoal.model.catalogs import default_inventory
from tests.e2e.conftest import StartServer
from tests.e2e.flows import MANAGED, TINY, get_cluster, node_list
from tests.support.server import ServerProcess, eventually, free_port, wait_action, wait_ok

HTTP_CHECK = {
    "check": "http",
    "path": "/health",
    "interval_s": 1,
    "failures": 2,
    "grace_s": 3,
    "max_unhealthy": 1,
}
REPAIR_TIMEOUT_S = 60.0
PROBE_TIMEOUT_S = 1.0


# -- helpers --------------------------------------------------------------------------------


def start(start_server: StartServer, extra: dict[str, str] | None = None) -> ServerProcess:
    return start_server(
        provider="local", provider_options={"port": free_port()}, extra={**MANAGED, **(extra or {})}
    )


def group(name: str, count: int, **policies: Any) -> dict[str, Any]:
    return {"name": name, "profile": dict(TINY), "count": count, "min": 1, "max": 10, **policies}


def create(client: httpx.Client, document: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/clusters", json=document)
    wait_ok(client, r)
    cluster = get_cluster(client, r.json()["cluster"]["id"])
    assert cluster["status"] == "ACTIVE", cluster
    return cluster


def ask(
    address: str | None, path: str = "/", http: httpx.Client | None = None
) -> dict[str, Any] | None:
    """The node's `GET /` (its name, pid, host...), or None if it does not answer; another
    `path` gives `{}` when it answers 200."""
    if not address:
        return None
    try:
        if http is None:
            r = httpx.get(f"http://{address}{path}", timeout=PROBE_TIMEOUT_S, trust_env=False)
        else:
            r = http.get(f"http://{address}{path}")
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    if path != "/":
        return {}
    body: dict[str, Any] = r.json()
    return body


def settled(client: httpx.Client, cid: str, count: int) -> dict[str, Any] | None:
    """The cluster once it is ACTIVE, holds `count` nodes, all ACTIVE and answering HTTP."""
    c = get_cluster(client, cid)
    nodes = c["nodes"]
    if c["status"] != "ACTIVE" or c["action"] or len(nodes) != count:
        return None
    if any(n["status"] != "ACTIVE" or ask(n["address"]) is None for n in nodes):
        return None
    return c


def wait_settled(client: httpx.Client, cid: str, count: int) -> dict[str, Any]:
    found: dict[str, Any] = eventually(
        lambda: settled(client, cid, count), timeout_s=REPAIR_TIMEOUT_S, every_s=0.2
    )
    return found


def node_of(cluster: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in cluster["nodes"] if n["name"] == name)


def events(client: httpx.Client, cid: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        body = client.get("/v1/events", params={"cluster": cid, "after": after, "limit": 500})
        assert body.status_code == 200, body.text
        page = body.json()["events"]
        if not page:
            return out
        out.extend(page)
        after = max(int(body.json().get("next") or 0), int(page[-1]["id"]))


def actions(client: httpx.Client, cid: str, kind: str) -> list[dict[str, Any]]:
    r = client.get("/v1/actions", params={"cluster": cid})
    assert r.status_code == 200, r.text
    return [a for a in r.json()["actions"] if a["action"] == kind]


def recovered(client: httpx.Client, cid: str) -> list[dict[str, Any]]:
    """The cluster's CLUSTER_RECOVER actions that succeeded."""
    return [a for a in actions(client, cid, "CLUSTER_RECOVER") if a["status"] == "SUCCEEDED"]


# -- 1. a node's process dies, or hangs ---------------------------------------------------


def test_a_killed_node_process_is_noticed_and_the_node_answers_again(
    start_server: StartServer,
) -> None:
    server = start(start_server)
    with server.client() as client:
        health = dict(HTTP_CHECK, recovery="rebuild")
        cluster = create(client, {"name": "crash", "node_groups": [group("web", 3, health=health)]})
        cid = cluster["id"]
        victim = node_of(cluster, "web-1")
        before = ask(victim["address"])
        assert before is not None and before["name"] == "crash-web-1", before
        marker = events(client, cid)[-1]["id"]

        # kill -9 the node's process group, as a crash would
        os.killpg(before["pid"], signal.SIGKILL)
        eventually(lambda: ask(victim["address"]) is None, timeout_s=10)

        after = eventually(lambda: new_process(victim, before), timeout_s=REPAIR_TIMEOUT_S)
        assert after["name"] == "crash-web-1" and after["host"] == victim["host"]
        now = wait_settled(client, cid, 3)
        assert node_of(now, "web-1")["address"] == victim["address"]  # repaired in place

        seen = [e for e in events(client, cid) if e["id"] > marker]
        mine = [e["status"] for e in seen if e["obj_type"] == "NODE" and e["obj_name"] == "web-1"]
        assert mine and mine[0] != "ACTIVE" and mine[-1] in ("ACTIVE", "HEALTHY"), seen
        assert any(e["obj_type"] == "ACTION" and e["obj_name"] == "CLUSTER_RECOVER" for e in seen)
        assert recovered(client, cid), actions(client, cid, "CLUSTER_RECOVER")


def test_a_hung_node_fails_its_health_checks_and_is_rebuilt(start_server: StartServer) -> None:
    """A stopped process still runs as far as the provider can tell; only the check sees it."""
    server = start(start_server)
    with server.client() as client:
        health = dict(HTTP_CHECK, recovery="rebuild")
        cluster = create(client, {"name": "hang", "node_groups": [group("web", 3, health=health)]})
        cid = cluster["id"]
        victim = node_of(cluster, "web-2")
        before = ask(victim["address"])
        assert before is not None, victim
        # let the grace period pass and the node be judged healthy once
        eventually(lambda: node_said(client, cid, "web-2", "HEALTHY"), timeout_s=REPAIR_TIMEOUT_S)
        marker = events(client, cid)[-1]["id"]

        os.killpg(before["pid"], signal.SIGSTOP)
        try:
            after = eventually(lambda: new_process(victim, before), timeout_s=REPAIR_TIMEOUT_S)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(before["pid"], signal.SIGKILL)
        assert after["name"] == "hang-web-2"
        wait_settled(client, cid, 3)

        seen = [e for e in events(client, cid) if e["id"] > marker]
        mine = [e["status"] for e in seen if e["obj_type"] == "NODE" and e["obj_name"] == "web-2"]
        # the transition: a failed check, then unhealthy, then healthy again after the rebuild
        assert "WARNING" in mine and "UNHEALTHY" in mine, seen
        assert mine.index("WARNING") < mine.index("UNHEALTHY"), mine
        assert "HEALTHY" in mine[mine.index("UNHEALTHY") :], seen
        rebuilt = recovered(client, cid)
        assert rebuilt, actions(client, cid, "CLUSTER_RECOVER")
        assert any("rebuild" in e["message"] for e in seen if e["obj_type"] == "CLUSTER"), seen


def new_process(node: dict[str, Any], before: dict[str, Any]) -> dict[str, Any] | None:
    """The node's `GET /` once a process other than `before`'s answers on its address."""
    me = ask(node["address"])
    return me if me is not None and me["pid"] != before["pid"] else None


def node_said(client: httpx.Client, cid: str, name: str, status: str) -> bool:
    return any(
        e["obj_type"] == "NODE" and e["obj_name"] == name and e["status"] == status
        for e in events(client, cid)
    )


# -- 2. a host is lost --------------------------------------------------------------------


def test_a_failed_hosts_nodes_come_back_elsewhere_still_apart(start_server: StartServer) -> None:
    server = start(start_server)
    with server.client() as client:
        document = {
            "name": "apart",
            "node_groups": [group("web", 4)],
            "groupings": [
                {
                    "name": "one-per-host",
                    "members": ["web"],
                    "rule": "anti-affinity",
                    "scope": "host",
                }
            ],
        }
        cluster = create(client, document)
        cid = cluster["id"]
        assert len({n["host"] for n in cluster["nodes"]}) == 4
        victim = node_of(cluster, "web-3")
        lost = victim["host"]

        r = client.post(f"/v1/hosts/{lost}/fail")
        assert r.status_code == 200, r.text
        assert r.json()["failed"] is True
        hosts = {h["name"]: h for h in client.get("/v1/hosts").json()["hosts"]}
        assert hosts[lost]["failed"] is True

        def moved() -> dict[str, Any] | None:
            c = settled(client, cid, 4)
            return c if c is not None and node_of(c, "web-3")["host"] != lost else None

        now = eventually(moved, timeout_s=REPAIR_TIMEOUT_S, every_s=0.2)
        where = {n["name"]: n["host"] for n in now["nodes"]}
        assert lost not in where.values(), where
        assert len(set(where.values())) == 4, where  # anti-affinity still holds
        for n in now["nodes"]:
            me = ask(n["address"])
            assert me is not None and me["host"] == n["host"], (n, me)
            assert me["name"] == f"apart-{n['name']}"
        assert recovered(client, cid)

        assert client.post(f"/v1/hosts/{lost}/recover").status_code == 200


# -- 3. a node's workdir vanishes -----------------------------------------------------------


def test_a_deleted_workdir_is_repaired(start_server: StartServer) -> None:
    server = start(start_server)
    with server.client() as client:
        cluster = create(client, {"name": "disk", "node_groups": [group("web", 2)]})
        cid = cluster["id"]
        victim = node_of(cluster, "web-1")
        before = ask(victim["address"])
        assert before is not None
        physical = next(n for n in node_list(client, cid) if n["name"] == "web-1")["physical_id"]
        workdir = Path(local_record(server.home, physical)["workdir"])
        assert workdir.is_dir() and workdir.is_relative_to(server.home / "local")

        shutil.rmtree(workdir)

        after = eventually(lambda: new_process(victim, before), timeout_s=REPAIR_TIMEOUT_S)
        assert after["name"] == "disk-web-1"
        wait_settled(client, cid, 2)
        assert workdir.is_dir()  # made again, in place
        assert recovered(client, cid)


def local_record(home: Path, resource_id: str) -> dict[str, Any]:
    """The local provider's record of one resource (under $SHOAL_HOME/local/resources)."""
    for path in (home / "local" / "resources").glob("*.json"):
        record: dict[str, Any] = json.loads(path.read_text())
        if record.get("id") == resource_id:
            return record
    raise AssertionError(f"the local provider has no record of {resource_id}")


# -- 4. a rolling update never takes more than one node down ------------------------------


class Sampler:
    """Every ~50 ms: the cluster's nodes and their statuses, and an HTTP probe of every address
    it lists. A replica (web-1, and its old self `web-1~...` while replaced) is down when none
    of its nodes is ACTIVE, or none answers."""

    def __init__(self, client: httpx.Client, cid: str) -> None:
        self.client = client
        self.cid = cid
        self.samples: list[tuple[set[str], set[str]]] = []
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=16)
        # no keep-alive: a pooled connection to a node's old process must not stand for the
        # new one on the same address
        self.http = httpx.Client(
            timeout=PROBE_TIMEOUT_S,
            trust_env=False,
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        self.pool.shutdown()
        self.http.close()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.samples.append(self.sample())
            self.stop.wait(0.05)

    def sample(self) -> tuple[set[str], set[str]]:
        nodes = get_cluster(self.client, self.cid)["nodes"]
        # all at once, right after the listing, so the answers and the statuses are of a moment
        answers = list(self.pool.map(lambda n: ask(n["address"], "/health", self.http), nodes))
        replicas = {n["name"].split("~")[0] for n in nodes}
        active = {n["name"].split("~")[0] for n in nodes if n["status"] == "ACTIVE"}
        answering = {
            n["name"].split("~")[0] for n, a in zip(nodes, answers, strict=True) if a is not None
        }
        return replicas - active, replicas - answering


def test_a_rolling_update_keeps_all_but_one_node_up(start_server: StartServer) -> None:
    server = start(start_server)
    with server.client() as client:
        web = group("web", 6, health=dict(HTTP_CHECK, recovery="replace"))
        web["update"] = {"max_unavailable": 1}
        document = {"name": "roll", "node_groups": [web]}
        cluster = create(client, document)
        cid = cluster["id"]
        names = sorted(n["name"] for n in cluster["nodes"])

        changed = json.loads(json.dumps(document))
        changed["node_groups"][0]["profile"]["flavor"] = "m1.small"
        with Sampler(client, cid) as sampler:
            r = client.put(f"/v1/clusters/{cid}", json=changed)
            assert r.status_code == 202, r.text
            done = wait_action(client, r.headers["Location"])
            sampler.samples.append(sampler.sample())
        assert done["action"]["status"] == "SUCCEEDED", done

        samples = sampler.samples
        worst = [s for s in samples if len(s[0]) > 1 or len(s[1]) > 1]
        assert not worst, f"more than one node down at once: {worst[:5]}"
        assert any(s[0] or s[1] for s in samples), "the sampler never saw a node being replaced"

        final = wait_settled(client, cid, 6)
        assert sorted(n["name"] for n in final["nodes"]) == names
        detail = node_list(client, cid)
        assert len(detail) == 6
        assert all(n["status"] == "ACTIVE" for n in detail), detail
        assert all(n["profile"]["flavor"] == "m1.small" for n in detail), detail


# -- 5. a bad image is rolled back --------------------------------------------------------


def inventory_with_broken_image(path: Path) -> Path:
    """The default 2 x 3 inventory, plus an image `broken` whose command exits at once."""
    inv = default_inventory()
    hosts = [
        {
            "name": h.name,
            "zone": h.zone,
            "vcpus": h.vcpus,
            "ram_mb": h.ram_mb,
            "disk_gb": h.disk_gb,
            "volume_gb": h.volume_gb,
        }
        for h in inv.hosts
    ]
    images: list[dict[str, Any]] = [
        {"id": i.id, "name": i.name, "min_disk_gb": i.min_disk_gb} for i in inv.images
    ]
    images.append(
        {
            "name": "broken",
            "properties": {"command": '{python} -c "raise SystemExit(1)"'},
        }
    )
    path.write_text(yaml.safe_dump({"hosts": hosts, "images": images}, sort_keys=False))
    return path


def test_an_update_to_a_bad_image_stops_and_rolls_back(
    start_server: StartServer, tmp_path: Path
) -> None:
    inventory = inventory_with_broken_image(tmp_path / "inventory.yaml")
    server = start(start_server, {"SHOAL_INVENTORY": str(inventory)})
    with server.client() as client:
        web = group("web", 3, health=dict(HTTP_CHECK, recovery="replace"))
        web["update"] = {"max_unavailable": 1}
        document = {"name": "badimg", "node_groups": [web]}
        cid = create(client, document)["id"]

        changed = json.loads(json.dumps(document))
        changed["node_groups"][0]["profile"]["image"] = "broken"
        r = client.put(f"/v1/clusters/{cid}", json=changed)
        assert r.status_code == 202, r.text
        done = wait_action(client, r.headers["Location"])["action"]
        assert done["status"] == "FAILED", done
        assert "rolled back" in done["status_reason"], done

        final = wait_settled(client, cid, 3)
        assert final["document"]["node_groups"][0]["profile"]["image"] == "cirros"
        detail = node_list(client, cid)
        assert all(n["status"] == "ACTIVE" for n in detail), detail
        assert all(n["profile"]["image"] == "cirros" for n in detail), detail


# -- 6. a webhook scales out --------------------------------------------------------------


def test_a_webhook_grows_the_group_by_its_step(start_server: StartServer) -> None:
    server = start(start_server)
    with server.client() as client:
        web = group("web", 2)
        web["scaling"] = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 2, "cooldown_s": 60}
        cid = create(client, {"name": "hook", "node_groups": [web]})["id"]

        r = client.post(
            "/v1/receivers",
            json={"name": "grow", "cluster": "hook", "action": "scale_out", "nodegroup": "web"},
        )
        assert r.status_code == 201, r.text
        hook = r.json()["receiver"]["webhook_url"]

        # whoever holds the URL may call it: no bearer token
        fired = httpx.post(server.url + hook, timeout=30.0, trust_env=False)
        assert fired.status_code == 202, fired.text
        wait_ok(client, fired)

        grown = wait_settled(client, cid, 4)
        assert sorted(n["name"] for n in grown["nodes"]) == ["web-1", "web-2", "web-3", "web-4"]
        again = httpx.post(server.url + hook, timeout=30.0, trust_env=False)
        assert again.status_code == 409 and again.json()["error"]["code"] == "cooldown", again.text
