"""A replica's env from every source (issue 22, item 1), on `sim` with a ManualClock on SQLite and
PostgreSQL: `{secret}`, `{output: D.X}`, `{members: W}` and literals all reach the runtime's start
call; the secret's value is nowhere else (replica rows, stored templates, events, the workloads
view); the workload waits for the output it reads; and when the members it reads change, it
rolls and the new replicas see the new value."""

from __future__ import annotations

import asyncio
import json

from shoal.clock import ManualClock
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.providers.sim.provider import SimProvider
from shoal.providers.sim.software import simulated_output
from shoal.service.replicas import replicas as replicas_view
from shoal.store import nodes as node_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import events, rig_for, rows, settled

SECRET = "s3cret-Value-42"
DOC = f"""
name: envs
parameters:
  pw: {{type: string, hidden: true, default: {SECRET}}}
node_groups:
  - name: ctl
    profile: {{type: server, flavor: m1.small, image: cirros}}
    count: 3
software:
  configs:
    seed:
      group: script
      config: "#!/bin/sh\\necho ok"
      outputs: [{{name: url}}]
  deployments:
    seed: {{config: seed, target: ctl}}
workloads:
  db:
    replicas: 2
    containers: [{{name: db, image: img, ports: [{{port: 5432, name: pg}}]}}]
    rules: [{{rule: anti-affinity, scope: node}}]
  web:
    replicas: 1
    containers:
      - name: web
        image: img
        env:
          PW: {{secret: pw}}
          DB: {{members: db}}
          URL: {{output: seed.url}}
          N: 1
"""


async def test_env_from_every_source_reaches_the_start_and_only_it(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        web = replica_key(cid, "web-1")
        await until(lambda: len(rows(db, cid)) == 3 and settled(db, cid), clock=clock)
        with db.reading() as conn:
            address = {n.name: n.address for n in node_repo.list_nodes(conn, cid)}

        def both() -> str:
            r = rows(db, cid)
            return json.dumps(sorted(f"{address[r[x].node]}:5432" for x in ("db-1", "db-2")))

        def env() -> dict[str, str]:
            return provider.replicas.env_of(web).get("web", {})

        await until(lambda: env().get("DB") == both() and rows(db, cid)["web-1"].ready, clock=clock)
        got = env()
        node = rows(db, cid)["web-1"].node
        assert got == {
            "PW": SECRET,
            "DB": both(),
            "URL": simulated_output("seed", "url", node),
            "N": "1",
        }

        # db-2's container exits twice in a row (a first exit is restarted at once; the second
        # waits its 10 s back-off, not ready): the members web reads shrink, web rolls, and its
        # new container is started with the one address left.
        provider.replicas.kill(replica_key(cid, "db-2"))
        await until(lambda: rows(db, cid)["db-2"].restarts == 1, clock=clock, step_s=0.05)
        provider.replicas.kill(replica_key(cid, "db-2"))
        one = json.dumps([f"{address[rows(db, cid)['db-1'].node]}:5432"])
        await until(lambda: env().get("DB") == one, clock=clock, step_s=0.05)
        assert env()["PW"] == SECRET

        # The secret reached the runtime and nothing else.
        with db.reading() as conn:
            stored = [
                rollout_repo.template_json(t)
                for r in rollout_repo.of_cluster(conn, cid)
                for t in (r.target, r.previous)
                if t is not None
            ]
        view = replicas_view(db, ADMIN, "envs", 100, None)
        for text in (
            *stored,
            repr(rows(db, cid)),
            "\n".join(events(db, cid)),
            json.dumps(view),
        ):
            assert SECRET not in text
    finally:
        await rig.engine.stop()
