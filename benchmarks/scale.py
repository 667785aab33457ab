"""Scale benchmark (issue 23): one big cluster through several `shoal server` processes sharing
one PostgreSQL database, on the `sim` provider, measured from outside.

Each engine is a real `shoal server` process (its own home, one shared simulated cloud in a
SQLite file); the cluster is created through the API of the first. Scenarios, one JSON line
each (`scenario` plus the fields below; the names are relied upon by outside checks):
- `idle`: the engines with nothing to do, before the create: `engines`,
  `cpu_percent_per_engine` (a list, each engine's CPU over the window, in % of one core);
- `create-pg`: `POST /v1/clusters` of `--nodes` nodes until its action ended: `nodes`,
  `engines`, `seconds` (request -> action ended), `post_s` (the POST's own answer time),
  `cpu_ms_per_node` (all engines' CPU during the create, over the nodes; `cpu_ms_per_node_net`
  the same less what they burn idle, at the `idle` scenario's rate, over the create's wall
  time, which load stretches), `engine_share` (each
  engine's fraction of the cluster's node actions, by the `owner` recorded on each action),
  `sim_cpu_ms_per_node` (the part of that CPU the engines spent in the simulated cloud's books,
  from their `shoal_sim_cpu_seconds_total`: a real cloud spends it on its own machines) and
  `shoal_cpu_ms_per_node` (`cpu_ms_per_node` less it: Shoal's own), with `status`, `active`,
  `cpu_s_per_engine`, `sim_cpu_s_per_engine` and `sim_cpu_s_by_operation` alongside;
- `get-cluster`: one `GET /v1/clusters/NAME` of that cluster: `nodes`, `seconds`, `bytes`;
  then the first page of its nodes (`GET /v1/nodes?cluster=NAME`, the default page):
  `first_page_s`, `first_page_nodes`; then the dashboard's topology of the cluster
  (`GET /ui/api/topology?cluster=ID`, counts per host above 2,000 nodes): `topology_s`,
  `topology_bytes`, `topology_summarised`;
- `create-pg-chaos` (with `--chaos`, instead of the scenarios above; issue 23's "an engine killed
  during a 100,000-node create"): the same create on a sim in real-cloud mode (a create the
  cloud sees twice makes two servers unless Shoal finds the first), with `kill -9` of the busiest
  engine while the cluster action plans and writes its node rows, and (`--kills 2`) of the
  busiest again once half the nodes are ACTIVE; each killed engine is restarted `--down` seconds
  later. When the create has ended and the engines are quiet, `benchmarks/chaos.py`'s checks:
  `nodes`, `engines`, `kills` (what each hit: `phase`, node rows and ACTIVE nodes then),
  `duplicates`, `stuck_actions` (actions not ended, clusters still locked), `orphans` (sim
  servers no live node accounts for), `lost`, `violations`, `converged`, `takeover_s` (the
  longest time from a kill until no running action was left with an expired lease), `status`,
  `active`, `seconds` (request -> action ended), `checks_s`;
- `deploy-overhead` (with `--deploy`): `benchmarks/deployments.py`'s zero-time scenario at
  `--nodes` nodes (3 chained deployments each; SQLite, one engine, in-process):
  `nodes`, `overhead_ms_per_deployment`.
The machine is shared: read ratios (engines vs engines, sizes vs sizes) rather than seconds, and
note `uptime`'s load with the figures. Needs PostgreSQL at 127.0.0.1:5432 (trust auth); makes
its own database and drops it.

Run: `python benchmarks/scale.py --nodes 10000 --engines 3 [--latency 1] [--deploy]`, or
`python benchmarks/scale.py --chaos --nodes 10000 [--kills 2] [--lease 10]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).parent))
from _servers import PG_ADMIN, Server, cpu_seconds, server_env

POLL_S = 1.0
"""How often the create's action is looked at."""
NODE_KINDS = ("NODE_CREATE", "NODE_DELETE", "NODE_ATTACH", "NODE_REBOOT", "NODE_REBUILD")


