"""Crash and race suite: several `shoal server` processes on one PostgreSQL and one simulated
cloud in real-cloud mode, creates, scale-outs, scale-ins and deletes from many clients, bursts
of concurrent creates on a tight inventory, and servers killed with `kill -9` (and restarted)
while all that runs. Then it waits for quiescence and checks the books.

The sim runs with `real_cloud: true`: a create the cloud sees twice makes two servers unless
Shoal finds the first, so duplicates here are Shoal's own (the default sim cannot make one).
It also has latency and a failure rate, so retries, failed steps and convergence all happen.

After quiescence (no action running, no cluster locked, or a time limit):
- converged: clusters at their declared state (every declared node exists and is ACTIVE), or
  ERROR/WARNING with a reason; `unexplained` counts the rest;
- stuck: actions not ended, or clusters still locked;
- duplicates: cloud resources sharing one node's key; orphans: cloud resources no live node
  accounts for; lost: live nodes whose resource the cloud does not have;
- violations: hard rules broken (anti-affinity, a unit's parts apart, checked by
  `verify_placement`), plus hosts holding more than their capacity in Shoal's claims or in the
  cloud (`double_claims` counts those alone);
- server_errors: HTTP 5xx answers; takeover_s: the longest time from a kill until no action
  is left with an expired lease (another engine took its work over).
One JSON line with those figures. Needs PostgreSQL at 127.0.0.1:5432 (trust auth); makes its
own database and drops it.

Run: `python benchmarks/chaos.py [--seconds 75] [--servers 3] [--seed 1]`
(a default run takes about 2-3 minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
from sqlalchemy import Engine, create_engine, text

sys.path.insert(0, str(Path(__file__).parent))
from _servers import PG_ADMIN, Server, server_env

if TYPE_CHECKING:
    from shoal.model.inventory import Inventory

HOSTS, ZONES = 4, 2
LEASE_S = 3.0
LIVE = ("INIT", "READY", "RUNNING")


def doc(name: str, rng: random.Random) -> dict[str, Any]:
    """A small cluster: anti-affine app servers, sometimes a db unit (server + volume)."""
    count = rng.randint(1, 3)
    groups: list[dict[str, Any]] = [
        {
            "name": "app",
            "profile": {"type": "server", "flavor": "m1.xlarge", "image": "cirros"},
            "count": count,
            "max": 4,
        }
    ]
    if rng.random() < 0.4:
        groups.append(
            {
                "name": "db",
                "unit": {
                    "server": {"type": "server", "flavor": "m1.large", "image": "cirros"},
                    "data": {"type": "volume", "size": 50},
                },
                "count": 1,
            }
        )
    return {
        "name": name,
        "node_groups": groups,
        "groupings": [{"name": "apart", "members": ["app"], "rule": "anti-affinity"}],
    }


class Chaos:
    def __init__(self, servers: list[Server], token: str, seed: int, db_url: str) -> None:
        self.servers = servers
        self.token = token
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.names: list[str] = []
        self.statuses: Counter[str] = Counter()
        self.server_errors: list[str] = []
        self.operations = 0
        self.kills: list[float] = []
        self.stop = threading.Event()
        self.db = create_engine(db_url)
        self.counter = 0
        self.restarts: list[threading.Thread] = []

    # -- clients ---------------------------------------------------------------------------

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response | None:
        """Send to a live server (another one if the first is down); None if none answered."""
        headers = {"Authorization": f"Bearer {self.token}"}
        for _ in range(6):
            with self.lock:
                live = [s for s in self.servers if s.alive]
            if not live:
                time.sleep(0.5)
                continue
            server = self.rng.choice(live)
            try:
                r = httpx.request(method, server.url + path, headers=headers, timeout=30.0, **kw)
            except httpx.TransportError:
                time.sleep(0.2)
                continue
            with self.lock:
                self.operations += 1
                self.statuses[str(r.status_code)] += 1
                if r.status_code >= 500:
                    self.server_errors.append(f"{method} {path}: {r.status_code} {r.text[:300]}")
            return r
        return None

    def create(self) -> None:
        with self.lock:
            self.counter += 1
            name = f"c{self.counter}"
        r = self.request("POST", "/v1/clusters", json=doc(name, self.rng))
        if r is not None and r.status_code == 202:
            with self.lock:
                self.names.append(name)

    def pick(self) -> str | None:
        with self.lock:
            return self.rng.choice(self.names) if self.names else None

    def scale(self, out: bool) -> None:
        name = self.pick()
        if name is not None:
            op = "scale_out" if out else "scale_in"
            body = {op: {"count": 1, "nodegroup": "app"}}
            self.request("POST", f"/v1/clusters/{name}/actions", json=body)

    def delete(self) -> None:
        name = self.pick()
        if name is not None:
            r = self.request("DELETE", f"/v1/clusters/{name}")
            if r is not None and r.status_code in (202, 404):
                with self.lock, contextlib.suppress(ValueError):
                    self.names.remove(name)

    def worker(self) -> None:
        while not self.stop.is_set():
            roll = self.rng.random()
            if roll < 0.4:
                self.create()
            elif roll < 0.6:
                self.scale(True)
            elif roll < 0.75:
                self.scale(False)
            else:
                self.delete()
            time.sleep(self.rng.uniform(0.05, 0.3))

    def burst(self, n: int) -> None:
        """`n` creates at once, on an inventory that has room for a few."""
        threads = [threading.Thread(target=self.create) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # -- crashes ---------------------------------------------------------------------------

    def killer(self, every_s: float) -> None:
        while not self.stop.wait(self.rng.uniform(every_s * 0.7, every_s * 1.3)):
            with self.lock:
                live = [s for s in self.servers if s.alive and s.ready]
            if len(live) < 2:
                continue
            victim = self.rng.choice(live)
            victim.kill()
            with self.lock:
                self.kills.append(time.monotonic())
            down_s = self.rng.uniform(0.5, 2.5)
            # Restarting takes seconds; the next kill does not wait for it.
            restart = threading.Thread(target=self.restart, args=(victim, down_s))
            restart.start()
            self.restarts.append(restart)

    def restart(self, server: Server, after_s: float) -> None:
        time.sleep(after_s)
        with self.lock:
            if server.alive:
                return
        server.start()

    def orphaned_leases(self) -> int:
        return orphaned_leases(self.db)

    def takeover_watch(self, out: list[float]) -> None:
        """For each kill: the time until no running action is left with an expired lease."""
        seen = 0
        while not self.stop.is_set() or seen < len(self.kills):
            with self.lock:
                kills = list(self.kills)
            if seen < len(kills):
                killed_at = kills[seen]
                seen += 1
                time.sleep(LEASE_S)  # a lease cannot run out before this
                deadline = time.monotonic() + 60
                while self.orphaned_leases() and time.monotonic() < deadline:
                    time.sleep(0.1)
                out.append(time.monotonic() - killed_at)
            else:
                time.sleep(0.2)


def orphaned_leases(db: Engine) -> int:
    """Running actions whose lease ran out: work no engine has taken over (yet)."""
    with db.connect() as c:
        return int(
            c.execute(
                text(
                    "SELECT count(*) FROM actions WHERE status = 'RUNNING' "
                    "AND lease_expires_at < :now"
                ),
                {"now": time.time() - 0.5},
            ).scalar_one()
        )


def quiesce(db: Engine, limit_s: float) -> tuple[int, int]:
    """Wait until no action runs and no cluster is locked (or `limit_s`); what is left."""
    deadline = time.monotonic() + limit_s
    while True:
        with db.connect() as c:
            actions = int(
                c.execute(
                    text("SELECT count(*) FROM actions WHERE status IN ('INIT','READY','RUNNING')")
                ).scalar_one()
            )
            locked = int(
                c.execute(
                    text(
                        "SELECT count(*) FROM clusters WHERE deleted_at IS NULL "
                        "AND lock_action_id IS NOT NULL"
                    )
                ).scalar_one()
            )
        if (actions == 0 and locked == 0) or time.monotonic() > deadline:
            return actions, locked
        time.sleep(0.5)


def settled(db: Engine, limit_s: float) -> None:
    """Give the manager time to converge clusters missing nodes (bounded)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if all(ok for _, ok, _ in judge_clusters(db)):
            return
        time.sleep(1.0)


