"""Chaos for the new parts (issue 39, item 4): `benchmarks/chaos.py --scenario NAME[,NAME]`.

Three `shoal server` engines on a fresh PostgreSQL database share one simulated cloud in
real-cloud mode (`sim`, its servers, containers and balancers in one SQLite file: an engine's
`kill -9` leaves them behind as a real cloud would). While clusters change, an engine is killed
with `kill -9` every `--kill-every` seconds (never the last one standing) and restarted a moment
later:

- `transitions`: clusters made from document A are moved to B and back (`PUT`): node groups
  scaled, one removed and another added, a deployment's config changed and one added, a
  workload re-imaged and scaled and another added, the balancer's pool moved to another group
  (`benchmarks/chaos_docs.py`);
- `rollouts`: a workload's image changed again and again (rolling updates with a surge);
- `balancers`: the node group behind a balancer scaled up and down (members come and go, the
  balancer is rendered again each time);
- `hangs`: the transitions, while the cloud's calls hang (`hang_path`: a runtime stopped
  mid-call, as `kill -STOP` of podman) for longer than the engines' provider-call limit, then
  carry on (`kill -CONT`);
- `full-disk`: the transitions, with the engines' homes and the cloud's file on a small tmpfs
  filled to the last byte for a while, then freed.

When the changes are made, the killed engines are back and nothing runs any more (or a time
limit passed), the books are read, one JSON line per scenario:
- `ops`: changes accepted (a create, an apply); `kills`: engines killed;
- `duplicates`: two cloud servers for one node, more containers running for a workload than it
  declares (a container is keyed by its replica, so two for one replica cannot be), a balancer
  member twice;
- `orphans`: a cloud server no live node accounts for, a container with no replica row (or on
  a replica the document no longer declares), a replica row with no container, a cluster's
  balancer left after the cluster, a balancer member that is no node of the cluster (a deleted
  node's deployment rows are its history, not orphans);
- `stuck`: actions not ended, clusters still locked, workload rollouts not ended, deployments
  neither COMPLETE nor FAILED;
- `unexplained`: ended actions FAILED or CANCELLED without a reason, and clusters neither at
  their document nor ERROR/WARNING with a reason; `missing`: declared members not there
  (a node, a replica, a balancer member);
- `statuses`: how the actions ended; `seconds`, `load` (the machine's 1-minute load average).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, create_engine, text

import chaos
import chaos_docs
from _servers import Server
from chaos_books import Books, parts_books

HOSTS, ZONES = 6, 2
SCENARIOS = ("transitions", "rollouts", "balancers", "hangs", "full-disk")
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")
CALL_LIMIT_S = 6.0
"""The engines' provider-call limit in `hangs` (`provider_call_timeout_s`): a hang outlasts it."""


