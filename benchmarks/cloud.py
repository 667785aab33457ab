"""A cloud's worth of clusters (issue 37): thousands of small clusters of many projects on
several `shoal server` processes sharing one PostgreSQL database, on the `sim` provider,
measured from outside.

The engines are launched as `benchmarks/scale.py` launches them (`_servers.py`: real
processes, one shared simulated cloud in a SQLite file). Clusters of 1 to `--max-nodes` nodes
(nine in ten of 1-20, one in ten of 21-200: about 20 nodes a cluster) are spread over
`--projects` projects; every other cluster declares a provider health check. Scenarios, one
JSON line each (`scenario` plus the fields below; the names are relied upon by outside
checks):
- `create`: every cluster POSTed (16 at a time, round robin over the engines' APIs, each with
  its project's token) until all are settled: `clusters`, `nodes`, `seconds` (first POST ->
  every cluster ACTIVE), `cpu_ms_per_node` (all engines' CPU over the create, per node),
  `post_s_median`, `post_s_p99`, `active`;
- `idle`: the engines left alone with every cluster made, against the same engines with no
  cluster at all, measured in the same run before the create: `cpu_percent_per_engine`,
  `cpu_percent_per_engine_empty` (lists, % of one core each), `ratio` (mean over mean);
- `host-loss`: `--fail` of the hosts holding nodes failed at once (`POST /v1/hosts/H/fail`),
  then until every cluster with a node on them is healthy again (ACTIVE, unlocked, as many
  live nodes as before, all ACTIVE, none on a failed host): `hosts_failed`,
  `clusters_affected`, `nodes_lost`, `seconds` (first fail -> all healthy), `cpu_s` (all
  engines), `healed` (clusters healthy at the end);
- `list` (two lines, `of` clusters then nodes): `GET /v1/clusters` and `GET /v1/nodes` as an
  admin, the first page (`first_page_s`, `first_page_items`) and up to `--pages` pages after
  it by `next_marker` (`page_s_median`), and a project's first page (`project_first_page_s`);
- `metrics`: an uncached `GET /metrics` of each engine: `scrape_s` (the slowest), `series`
  (sample lines of the engine exporting the installation's gauges), `bytes`.
The machine is shared: `load` (`os.getloadavg()`) is printed on every line. Needs PostgreSQL at
127.0.0.1:5432 (trust auth); makes its own database and drops it.

Run: `python benchmarks/cloud.py --clusters 10000 --engines 3` (about 200,000 nodes); smaller
runs (`--clusters 500`) show how the figures grow.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).parent))
from _servers import PG_ADMIN, Server, cpu_seconds, server_env


def sizes(clusters: int, max_nodes: int, seed: int) -> list[int]:
    """Nine in ten clusters of 1-20 nodes, one in ten of 21-`max_nodes`: about 20 a cluster."""
    rng = random.Random(seed)
    small = min(20, max_nodes)
    return [
        rng.randint(1, small)
        if rng.random() < 0.9 or max_nodes <= small
        else rng.randint(small + 1, max_nodes)
        for _ in range(clusters)
    ]


def document(name: str, nodes: int, health: bool) -> str:
    lines = [
        f"name: {name}",
        "node_groups:",
        "  - name: web",
        "    profile: {type: server, flavor: m1.tiny, image: cirros}",
        f"    count: {nodes}",
    ]
    if health:
        # A provider check; a lost host may take all of a small group at once, and the
        # benchmark measures the replacement of it, so the short circuit is set out of reach.
        lines.append('    health: {check: provider, max_unhealthy: "100%"}')
    if nodes >= 3:
        lines += ["groupings:", "  - {name: spread, members: [web], rule: spread, scope: zone}"]
    return "\n".join(lines) + "\n"


def load() -> float:
    return round(os.getloadavg()[0], 2)


def cpu_window(servers: list[Server], window_s: float) -> list[float]:
    before = [cpu_seconds(s.pid) for s in servers]
    time.sleep(window_s)
    after = [cpu_seconds(s.pid) for s in servers]
    return [round(100 * (a - b) / window_s, 2) for a, b in zip(after, before, strict=True)]


def projects(server: Server, admin: str, count: int) -> list[str]:
    """`count` new projects: their tokens."""
    headers = {"Authorization": f"Bearer {admin}"}
    tokens = []
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
        for p in range(count):
            r = http.post("/v1/projects", json={"name": f"tenant-{p:03d}"})
            r.raise_for_status()
            tokens.append(str(r.json()["token"]))
    return tokens


def settled(db_url: str) -> tuple[int, int, int]:
    """(clusters not yet ACTIVE or locked, actions not ended, nodes ACTIVE)."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM clusters WHERE deleted_at IS NULL "
            "        AND (status <> 'ACTIVE' OR lock_action_id IS NOT NULL)), "
            "       (SELECT count(*) FROM actions WHERE status IN ('INIT','READY','RUNNING')), "
            "       (SELECT count(*) FROM nodes WHERE deleted_at IS NULL AND status = 'ACTIVE')"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def create(
    servers: list[Server], tokens: list[str], db_url: str, plan: list[int], limit_s: float
) -> dict[str, Any]:
    cpu0 = [cpu_seconds(s.pid) for s in servers]
    clients = [
        [
            httpx.Client(base_url=s.url, headers={"Authorization": f"Bearer {t}"}, timeout=300)
            for t in tokens
        ]
        for s in servers
    ]
    post_s: list[float] = []

    def post(i: int) -> None:
        http = clients[i % len(servers)][i % len(tokens)]
        body = document(f"c{i:05d}", plan[i], health=i % 2 == 0)
        t0 = time.perf_counter()
        for attempt in range(3):
            try:
                r = http.post("/v1/clusters", content=body)
                break
            except httpx.TransportError:
                # A kept-alive connection the server closed as it was reused (a loaded
                # machine): asked again; a 409 then says the first one was taken.
                if attempt == 2:
                    raise
        post_s.append(time.perf_counter() - t0)
        if r.status_code == 409 and attempt:
            return
        if r.status_code != 202:
            raise SystemExit(f"POST c{i:05d} answered {r.status_code}: {r.text[:300]}")

    t0 = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(post, range(len(plan))))
    deadline = time.monotonic() + limit_s
    while True:
        waiting, running, active = settled(db_url)
        if (not waiting and not running) or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    seconds = time.perf_counter() - t0
    cpu = sum(cpu_seconds(s.pid) - c for s, c in zip(servers, cpu0, strict=True))
    for per in clients:
        for c in per:
            c.close()
    nodes = sum(plan)
    post_s.sort()
    return {
        "scenario": "create",
        "clusters": len(plan),
        "nodes": nodes,
        "engines": len(servers),
        "seconds": round(seconds, 2),
        "cpu_ms_per_node": round(cpu * 1000 / nodes, 4),
        "cpu_s": round(cpu, 1),
        "post_s_median": round(statistics.median(post_s), 4),
        "post_s_p99": round(post_s[int(0.99 * (len(post_s) - 1))], 4),
        "active": active,
        "unsettled": waiting,
        "load": load(),
    }


