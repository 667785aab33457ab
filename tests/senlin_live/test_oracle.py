"""Issue 28 part 5: real Senlin 16 as the oracle for Shoal's /clustering. The same openstacksdk
script (tests/senlin_live/oracle.py) runs against Senlin and against Shoal, both booting in the
same Nova; every field that differs fails the test unless docs/senlin.md lists it with its
reason, and a listed difference that no longer occurs fails too (the list stays true)."""

from __future__ import annotations

import json

from tests.senlin_live.cloud_ops import connect
from tests.senlin_live.conftest import LiveCloud
from tests.senlin_live.oracle import allowed, differences, observe


def test_shoal_leaves_behind_what_senlin_leaves(live: LiveCloud) -> None:
    live.senlin.ensure_running()
    senlin = observe(connect(live.keystone, live.senlin.url), "oracle")
    shoal = observe(connect(live.keystone, f"{live.shoal.url}/clustering"), "oracle")
    found = differences(senlin, shoal)
    print(json.dumps({k: list(v) for k, v in found.items()}, indent=1, default=str))
    accepted = allowed()
    unlisted = {k: v for k, v in found.items() if k not in accepted}
    stale = sorted(set(accepted) - set(found))
    assert not unlisted, "differences not in docs/senlin.md:\n" + json.dumps(
        unlisted, indent=1, default=str
    )
    assert not stale, f"listed in docs/senlin.md but no longer different: {stale}"