def document(name: str, nodes: int) -> str:
    """`benchmarks/orchestration.py`'s shape: groups of 500 small servers, spread by zone."""
    groups = max(1, nodes // 500)
    per = nodes // groups
    lines = [f"name: {name}", "node_groups:"]
    for g in range(groups):
        count = per if g < groups - 1 else nodes - per * (groups - 1)
        lines += [
            f"  - name: g{g + 1}",
            "    profile: {type: server, flavor: m1.tiny, image: cirros}",
            f"    count: {count}",
        ]
    lines += ["groupings:", "  - {name: spread, members: [g1], rule: spread, scope: zone}"]
    return "\n".join(lines) + "\n"


def engine_shares(db_url: str, action_id: str, engines: int) -> tuple[list[float], int]:
    """Each engine's fraction of the create's node actions (largest first), and their count."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT owner, count(*) FROM actions WHERE parent_id = %s AND kind = ANY(%s) "
            "GROUP BY owner",
            (action_id, list(NODE_KINDS)),
        ).fetchall()
    total = sum(int(n) for _, n in rows)
    shares = sorted((int(n) / total for _, n in rows if total), reverse=True)
    shares += [0.0] * max(0, engines - len(shares))
    return [round(s, 4) for s in shares], total


def sim_cpu_seconds(server: Server, token: str) -> dict[str, float] | None:
    """The engine's `shoal_sim_cpu_seconds_total` by operation (None: not exported)."""
    r = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    r.raise_for_status()
    prefix = 'shoal_sim_cpu_seconds_total{operation="'
    by_operation = {}
    for line in r.text.splitlines():
        if line.startswith(prefix):
            labels, value = line.rsplit(" ", 1)
            by_operation[labels[len(prefix) :].split('"', 1)[0]] = float(value)
    return by_operation or None


def idle(servers: list[Server], window_s: float) -> dict[str, Any]:
    before = [cpu_seconds(s.pid) for s in servers]
    time.sleep(window_s)
    after = [cpu_seconds(s.pid) for s in servers]
    return {
        "scenario": "idle",
        "engines": len(servers),
        "cpu_percent_per_engine": [
            round(100 * (a - b) / window_s, 2) for a, b in zip(after, before, strict=True)
        ],
        "window_s": window_s,
    }


def create(
    servers: list[Server],
    token: str,
    db_url: str,
    nodes: int,
    limit_s: float,
    idle_percent: list[float] | None = None,
) -> tuple[dict[str, Any], str]:
    name = "scale"
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=servers[0].url, headers=headers, timeout=600) as http:
        sim0 = [sim_cpu_seconds(s, token) for s in servers]
        cpu0 = [cpu_seconds(s.pid) for s in servers]
        t0 = time.perf_counter()
        wall0 = time.time()
        r = http.post("/v1/clusters", content=document(name, nodes))
        post_s = time.perf_counter() - t0
        if r.status_code != 202:
            raise SystemExit(f"POST answered {r.status_code}: {r.text[:500]}")
        location = r.headers["Location"]
        action_id = location.rstrip("/").rsplit("/", 1)[-1]
        deadline = time.monotonic() + limit_s
        while True:
            action = http.get(location).json()["action"]
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                break
            if time.monotonic() > deadline:
                break
            # Each look is a GET the engines answer, CPU counted as the create's: looking every
            # 0.25 s was 3.7 % of it at 10,000 nodes. `seconds` is still until the action ended.
            time.sleep(POLL_S)
        seconds = time.perf_counter() - t0
        ended = action.get("end_time")
        if ended:
            # When the action ended, not when this loop saw it: less than a poll before.
            seconds = min(seconds, datetime.fromisoformat(ended).timestamp() - wall0)
        cpu = [cpu_seconds(s.pid) - c for s, c in zip(servers, cpu0, strict=True)]
        sim1 = [sim_cpu_seconds(s, token) for s in servers]
    sim: list[float] | None = None
    sim_ops: dict[str, float] = {}
    for before, after in zip(sim0, sim1, strict=True):
        if before is None or after is None:  # engines without the counter (older code)
            sim, sim_ops = None, {}
            break
        for op, spent in after.items():
            sim_ops[op] = sim_ops.get(op, 0.0) + spent - before.get(op, 0.0)
        sim = [*(sim or []), sum(after.values()) - sum(before.values())]
    shares, actions = engine_shares(db_url, action_id, len(servers))
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE n.status = 'ACTIVE'), count(*) FROM nodes n "
            "JOIN clusters c ON c.id = n.cluster_id WHERE c.name = %s AND n.deleted_at IS NULL",
            (name,),
        ).fetchone()
    active = int(row[0]) if row else 0
    # What the engines burn idle (the `idle` scenario's rate) grows with the wall time, which a
    # loaded machine stretches: the net figure leaves it out, so sizes compare under any load.
    idle_s = sum(idle_percent or []) / 100 * seconds
    return {
        "scenario": "create-pg",
        "nodes": nodes,
        "engines": len(servers),
        "status": action["status"],
        "active": active,
        "seconds": round(seconds, 3),
        "post_s": round(post_s, 3),
        "cpu_ms_per_node": round(sum(cpu) * 1000 / nodes, 4),
        "cpu_ms_per_node_net": round(max(0.0, sum(cpu) - idle_s) * 1000 / nodes, 4),
        "sim_cpu_ms_per_node": round(sum(sim) * 1000 / nodes, 4) if sim is not None else None,
        "shoal_cpu_ms_per_node": (
            round((sum(cpu) - sum(sim)) * 1000 / nodes, 4) if sim is not None else None
        ),
        "cpu_s_per_engine": [round(c, 2) for c in cpu],
        "sim_cpu_s_per_engine": [round(c, 2) for c in sim] if sim is not None else None,
        "sim_cpu_s_by_operation": {op: round(c, 3) for op, c in sim_ops.items() if c > 0},
        "engine_share": shares,
        "node_actions": actions,
    }, name