def victims(db_url: str, fraction: float, seed: int) -> tuple[list[str], dict[str, int]]:
    """A `fraction` of the hosts that hold nodes, and each affected cluster's live nodes."""
    with psycopg.connect(db_url) as conn:
        hosts = sorted(
            str(h)
            for (h,) in conn.execute(
                "SELECT DISTINCT host FROM nodes WHERE deleted_at IS NULL AND host IS NOT NULL"
            )
        )
        chosen = random.Random(seed).sample(hosts, max(1, round(fraction * len(hosts))))
        rows = conn.execute(
            "SELECT n.cluster_id, count(*) FROM nodes n WHERE n.deleted_at IS NULL "
            "AND n.cluster_id IN (SELECT cluster_id FROM nodes WHERE deleted_at IS NULL "
            "                     AND host = ANY(%s)) GROUP BY n.cluster_id",
            (chosen,),
        ).fetchall()
    return chosen, {str(c): int(n) for c, n in rows}


def healthy(db_url: str, affected: dict[str, int], failed: list[str]) -> tuple[int, int]:
    """How many of the affected clusters are healthy again, and how many nodes on their way
    out (renamed `NAME~ID` by a replacement) are still left in them."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT c.id, c.status, c.lock_action_id IS NULL, "
            "       count(n.id) FILTER (WHERE n.current), "
            "       count(n.id) FILTER (WHERE n.current AND n.status = 'ACTIVE' "
            "                            AND NOT (n.host = ANY(%s))), "
            "       count(n.id) FILTER (WHERE NOT n.current) "
            "FROM clusters c LEFT JOIN ("
            "  SELECT *, (status NOT IN ('DELETING', 'DELETED') AND strpos(name, '~') = 0) "
            "            AS current FROM nodes WHERE deleted_at IS NULL"
            ") n ON n.cluster_id = c.id "
            "WHERE c.id = ANY(%s) GROUP BY c.id, c.status, c.lock_action_id",
            (failed, list(affected)),
        ).fetchall()
    good = sum(
        1
        for cid, status, unlocked, live, well, _ in rows
        if status == "ACTIVE" and unlocked and live == well == affected[str(cid)]
    )
    return good, sum(int(r[5]) for r in rows)


def host_loss(
    servers: list[Server], admin: str, db_url: str, fraction: float, limit_s: float
) -> dict[str, Any]:
    failed, affected = victims(db_url, fraction, seed=5)
    with psycopg.connect(db_url) as conn:
        lost = conn.execute(
            "SELECT count(*) FROM nodes WHERE deleted_at IS NULL AND host = ANY(%s)", (failed,)
        ).fetchone()
    cpu0 = [cpu_seconds(s.pid) for s in servers]
    headers = {"Authorization": f"Bearer {admin}"}
    t0 = time.perf_counter()
    with httpx.Client(base_url=servers[0].url, headers=headers, timeout=120) as http:

        def fail(host: str) -> None:
            http.post(f"/v1/hosts/{host}/fail").raise_for_status()

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(fail, failed))
    fail_s = time.perf_counter() - t0
    deadline = time.monotonic() + limit_s
    good, leaving = 0, 0
    while time.monotonic() < deadline:
        good, leaving = healthy(db_url, affected, failed)
        if good == len(affected):
            break
        time.sleep(0.5)
    seconds = time.perf_counter() - t0
    cpu = sum(cpu_seconds(s.pid) - c for s, c in zip(servers, cpu0, strict=True))
    return {
        "scenario": "host-loss",
        "hosts_failed": len(failed),
        "clusters_affected": len(affected),
        "nodes_lost": int(lost[0]) if lost else 0,
        "seconds": round(seconds, 2),
        "fail_requests_s": round(fail_s, 2),
        "healed": good,
        "leaving_nodes": leaving,
        "cpu_s": round(cpu, 1),
        "load": load(),
    }


def listing(server: Server, token: str, project_token: str, of: str, pages: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=300) as http:
        http.get("/healthz")  # the connection made outside the timing
        t0 = time.perf_counter()
        r = http.get(f"/v1/{of}")
        first = time.perf_counter() - t0
        r.raise_for_status()
        body = r.json()
        items = len(body[of])
        marker = body.get("next_marker")
        page_s: list[float] = []
        while marker and len(page_s) < pages:
            t0 = time.perf_counter()
            r = http.get(f"/v1/{of}", params={"limit": 1000, "marker": marker})
            page_s.append(time.perf_counter() - t0)
            r.raise_for_status()
            marker = r.json().get("next_marker")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {project_token}"}, timeout=300
    ) as http:
        http.get("/healthz")
        t0 = time.perf_counter()
        http.get(f"/v1/{of}").raise_for_status()
        project_first = time.perf_counter() - t0
    return {
        "scenario": "list",
        "of": of,
        "first_page_s": round(first, 4),
        "first_page_items": items,
        "pages": len(page_s),
        "page_s_median": round(statistics.median(page_s), 4) if page_s else None,
        "project_first_page_s": round(project_first, 4),
        "load": load(),
    }


def scrape(servers: list[Server], admin: str) -> dict[str, Any]:
    time.sleep(2.5)  # past the scrape cache of any earlier scrape
    headers = {"Authorization": f"Bearer {admin}"}
    slowest, series, size = 0.0, 0, 0
    for s in servers:
        with httpx.Client(base_url=s.url, headers=headers, timeout=300) as http:
            http.get("/healthz")
            t0 = time.perf_counter()
            r = http.get("/metrics")
            took = time.perf_counter() - t0
        r.raise_for_status()
        slowest = max(slowest, took)
        if "shoal_cluster_gauges_exported 1.0" in r.text:
            lines = [x for x in r.text.splitlines() if x and not x.startswith("#")]
            series, size = len(lines), len(r.content)
    return {
        "scenario": "metrics",
        "scrape_s": round(slowest, 4),
        "series": series,
        "bytes": size,
        "load": load(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=10_000)
    ap.add_argument("--engines", type=int, default=3)
    ap.add_argument("--projects", type=int, default=100)
    ap.add_argument("--max-nodes", type=int, default=200)
    ap.add_argument("--latency", type=float, default=1.0, help="sim create latency, seconds")
    ap.add_argument("--idle-window", type=float, default=30.0)
    ap.add_argument("--fail", type=float, default=0.05, help="fraction of hosts failed")
    ap.add_argument("--pages", type=int, default=5, help="pages listed after the first")
    ap.add_argument("--limit", type=float, default=3600.0, help="give up on a phase after")
    ap.add_argument("--heal-limit", type=float, default=600.0, help="give up on the healing")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the work directory and database")
    args = ap.parse_args()
    plan = sizes(args.clusters, args.max_nodes, args.seed)
    nodes = sum(plan)

    dbname = f"shoal_cloud_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    db_url = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    work = Path(tempfile.mkdtemp(prefix="shoal-cloud-"))
    options = {
        "hosts": max(30, nodes // 8),
        "zones": 3,
        "create_latency_s": args.latency,
        "state_path": str(work / "sim.db"),
    }
    servers: list[Server] = []
    try:
        for i in range(args.engines):
            env = server_env(
                work / f"s{i}",
                SHOAL_DATABASE_URL=f"postgresql+psycopg://postgres@127.0.0.1:5432/{dbname}",
                SHOAL_PROVIDER="sim",
                SHOAL_PROVIDER_OPTIONS=json.dumps(options),
                SHOAL_ENGINE_CONCURRENCY="1000",
                SHOAL_QUOTA_CLUSTERS="-1",
                SHOAL_QUOTA_NODES="-1",
            )
            servers.append(Server(work / f"s{i}", env))
        servers[0].start()  # alone first: it migrates and makes the admin token
        for s in servers[1:]:
            s.launch()
        for s in servers[1:]:
            s.wait_ready()
        admin = (servers[0].home / "admin-token").read_text().strip()
        time.sleep(5)  # start-up work done
        empty = cpu_window(servers, args.idle_window)
        tokens = projects(servers[0], admin, args.projects)
        print(json.dumps(create(servers, tokens, db_url, plan, args.limit)), flush=True)
        time.sleep(10)  # the last closes and first looks done
        busy = cpu_window(servers, args.idle_window)
        print(
            json.dumps(
                {
                    "scenario": "idle",
                    "clusters": len(plan),
                    "nodes": nodes,
                    "engines": len(servers),
                    "cpu_percent_per_engine": busy,
                    "cpu_percent_per_engine_empty": empty,
                    "ratio": round(statistics.mean(busy) / max(statistics.mean(empty), 0.01), 2),
                    "window_s": args.idle_window,
                    "load": load(),
                }
            ),
            flush=True,
        )
        for of in ("clusters", "nodes"):
            print(json.dumps(listing(servers[-1], admin, tokens[0], of, args.pages)), flush=True)
        print(json.dumps(scrape(servers, admin)), flush=True)
        print(json.dumps(host_loss(servers, admin, db_url, args.fail, args.heal_limit)), flush=True)
    finally:
        for s in servers:
            s.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        else:
            print(json.dumps({"kept": str(work), "database": dbname}), file=sys.stderr)


if __name__ == "__main__":
    main()