@dataclass
class Run:
    """One scenario's engines, client and figures."""

    name: str
    servers: list[Server]
    token: str
    db: Engine
    sim_state: Path
    rng: random.Random
    ops: int = 0
    kills: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    restarts: list[threading.Thread] = field(default_factory=list)
    failed_starts: Counter[str] = field(default_factory=Counter)
    clear: Callable[[], None] = lambda: None
    after_fault: dict[str, int] | None = None
    """The clusters' statuses once the fault ended, before the operator's apply (full-disk)."""
    """Ends the scenario's fault (the hang, the full disk)."""

    # -- the client ----------------------------------------------------------------------------

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response | None:
        """Send to a live engine (another if it is down); None when none answered."""
        headers = {"Authorization": f"Bearer {self.token}"}
        for _ in range(40):
            with self.lock:
                live = [s for s in self.servers if s.alive and s.ready]
            if not live:
                time.sleep(0.25)
                continue
            server = self.rng.choice(live)
            try:
                return httpx.request(method, server.url + path, headers=headers, timeout=30, **kw)
            except httpx.TransportError:
                time.sleep(0.1)
        return None

    def change(self, method: str, path: str, body: dict[str, Any], limit_s: float) -> str | None:
        """A create or an apply, tried again while the cluster is busy; its action id."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            r = self.request(method, path, json=body)
            if r is not None and r.status_code == 202:
                self.ops += 1
                return str(r.json()["action"]["id"])
            code = "none" if r is None else str(r.status_code)
            if r is not None and r.status_code not in (409, 503):
                self.refused[f"{code}: {r.text[:160]}"] += 1
                return None
            time.sleep(0.3)
        self.refused["busy past the limit"] += 1
        return None

    def wait_ended(self, action_ids: list[str], limit_s: float) -> None:
        """Until every action has ended (read in the database: engines come and go)."""
        deadline = time.monotonic() + limit_s
        ids = [a for a in action_ids if a]
        while ids and time.monotonic() < deadline:
            with self.db.connect() as c:
                rows = c.execute(
                    text("SELECT id, status FROM actions WHERE id = ANY(:ids)"), {"ids": ids}
                ).all()
            ids = [str(i) for i, s in rows if s not in ENDED]
            time.sleep(0.3)

    # -- crashes -------------------------------------------------------------------------------

    def killer(self, every_s: float) -> None:
        while not self.stop.wait(self.rng.uniform(every_s * 0.6, every_s * 1.4)):
            self.kill_one()

    def kill_one(self) -> None:
        """`kill -9` of a live engine (never the last one), restarted a moment later."""
        with self.lock:
            live = [s for s in self.servers if s.alive and s.ready]
            if len(live) < 2:
                return
            victim = self.rng.choice(live)
            victim.kill()
            self.kills += 1
        t = threading.Thread(target=self._restart, args=(victim, self.rng.uniform(0.5, 2.0)))
        t.start()
        self.restarts.append(t)

    def _restart(self, server: Server, after_s: float) -> None:
        time.sleep(after_s)
        while not server.alive and not self.stop.is_set():
            self.start(server)
            if not server.alive:
                time.sleep(2.0)

    def start(self, server: Server) -> None:
        """Start a killed engine; a start that fails (a full disk) is counted, with the last
        line of its log."""
        try:
            server.start(120)
        except RuntimeError:
            last = ["(no log)"]
            with contextlib.suppress(OSError):
                log = (server.home / "server.log").read_text(errors="replace")
                last = [x for x in log.splitlines() if x.strip()] or ["(empty log)"]
            with self.lock:
                self.failed_starts[last[-1][:200]] += 1

    @contextlib.contextmanager
    def killing(self, every_s: float, clear: Callable[[], None]) -> Iterator[None]:
        """Kills every `every_s` meanwhile; after, `clear` (the faults end) and every engine
        started again."""
        t = threading.Thread(target=self.killer, args=(every_s,))
        t.start()
        try:
            yield
        finally:
            self.stop.set()
            t.join()
            clear()
            for r in self.restarts:
                r.join()
            for s in self.servers:
                if not s.alive:
                    s.start(120)


# -- the scenarios' drivers ----------------------------------------------------------------------


def create_all(run: Run, docs: list[dict[str, Any]], limit_s: float) -> None:
    ids = [run.change("POST", "/v1/clusters", d, limit_s) for d in docs]
    if run.refused:  # a document of this benchmark's own is wrong: say so, do not wait
        raise SystemExit(f"{run.name}: creates refused: {run.refused.most_common(2)}")
    run.wait_ended([i for i in ids if i], limit_s)


def apply_rounds(
    run: Run,
    names: list[str],
    rounds: int,
    doc: Callable[[str, int], dict[str, Any]],
    *,
    kill: bool = True,
) -> None:
    """`rounds` applies per cluster (all clusters at once, then the next round); an engine is
    killed a moment after each round's changes were accepted, so the kill lands while they are
    carried out (whatever the machine's speed); each round waits for its actions to end."""
    for r in range(rounds):
        ids = [run.change("PUT", f"/v1/clusters/{n}", doc(n, r), 120) for n in names]
        if kill:
            time.sleep(run.rng.uniform(0.1, 1.0))
            run.kill_one()
        run.wait_ended([i for i in ids if i], 180)


def rolled(run: Run, names: list[str], image: str, limit_s: float) -> None:
    """Until every named cluster's workload `api` runs `image` with its rollout ended."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with run.db.connect() as c:
            rows = c.execute(
                text(
                    "SELECT r.phase, r.template FROM workload_rollouts r "
                    "JOIN clusters c ON c.id = r.cluster_id "
                    "WHERE c.name = ANY(:names) AND c.deleted_at IS NULL AND r.workload = 'api'"
                ),
                {"names": names},
            ).all()
        done = [p for p, t in rows if p in ("COMPLETE", "ROLLED_BACK") and image in t]
        if len(done) == len(names):
            return
        time.sleep(0.5)


def transitions(run: Run, args: argparse.Namespace, during: Callable[[int], None]) -> None:
    names = [f"t{i}" for i in range(args.clusters)]
    create_all(run, [chaos_docs.shape(n, 0) for n in names], 240)
    with run.killing(args.kill_every, run.clear):
        for r in range(args.rounds):
            during(r)
            apply_rounds(run, names, 1, lambda n, _r, w=r: chaos_docs.shape(n, (w + 1) % 2))
    if run.name == "full-disk":
        # What failed while the disk was full stays failed (the manager's convergence gave up,
        # ERROR with the reason: `after_fault`); the operator applies the document again.
        chaos.quiesce(run.db, 240)
        run.after_fault = cluster_statuses(run.db)
        apply_rounds(run, names, 1, lambda n, _r: chaos_docs.shape(n, args.rounds % 2), kill=False)


def _not_active(db: Engine) -> list[str]:
    with db.connect() as c:
        rows = c.execute(
            text(
                "SELECT name, status, status_reason FROM clusters WHERE deleted_at IS NULL "
                "AND status <> 'ACTIVE' ORDER BY name LIMIT 5"
            )
        ).all()
    return [f"{n} {s}: {why[:300]}" for n, s, why in rows]


def cluster_statuses(db: Engine) -> dict[str, int]:
    """Live clusters by status, those ERROR or WARNING without a reason apart."""
    with db.connect() as c:
        rows = c.execute(
            text("SELECT status, status_reason FROM clusters WHERE deleted_at IS NULL")
        ).all()
    return dict(
        Counter(
            f"{s} (no reason)" if s in ("ERROR", "WARNING") and not (why or "").strip() else str(s)
            for s, why in rows
        )
    )


def rollouts(run: Run, args: argparse.Namespace) -> None:
    names = [f"r{i}" for i in range(args.clusters)]
    create_all(run, [chaos_docs.rollout(n, 1, 3) for n in names], 240)
    rolled(run, names, "api:1", 120)
    with run.killing(args.kill_every, run.clear):
        for r in range(args.rounds):
            version = r + 2
            apply_rounds(run, names, 1, lambda n, _r, v=version: chaos_docs.rollout(n, v, 3))
            rolled(run, names, f"api:{version}", 180)


def balancers(run: Run, args: argparse.Namespace) -> None:
    names = [f"b{i}" for i in range(args.clusters)]
    create_all(run, [chaos_docs.balanced(n, 2) for n in names], 240)
    counts = [run.rng.choice((1, 3, 5, 2, 4)) for _ in range(args.rounds)]
    with run.killing(args.kill_every, run.clear):
        for c in counts:
            apply_rounds(run, names, 1, lambda n, _r, k=c: chaos_docs.balanced(n, k))


def calm(db: Engine, sim_state: Path, limit_s: float) -> None:
    """Until the keeper and the network sync have caught up (nothing missing, no orphan, no
    rollout or deployment running), or `limit_s`."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        b = Books()
        parts_books(db, sim_state, b)
        if not (b.missing or b.orphans or b.stuck or b.duplicates):
            return
        time.sleep(1.0)


def ended_actions(db: Engine) -> tuple[Counter[str], int]:
    """How the actions ended; those FAILED or CANCELLED without a reason."""
    with db.connect() as c:
        rows = c.execute(text("SELECT status, status_reason FROM actions")).all()
    statuses = Counter(str(s) for s, _ in rows)
    silent = sum(1 for s, why in rows if s in ("FAILED", "CANCELLED") and not (why or "").strip())
    return statuses, silent


# -- running one scenario ------------------------------------------------------------------------


def sim_options(state: Path, seed: int, **more: Any) -> dict[str, Any]:
    return {
        "hosts": HOSTS,
        "zones": ZONES,
        "create_latency_s": 0.3,
        "delete_latency_s": 0.1,
        "failure_rate": 0.03,
        "seed": seed,
        "state_path": str(state),
        "real_cloud": True,
        "deploy_s": 0.3,
        **more,
    }


@contextlib.contextmanager
def small_disk(where: Path, size_mb: int, keep: bool) -> Iterator[Path]:
    """A tmpfs of `size_mb` at `where` (root only); unmounted after (its files copied beside
    it first, with `keep`)."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(where)],
        check=True,
        capture_output=True,
    )
    try:
        yield where
    finally:
        if keep:
            shutil.copytree(where, where.with_name("disk-kept"), dirs_exist_ok=True)
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


def fill(where: Path) -> Path:
    """Fill the filesystem at `where` to its last byte; the filler, to remove."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 16, 1 << 10, 1):  # the last partial chunks, smaller and smaller
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def scenario(name: str, args: argparse.Namespace, db_url: str, work: Path) -> dict[str, Any]:
    started = time.monotonic()
    rng = random.Random(args.seed)
    base = work
    stack = contextlib.ExitStack()
    settings: dict[str, str] = {}
    extra: dict[str, Any] = {}
    hang = work / "hang"
    if name == "full-disk":
        base = stack.enter_context(small_disk(work / "disk", 48, args.keep))
    if name == "hangs":
        extra["hang_path"] = str(hang)
        settings["SHOAL_PROVIDER_CALL_TIMEOUT_S"] = str(CALL_LIMIT_S)
        settings["SHOAL_ACTION_RETRIES"] = "1"  # a call that hangs fails its action at once
    sim_state = base / "cloud.sqlite"
    servers: list[Server] = []
    with stack:
        try:
            servers = chaos.start_servers(
                base, db_url, sim_options(sim_state, args.seed, **extra), args.servers, **settings
            )
            token = (servers[0].home / "admin-token").read_text().strip()
            run = Run(name, servers, token, create_engine(db_url), sim_state, rng)
            fault = _fault(name, base, hang)
            run.clear = lambda: _clear(hang, base)
            if name in ("transitions", "hangs", "full-disk"):
                transitions(run, args, fault)
            elif name == "rollouts":
                rollouts(run, args)
            else:
                balancers(run, args)
            _clear(hang, base)
            actions_left, locked = chaos.quiesce(run.db, 240)
            chaos.settled(run.db, 90)
            calm(run.db, sim_state, 120)
            return _line(run, args, actions_left + locked, started)
        finally:
            for s in servers:
                s.stop(15)


def _fault(name: str, base: Path, hang: Path) -> Callable[[int], None]:
    """What `transitions` does before each round in `hangs` and `full-disk`."""

    def during(r: int) -> None:
        if name == "hangs" and r % 2 == 0:
            hang.touch()  # the runtime stops mid-call ...
            ends = threading.Timer(CALL_LIMIT_S * 5, lambda: hang.unlink(missing_ok=True))
            ends.daemon = True
            ends.start()
        elif name == "full-disk":
            filler = base / "filler"
            if r % 2 == 0:
                fill(base)
            else:
                filler.unlink(missing_ok=True)

    return during


def _clear(hang: Path, base: Path) -> None:
    hang.unlink(missing_ok=True)
    (base / "filler").unlink(missing_ok=True)


def _line(run: Run, args: argparse.Namespace, stuck: int, started: float) -> dict[str, Any]:
    from shoal.model.catalogs import synthetic_inventory

    inventory = synthetic_inventory(HOSTS, ZONES, seed=args.seed)
    servers = chaos.books(run.db, run.sim_state, inventory)
    parts = Books()
    parts_books(run.db, run.sim_state, parts)
    judged = chaos.judge_clusters(run.db)
    statuses, silent = ended_actions(run.db)
    line = {
        "benchmark": "chaos",
        "scenario": run.name,
        "servers": len(run.servers),
        "clusters": len(judged),
        "ops": run.ops,
        "kills": run.kills,
        "duplicates": servers["duplicates"] + parts.duplicates,
        "orphans": servers["orphans"] + parts.orphans,
        "lost": servers["lost"],
        "stuck": stuck + parts.stuck,
        "missing": parts.missing,
        "unexplained": silent + sum(1 for _, ok, _ in judged if not ok),
        "violations": servers["violations"],
        "statuses": dict(sorted(statuses.items())),
        "refused": sum(run.refused.values()),
        "failed_starts": sum(run.failed_starts.values()),
        "cluster_statuses": cluster_statuses(run.db),
        **({"after_fault": run.after_fault} if run.after_fault is not None else {}),
        "seconds": round(time.monotonic() - started, 1),
        "load": round(os.getloadavg()[0], 1),
    }
    detail = {
        "parts": parts.samples,
        "clusters": [(n, why) for n, ok, why in judged if not ok][:5],
        "not_active": _not_active(run.db),
        "refused": run.refused.most_common(3),
        "failed_starts": run.failed_starts.most_common(3),
        "violations": servers["violation_samples"],
    }
    if any(detail.values()):
        print(json.dumps({"scenario": run.name, "samples": detail}), file=sys.stderr)
    return line


def main(args: argparse.Namespace) -> None:
    # A SIGTERM (a test's timeout) unwinds, so the engines started are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    names = [n.strip() for n in args.scenario.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s) {unknown}; known: races, {', '.join(SCENARIOS)}")
    for name in names:
        work = Path(tempfile.mkdtemp(prefix=f"shoal-chaos-{name}-"))
        try:
            with chaos.fresh_database() as db_url:
                print(json.dumps(scenario(name, args, db_url, work)), flush=True)
        finally:
            if args.keep:
                print(f"work directory kept: {work}", file=sys.stderr)
            else:
                shutil.rmtree(work, ignore_errors=True)
