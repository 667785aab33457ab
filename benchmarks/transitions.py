"""Transitions benchmark (issue 36): a running cluster changed in place, as surely as made.

Prints one JSON line per scenario (the names and keys are relied on by checks outside):
- `seed003-single-to-ha`, `seed003-ha-to-single`, `seed003-ha-to-pods` (`local`, real podman,
  through the `shoal` CLI of a background Shoal of its own home, benchmarks/containers.py's
  `Home`): `seconds` from the `shoal apply ... -e SHAPE` to every service of the new shape
  answering HTTP on its controller's address (a compose container, a workload's replica, a
  Pod) and the balancer listing every controller; `orphans`: containers and Pods of another
  shape left on any node once it answers (must be 0). Skipped, said so, without podman.
- `sim-transition-fuzz` (`sim`, one engine in process on SQLite): `steps` transitions of
  `--clusters` clusters from random documents to random documents, each compared with a fresh
  create of its document (tests/transitions/model.py); `divergences` (must be 0) and `orphans`.
- `local-container-kill`: a replica's container killed `--kills` times on local (podman), killed
  -> ready and answering (benchmarks/container_kill.py; `--no-kill` leaves it out).

Run: `python benchmarks/transitions.py [--steps 10] [--clusters 10] [--only SCENARIO]`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from containers import EXAMPLE, PORT, Home, _get, _image, _ip, _podman

SAYS = {"single.yaml": "in a container", "ha.yaml": "replica", "pods.yaml": "in a pod"}
LIMIT_S = 300.0


def _running(home: Home) -> dict[str, int]:
    """Containers and Pods on every node's store, by the shape that runs them."""
    kinds = {"single.yaml": 0, "ha.yaml": 0, "pods.yaml": 0}
    for store in (home.path / "local" / "nodes").glob("*/podman"):
        if not (store / "storage.conf").exists():
            continue
        names = _podman(store, "ps", "--all", "--format", "{{.Names}}").split()
        kinds["single.yaml"] += sum(n.startswith("apideployment") for n in names)
        kinds["ha.yaml"] += sum(n.startswith("shoal-Api-") for n in names)
        pods = _podman(store, "pod", "ps", "--format", "{{.Name}}").split()
        kinds["pods.yaml"] += sum(p == "api" for p in pods)
    return kinds


def _answering(client: httpx.Client, env: str) -> bool:
    controllers = 1 if env == "single.yaml" else 3
    found = client.get("/v1/nodes", params={"cluster": "template"}).json()["nodes"]
    nodes = {n["name"]: n for n in found}
    ctl = [n for name, n in nodes.items() if name.startswith("Controller")]
    if len(ctl) != controllers or any(n["status"] != "ACTIVE" for n in ctl):
        return False
    if any(SAYS[env] not in (_get(f"http://{_ip(n)}:{PORT}/") or "") for n in ctl):
        return False
    lb = nodes.get("Balancer")
    if controllers == 1:
        return lb is None
    page = (_get(f"http://{lb['address']}/www/index.html") if lb else None) or ""
    return all(f"{_ip(n)}:{PORT}" in page for n in ctl)


def _apply(home: Home, env: str) -> tuple[float, int]:
    """Seconds from the apply to the new shape answering; then its orphans (once the other
    shape's containers are gone, or at the limit: what is left of them)."""
    start = time.monotonic()
    home.shoal("apply", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / env))
    with home.client() as client:
        while not _answering(client, env):
            if time.monotonic() - start > LIMIT_S:
                raise TimeoutError(f"{env} not answering within {LIMIT_S:g} s")
            time.sleep(0.1)
        seconds = time.monotonic() - start
    deadline = time.monotonic() + 30.0
    while True:  # the old shape's leftovers: removed before the new shape started, so none
        left = sum(n for shape, n in _running(home).items() if shape != env)
        if left == 0 or time.monotonic() > deadline:
            return seconds, left
        time.sleep(0.2)


def seed003() -> list[dict[str, Any]]:
    home = Home()
    try:
        _image(home)
        home.shoal(
            "up", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / "single.yaml"),
            "--timeout", "300",
        )  # fmt: skip
        with home.client() as client:
            start = time.monotonic()
            while not _answering(client, "single.yaml"):
                if time.monotonic() - start > LIMIT_S:
                    raise TimeoutError(f"single.yaml not answering within {LIMIT_S:g} s")
                time.sleep(0.1)
        lines = []
        for name, env in (
            ("seed003-single-to-ha", "ha.yaml"),
            ("seed003-ha-to-single", "single.yaml"),
            (None, "ha.yaml"),
            ("seed003-ha-to-pods", "pods.yaml"),
        ):
            seconds, orphans = _apply(home, env)
            if name is not None:
                lines.append({"scenario": name, "seconds": round(seconds, 2), "orphans": orphans})
        return lines
    finally:
        home.close()


def fuzz(steps: int, clusters: int, seed: int) -> dict[str, Any]:
    from tests.transitions.model import POOL, Oracle, Rig, Shape, Tally, mutate, step, wait_for

    from shoal.store.database import Database

    tmp = tempfile.mkdtemp(prefix="shoal-transitions-")
    db = Database(f"sqlite:///{tmp}/shoal.db")
    db.migrate()
    rig = Rig(db)
    rng = random.Random(seed)
    tally = Tally()
    started = time.monotonic()
    try:
        oracle = Oracle(rig)
        shapes: dict[str, Shape] = {f"c{i}": rng.choice(POOL) for i in range(clusters)}
        made = {n: s for n, s in shapes.items() if rig.create(n, s) is not None}
        oracle.of(list(made.values()))
        for name, s in made.items():
            cid = rig.cluster_id(name)
            want = oracle.known.get(s)
            if (
                cid is None
                or want is None
                or not wait_for(lambda c=cid, w=want: rig.observe(c) == w)
            ):
                tally.divergences += 1
        while tally.steps < steps:
            step(rig, oracle, made, {n: mutate(rng, s) for n, s in made.items()}, tally)
    finally:
        rig.close()
        db.dispose()
    for note in tally.notes + tally.rollbacks:  # what diverged, was left or rolled back
        print(f"# {note}", file=sys.stderr)
    return {
        "scenario": "sim-transition-fuzz",
        "steps": tally.steps,
        "divergences": tally.divergences,
        "orphans": tally.orphans,
        "refused": tally.refused,
        "rolled_back": tally.rolled_back,
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200, help="sim transitions (at least)")
    p.add_argument("--clusters", type=int, default=10, help="sim clusters changed at once")
    p.add_argument("--seed", type=int, default=36)
    p.add_argument("--only", choices=["seed003", "sim-transition-fuzz", "local-container-kill"])
    p.add_argument("--kills", type=int, default=10, help="local-container-kill's kills")
    p.add_argument("--no-kill", action="store_true", help="without local-container-kill")
    a = p.parse_args()
    from workloads_local import available

    if a.only in (None, "seed003"):
        if available():
            for line in seed003():
                print(json.dumps(line), flush=True)
        else:
            print("# seed003 scenarios skipped: needs podman and busybox-static", flush=True)
    if a.only in (None, "sim-transition-fuzz"):
        print(json.dumps(fuzz(a.steps, a.clusters, a.seed)), flush=True)
    if a.only in (None, "local-container-kill") and not a.no_kill and available():
        from container_kill import local_container_kill

        print(json.dumps(local_container_kill(a.kills)), flush=True)


if __name__ == "__main__":
    main()