def judge_clusters(db: Engine) -> list[tuple[str, bool, str]]:
    """(name, converged, why) per live cluster."""
    from shoal.engine.settle import current_nodes, declared_nodes
    from shoal.model.enums import NodeStatus
    from shoal.store.records import ClusterRecord, NodeRecord
    from shoal.store.tables import clusters, nodes

    out: list[tuple[str, bool, str]] = []
    with db.connect() as c:
        rows = c.execute(clusters.select().where(clusters.c.deleted_at.is_(None))).mappings()
        found = [ClusterRecord.from_row(r) for r in rows]
        for cl in found:
            ns = [
                NodeRecord.from_row(r)
                for r in c.execute(
                    nodes.select().where(nodes.c.cluster_id == cl.id, nodes.c.deleted_at.is_(None))
                ).mappings()
            ]
            live = current_nodes(ns)
            at_declared = (
                cl.lock_action_id is None
                and len(live) == declared_nodes(cl.document)
                and len(live) == len(ns)
                and all(n.status is NodeStatus.ACTIVE for n in live)
                and cl.status == "ACTIVE"
            )
            explained = cl.status in ("ERROR", "WARNING") and bool(cl.status_reason)
            why = "" if at_declared else f"{cl.status}: {cl.status_reason or '(no reason)'}"
            out.append((cl.name, at_declared or explained, why))
    return out