def get_cluster(server: Server, token: str, name: str, nodes: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    t0 = time.perf_counter()
    r = httpx.get(f"{server.url}/v1/clusters/{name}", headers=headers, timeout=900)
    seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    page = httpx.get(
        f"{server.url}/v1/nodes", params={"cluster": name}, headers=headers, timeout=900
    )
    first_page_s = time.perf_counter() - t0
    cluster_id = r.json()["cluster"]["id"] if r.is_success else name
    t0 = time.perf_counter()
    topo = httpx.get(
        f"{server.url}/ui/api/topology",
        params={"cluster": cluster_id},
        headers=headers,
        timeout=900,
    )
    topology_s = time.perf_counter() - t0
    return {
        "scenario": "get-cluster",
        "nodes": nodes,
        "status_code": r.status_code,
        "seconds": round(seconds, 3),
        "bytes": len(r.content),
        "first_page_s": round(first_page_s, 3),
        "first_page_nodes": len(page.json().get("nodes", [])) if page.is_success else None,
        "topology_s": round(topology_s, 3),
        "topology_bytes": len(topo.content),
        "topology_summarised": topo.json().get("summarised") if topo.is_success else None,
    }


def busiest(servers: list[Server], window_s: float = 0.5) -> Server:
    """The live engine that burned the most CPU over `window_s`: during a big create's planning,
    the one planning it (engine ids are random, so this is how to find it from outside)."""
    live = [s for s in servers if s.alive and s.ready]
    before = [cpu_seconds(s.pid) for s in live]
    time.sleep(window_s)
    spent = [cpu_seconds(s.pid) - b if s.alive else -1.0 for s, b in zip(live, before, strict=True)]
    return live[spent.index(max(spent))]


def chaos_create(
    servers: list[Server],
    token: str,
    db_url: str,
    nodes: int,
    inventory: Any,
    sim_state: Path,
    *,
    kills: int,
    down_s: float,
    lease_s: float,
    limit_s: float,
) -> dict[str, Any]:
    """The create with engines killed (see the module's docstring), then chaos.py's checks."""
    import chaos  # benchmarks/chaos.py: its checks, reused

    name = "scale"
    headers = {"Authorization": f"Bearer {token}"}
    t0 = time.perf_counter()
    r = httpx.post(
        f"{servers[0].url}/v1/clusters",
        content=document(name, nodes),
        headers=headers,
        timeout=600,
    )
    post_s = time.perf_counter() - t0
    if r.status_code != 202:
        raise SystemExit(f"POST answered {r.status_code}: {r.text[:500]}")
    action_id = r.headers["Location"].rstrip("/").rsplit("/", 1)[-1]
    hits: list[dict[str, Any]] = []
    killed_at: list[float] = []
    restarts: list[threading.Thread] = []
    takeovers: list[float] = []
    deadline = time.monotonic() + limit_s
    status = "RUNNING"
    last_owner: str | None = None

    def restart(server: Server) -> None:
        time.sleep(down_s)
        server.start(600)

    def kill(phase: str, owner: str | None, rows: int, active: int) -> None:
        victim = busiest(servers)
        victim.kill()
        killed_at.append(time.monotonic())
        hits.append({"phase": phase, "node_rows": rows, "active": active, "owner": owner})
        t = threading.Thread(target=restart, args=(victim,))
        t.start()
        restarts.append(t)

    with psycopg.connect(db_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT a.status, a.owner, "
                "(SELECT count(*) FROM nodes n WHERE n.cluster_id = a.cluster_id "
                " AND n.deleted_at IS NULL), "
                "(SELECT count(*) FROM nodes n WHERE n.cluster_id = a.cluster_id "
                " AND n.deleted_at IS NULL AND n.status = 'ACTIVE') "
                "FROM actions a WHERE a.id = %s",
                (action_id,),
            ).fetchone()
            assert row is not None
            status, owner, rows, active = str(row[0]), row[1], int(row[2]), int(row[3])
            last_owner = owner or last_owner
            if status in ("SUCCEEDED", "FAILED", "CANCELLED"):
                break
            if not hits and owner is not None and rows == 0:
                kill("planning", owner, rows, active)
            elif len(hits) == 1 and kills >= 2 and active >= nodes // 2:
                kill("half-active", owner, rows, active)
            # Takeover: after a kill's lease has run out, until no running action is orphaned.
            if killed_at and len(takeovers) < len(killed_at):
                since = time.monotonic() - killed_at[len(takeovers)]
                if since > lease_s and chaos.orphaned_leases(_engine(db_url)) == 0:
                    takeovers.append(since)
            time.sleep(0.25)
    seconds = time.perf_counter() - t0
    # Whether the cluster action changed hands after the first kill: then the engine killed
    # was the one planning it (the busiest), and another planned it again.
    if hits:
        hits[0]["action_taken_over"] = hits[0].pop("owner") != last_owner
    for hit in hits[1:]:
        hit.pop("owner")
    for t in restarts:
        t.join()
    checks0 = time.perf_counter()
    db = _engine(db_url)
    actions_left, locked = chaos.quiesce(db, 600)
    chaos.settled(db, 300)
    judged = chaos.judge_clusters(db)
    figures = chaos.books(db, sim_state, inventory)
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE n.status = 'ACTIVE'), count(*) FROM nodes n "
            "JOIN clusters c ON c.id = n.cluster_id WHERE c.name = %s AND n.deleted_at IS NULL",
            (name,),
        ).fetchone()
    db.dispose()
    return {
        "scenario": "create-pg-chaos",
        "nodes": nodes,
        "engines": len(servers),
        "kills": hits,
        "status": status,
        "active": int(row[0]) if row else 0,
        "duplicates": figures["duplicates"],
        "stuck_actions": actions_left + locked,
        "orphans": figures["orphans"],
        "lost": figures["lost"],
        "violations": figures["violations"],
        "converged": sum(1 for _, ok, _ in judged if ok) == len(judged),
        "unexplained": [(n, why) for n, ok, why in judged if not ok][:3],
        "takeover_s": round(max(takeovers), 2) if takeovers else None,
        "seconds": round(seconds, 3),
        "post_s": round(post_s, 3),
        "checks_s": round(time.perf_counter() - checks0, 1),
    }


