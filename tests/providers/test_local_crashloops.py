"""The local provider's guard over deployments' containers that keep exiting (issue 36;
providers/local/crashloops.py), fed a podman event log and driven by an injected clock (the
engine's `ManualClock`'s `now`): an exit the runtime's policy restarts is left alone the first
time, held for 10 s the second time in a row, 20 s the third, and the streak ends once the
container ran 10 minutes; a stop by a user (a `died` with no `restart`) is no exit of its own;
replicas are the keeper's. No podman runs: the guard is given `/bin/true` for podman."""

from __future__ import annotations

import json
from pathlib import Path

from shoal.clock import ManualClock
from shoal.providers.local.crashloops import CrashLoops, Watched
from shoal.providers.local.podman import Podman, Store


def _event(status: str, name: str = "web_1", **extra: object) -> str:
    attributes = {"com.docker.compose.project": "loopyweb", **extra}
    line = {"Name": name, "Status": status, "Type": "container", "Attributes": attributes}
    if status == "died":
        line["ContainerExitCode"] = 3
    return json.dumps(line) + "\n"


async def test_the_guard_backs_off_repeated_exits(tmp_path: Path) -> None:
    clock = ManualClock(0.0)
    store = Store(tmp_path / "podman")
    store.root.mkdir()
    log = store.root / "events.log"
    log.write_text("")
    fake = Podman(Path("/bin/true"), Path("/bin/true"))
    guard = CrashLoops(
        lambda: fake, lambda: [Watched(store, tmp_path / "no.sock")], clock=clock.now
    )

    def happen(*lines: str) -> None:
        with open(log, "a") as f:
            f.writelines(lines)

    await guard.once()  # the log is read from its end: what came before is not news
    happen(_event("start"))
    await guard.once()
    clock.advance(1.0)
    happen(_event("died"), _event("restart"), _event("start"))  # the first exit: at once
    await guard.once()
    assert guard.loops(store) == []
    clock.advance(1.0)
    happen(_event("died"), _event("restart"), _event("start"))  # again within 10 min: held
    await guard.once()
    [loop] = guard.loops(store)
    assert (loop.container, loop.project, loop.exits, loop.exit_code) == (
        "web_1",
        "loopyweb",
        2,
        3,
    )
    assert loop.restart_at == 12.0
    clock.advance(10.0)
    await guard.once()  # its back-off passed: started again by the guard
    [loop] = guard.loops(store)
    assert loop.restart_at is None
    clock.advance(1.0)
    happen(_event("died"), _event("restart"))
    await guard.once()
    [loop] = guard.loops(store)
    assert loop.exits == 3 and loop.restart_at == 13.0 + 20.0
    clock.advance(20.0)
    await guard.once()
    clock.advance(600.0)  # it ran 10 minutes: no longer in a loop, and a next exit is a first
    assert guard.loops(store) == []
    happen(_event("died"), _event("restart"), _event("start"))
    await guard.once()
    assert guard.loops(store) == []


async def test_stops_and_replicas_are_not_exits_of_the_guards(tmp_path: Path) -> None:
    clock = ManualClock(0.0)
    store = Store(tmp_path / "podman")
    store.root.mkdir()
    log = store.root / "events.log"
    log.write_text("")
    fake = Podman(Path("/bin/true"), Path("/bin/true"))
    guard = CrashLoops(
        lambda: fake, lambda: [Watched(store, tmp_path / "no.sock")], clock=clock.now
    )
    await guard.once()
    with open(log, "a") as f:
        for _ in range(5):  # a user's stop and start, again and again: no restart by policy
            f.write(_event("start") + _event("died"))
        for _ in range(5):  # a replica restarted by its policy (the keeper's business)
            f.write(_event("died", "r", **{"shoal.replica": "c/api-1"}))
            f.write(_event("restart", "r", **{"shoal.replica": "c/api-1"}))
    clock.advance(1.0)
    await guard.once()
    assert guard.loops(store) == []