def books(db: Engine, sim_state: Path, inventory: Inventory) -> dict[str, Any]:
    """Store against cloud: duplicates, orphans, lost; hard rules; capacity per host.
    `inventory` is what the servers' sim has (`synthetic_inventory` of its options)."""
    from shoal.documents import cluster_from_tree
    from shoal.engine.decide import observed_of
    from shoal.model.nodes import expand
    from shoal.placement.verify import verify_placement
    from shoal.planning import choose_replicas
    from shoal.store.records import ClusterRecord, NodeRecord
    from shoal.store.tables import clusters, nodes

    cap = {h.name: h for h in inventory.hosts}
    with db.connect() as c:
        live_nodes = [
            NodeRecord.from_row(r)
            for r in c.execute(nodes.select().where(nodes.c.deleted_at.is_(None))).mappings()
        ]
        live_clusters = [
            ClusterRecord.from_row(r)
            for r in c.execute(clusters.select().where(clusters.c.deleted_at.is_(None))).mappings()
        ]
    cloud = sqlite3.connect(sim_state)
    resources = cloud.execute(
        "SELECT id, key, host, vcpus, ram_mb, disk_gb, volume_gb FROM resources"
    ).fetchall()
    cloud.close()
    keys = Counter(str(r[1]).split("#", 1)[0] for r in resources)
    node_ids = {n.id for n in live_nodes}
    duplicates = sum(n - 1 for n in keys.values() if n > 1)
    orphans = sum(n for k, n in keys.items() if k not in node_ids)
    cloud_ids = {str(r[0]) for r in resources}
    lost = sum(1 for n in live_nodes if n.provider_id and n.provider_id not in cloud_ids)

    over: list[str] = []
    for what, rows in (
        ("claims", [(n.host, n.vcpus, n.ram_mb, n.disk_gb, n.volume_gb) for n in live_nodes]),
        ("cloud", [(r[2], r[3], r[4], r[5], r[6]) for r in resources]),
    ):
        per: dict[str, list[int]] = {}
        for host, *d in rows:
            if host is None:
                continue
            acc = per.setdefault(host, [0, 0, 0, 0])
            for i, v in enumerate(d):
                acc[i] += int(v or 0)
        for host, (v, r, dk, vol) in per.items():
            h = cap[host]
            if v > h.vcpus or r > h.ram_mb or dk > h.disk_gb or vol > h.volume_gb:
                over.append(f"{what} over capacity on {host}")

    rules: list[str] = []
    for cl in live_clusters:
        mine = [n for n in live_nodes if n.cluster_id == cl.id and n.host and "~" not in n.name]
        spec = cluster_from_tree(cl.document, inventory)
        desired = choose_replicas(spec, observed_of(mine))
        if {n.name for n in expand(desired)} != {n.name for n in mine}:
            continue  # not at its declared state (judged above); its rules are checked when it is
        hosts = {n.name: n.host for n in mine if n.host}
        check = verify_placement(desired, inventory, hosts)
        rules += [f"{cl.name}: {v}" for v in check.hard_violations]
    return {
        "duplicates": duplicates,
        "orphans": orphans,
        "lost": lost,
        "double_claims": len(over),
        "violations": len(over) + len(rules),
        "violation_samples": (over + rules)[:5],
    }


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new PostgreSQL database for one run (its SQLAlchemy URL), dropped after it."""
    dbname = f"shoal_chaos_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{dbname}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def start_servers(
    work: Path, db_url: str, options: dict[str, Any], count: int, **settings: str
) -> list[Server]:
    """`count` engines on `db_url` and one shared sim (`options`), started one at a time (the
    first migrates and makes the admin token); each in `work/s<i>` unless `settings` names
    another home. On failure the ones started are stopped."""
    servers: list[Server] = []
    try:
        for i in range(count):
            home = work / f"s{i}"
            env = server_env(
                home,
                SHOAL_DATABASE_URL=db_url,
                SHOAL_PROVIDER="sim",
                SHOAL_PROVIDER_OPTIONS=json.dumps(options),
                SHOAL_LEASE_S=str(LEASE_S),
                SHOAL_MANAGE_TICK_S="0.5",
                SHOAL_RECONCILE_INTERVAL_S="2",
                SHOAL_RETRY_BACKOFF_S="0.2",
                **{"SHOAL_ACTION_RETRIES": "3", **settings},
            )
            s = Server(home, env)
            servers.append(s)
            s.start(90)
    except BaseException:
        for s in servers:
            s.stop(15)
        raise
    return servers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=75.0, help="length of the workload")
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4, help="concurrent clients")
    parser.add_argument("--kill-every", type=float, default=8.0, help="mean seconds per kill")
    parser.add_argument("--burst", type=int, default=12, help="creates in each burst")
    parser.add_argument("--failure-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--scenario",
        default="races",
        help="races (the drill above), or a comma-separated list of the new parts' scenarios "
        "(benchmarks/chaos_parts.py): transitions, rollouts, balancers, hangs, full-disk",
    )
    parser.add_argument("--clusters", type=int, default=6, help="clusters (new parts)")
    parser.add_argument("--rounds", type=int, default=4, help="changes per cluster (new parts)")
    args = parser.parse_args()

    if args.scenario != "races":
        import chaos_parts  # benchmarks/chaos_parts.py: the new parts' scenarios

        chaos_parts.main(args)
        return
    with fresh_database() as db_url:
        races(args, db_url)


def races(args: argparse.Namespace, db_url: str) -> None:
    """The original drill: creates, scales and deletes from many clients, bursts, kills."""
    work = Path(tempfile.mkdtemp(prefix="shoal-chaos-"))
    sim_state = work / "cloud.sqlite"
    options = {
        "hosts": HOSTS,
        "zones": ZONES,
        "create_latency_s": 0.4,
        "delete_latency_s": 0.1,
        "failure_rate": args.failure_rate,
        "seed": args.seed,
        "state_path": str(sim_state),
        "real_cloud": True,
    }
    servers: list[Server] = []
    started = time.monotonic()
    try:
        servers = start_servers(work, db_url, options, args.servers)
        token = (servers[0].home / "admin-token").read_text().strip()
        chaos = Chaos(servers, token, args.seed, db_url)
        takeovers: list[float] = []
        threads = [threading.Thread(target=chaos.worker) for _ in range(args.workers)]
        threads.append(threading.Thread(target=chaos.killer, args=(args.kill_every,)))
        watcher = threading.Thread(target=chaos.takeover_watch, args=(takeovers,))
        for t in threads:
            t.start()
        watcher.start()
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            chaos.burst(args.burst)
            time.sleep(min(20.0, max(0.0, end - time.monotonic())))
        chaos.stop.set()
        for t in threads:
            t.join()
        for t in chaos.restarts:
            t.join()
        for s in servers:
            if not s.alive:
                s.start()
        watcher.join()
        actions_left, locked = quiesce(chaos.db, 120)
        settled(chaos.db, 60)
        judged = judge_clusters(chaos.db)
        from shoal.model.catalogs import synthetic_inventory

        figures = books(chaos.db, sim_state, synthetic_inventory(HOSTS, ZONES, seed=args.seed))
        converged = sum(1 for _, ok, _ in judged if ok)
        line = {
            "benchmark": "chaos",
            "scenario": "races",
            "servers": args.servers,
            "operations": chaos.operations,
            "kills": len(chaos.kills),
            "clusters": len(judged),
            "converged": converged,
            "unexplained": len(judged) - converged,
            "stuck": actions_left + locked,
            "duplicates": figures["duplicates"],
            "orphans": figures["orphans"],
            "lost": figures["lost"],
            "violations": figures["violations"],
            "double_claims": figures["double_claims"],
            "server_errors": len(chaos.server_errors),
            "takeover_s": round(max(takeovers), 2) if takeovers else None,
            "statuses": dict(sorted(chaos.statuses.items())),
            "seconds": round(time.monotonic() - started, 1),
        }
        print(json.dumps(line), flush=True)
        detail = {
            "unexplained": [(n, why) for n, ok, why in judged if not ok][:5],
            "violations": figures["violation_samples"],
            "server_errors": chaos.server_errors[:3],
        }
        if any(detail.values()):
            print(json.dumps({"benchmark": "chaos", "samples": detail}), file=sys.stderr)
    finally:
        for s in servers:
            s.stop(15)
        if not args.keep:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