_engines: dict[str, Any] = {}


def _engine(db_url: str) -> Any:
    """One SQLAlchemy engine per URL for chaos.py's checks (they take one)."""
    from sqlalchemy import create_engine

    if db_url not in _engines:
        _engines[db_url] = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    return _engines[db_url]


def deploy_overhead(nodes: int) -> dict[str, Any]:
    import deployments  # benchmarks/deployments.py

    out = deployments.run("deploy-overhead", nodes, 0.0)
    return {
        "scenario": "deploy-overhead",
        "nodes": nodes,
        "overhead_ms_per_deployment": out["overhead_ms_per_deployment"],
        "deployments": out.get("deployments"),
        "seconds": out.get("seconds"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--engines", type=int, default=3)
    ap.add_argument("--latency", type=float, default=1.0, help="sim create latency, seconds")
    ap.add_argument("--concurrency", type=int, default=1000, help="node actions per engine")
    ap.add_argument("--idle-window", type=float, default=15.0)
    ap.add_argument("--limit", type=float, default=3600.0, help="give up on the create after")
    ap.add_argument("--deploy", action="store_true", help="also the deploy-overhead scenario")
    ap.add_argument("--keep", action="store_true", help="keep the work directory and database")
    ap.add_argument("--chaos", action="store_true", help="only the create-pg-chaos scenario")
    ap.add_argument("--kills", type=int, default=2, choices=(1, 2), help="engines killed")
    ap.add_argument("--down", type=float, default=3.0, help="seconds a killed engine stays down")
    ap.add_argument("--lease", type=float, default=10.0, help="engines' lease (--chaos)")
    ap.add_argument("--seed", type=int, default=1, help="the sim's seed (--chaos)")
    args = ap.parse_args()

    dbname = f"shoal_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    db_url = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    work = Path(tempfile.mkdtemp(prefix="shoal-scale-"))
    options: dict[str, Any] = {
        "hosts": max(10, args.nodes // 8),
        "zones": 3,
        "create_latency_s": args.latency,
        "state_path": str(work / "sim.db"),
    }
    chaos_settings: dict[str, str] = {}
    if args.chaos:
        options.update(real_cloud=True, seed=args.seed)
        chaos_settings = {"SHOAL_LEASE_S": str(args.lease)}
    servers: list[Server] = []
    try:
        for i in range(args.engines):
            env = server_env(
                work / f"s{i}",
                SHOAL_DATABASE_URL=f"postgresql+psycopg://postgres@127.0.0.1:5432/{dbname}",
                SHOAL_PROVIDER="sim",
                SHOAL_PROVIDER_OPTIONS=json.dumps(options),
                SHOAL_ENGINE_CONCURRENCY=str(args.concurrency),
                SHOAL_MAX_CLUSTER_NODES=str(max(10_000, args.nodes)),
                **chaos_settings,
            )
            servers.append(Server(work / f"s{i}", env))
        servers[0].start()  # alone first: it migrates and makes the admin token
        for s in servers[1:]:
            s.launch()
        for s in servers[1:]:
            s.wait_ready()
        token = (servers[0].home / "admin-token").read_text().strip()
        time.sleep(3)  # start-up work done
        if args.chaos:
            from shoal.model.catalogs import synthetic_inventory

            inventory = synthetic_inventory(options["hosts"], 3, seed=args.seed)
            line = chaos_create(
                servers,
                token,
                db_url,
                args.nodes,
                inventory,
                work / "sim.db",
                kills=args.kills,
                down_s=args.down,
                lease_s=args.lease,
                limit_s=args.limit,
            )
            print(json.dumps(line), flush=True)
            return
        quiet = idle(servers, args.idle_window)
        print(json.dumps(quiet), flush=True)
        line, name = create(
            servers, token, db_url, args.nodes, args.limit, quiet["cpu_percent_per_engine"]
        )
        print(json.dumps(line), flush=True)
        print(json.dumps(get_cluster(servers[-1], token, name, args.nodes)), flush=True)
    finally:
        for s in servers:
            s.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        else:
            print(json.dumps({"kept": str(work), "database": dbname}), file=sys.stderr)
    if args.deploy:
        print(json.dumps(deploy_overhead(args.nodes)), flush=True)


if __name__ == "__main__":
    main()
