"""A seeded fuzz of the agents' routes (issue 29), on SQLite and PostgreSQL: hundreds of
hostile signal bodies (deep nesting, huge numbers, non-finite floats, wrong types, odd text)
and hostile metadata requests each get a 4xx, never a 5xx, and leave the run as it was; the
first body the route accepts ends the run once, and later ones change nothing.

Schemathesis (tests/fuzz) reaches these routes without their URL secrets, so only as 404s;
this fuzz holds the real secrets, so the bodies reach the parser."""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import urlsplit

from tests.api.conftest import Api
from tests.api.test_agent_credentials import _input, metadata, short_secret
from tests.api.test_deployments import DOC, until_status

BODIES = 300
SEED = 29


def hostile_value(rng: random.Random, depth: int = 0) -> str:
    """One JSON value as text: sometimes valid, often not what a signal may hold."""
    pick = rng.randrange(12)
    if depth > 3 or pick == 0:
        return rng.choice(["null", "true", "0", '""', "1.5", '"\\u0000"', '"\\ud800"'])
    if pick == 1:
        return str(rng.choice([10**29, -(10**40), 2**63, 2**31, -1]))
    if pick == 2:
        return rng.choice(["1e999", "-1e999", "NaN", "Infinity", "1" * rng.randrange(1, 6000)])
    if pick == 3:
        n = rng.randrange(33, 3000)
        return "[" * n + "]" * n
    if pick == 4:
        n = rng.randrange(33, 400)
        return '{"a":' * n + "1" + "}" * n
    if pick == 5:
        return json.dumps("x" * rng.randrange(0, 5000))
    if pick == 6:
        items = ",".join(hostile_value(rng, depth + 1) for _ in range(rng.randrange(0, 5)))
        return f"[{items}]"
    if pick == 7:
        return rng.choice(['"[/]"', '"\\u001b[31m"', '"%s%n"', '"../../admin-token"'])
    if pick == 8:
        return rng.choice(["[", "{", '"', "{}}", "tru", ""])  # broken JSON
    fields = {
        "deploy_stdout": rng.choice(["1", "[]", '"ok"', "{}"]),
        "deploy_stderr": rng.choice(["1", '""', "null"]),
        "deploy_status_code": rng.choice(['"x"', "1.5", "true", '"10000000000"', "[]"]),
    }
    name = rng.choice([*fields, "dsn", "a/b~c", ""])
    return (
        "{" + f"{json.dumps(name)}:{hostile_value(rng, depth + 1)}" + "}"
        if pick == 9
        else ("{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in fields.items()) + "}")
    )


async def test_hostile_signals_and_metadata_requests_never_500(api: Api) -> None:
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    r = await metadata(api, run["node_id"])
    [entry] = r.json()["deployments"]
    url = urlsplit(_input(entry, "deploy_signal_id"))
    where = f"{url.path}?{url.query}"
    rng = random.Random(SEED)
    statuses: dict[int, int] = {}
    accepted: list[str] = []
    for _ in range(BODIES):
        body = hostile_value(rng)
        r = await api.http.post(where, content=body.encode("utf-8", "surrogatepass"))
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code < 500, (body[:200], r.text)
        if r.status_code == 200:
            accepted.append(body)
        else:
            assert 400 <= r.status_code < 500, (body[:200], r.text)
            assert r.json()["error"]["code"], r.text
    if not accepted:
        assert (await until_status(api, "ctl", "db-setup", "IN_PROGRESS"))["attempts"] == 1
    assert sum(n for s, n in statuses.items() if 400 <= s < 500) > BODIES // 2, statuses

    # The metadata route: wrong, odd or hostile ids and tokens are 404 or 422, never 5xx.
    node_id = run["node_id"]
    odd: list[dict[str, Any]] = [
        {"token": "x" * 60_000},
        {"token": "\u0000"},
        {"token": "' OR 1=1 --"},
        {"token": ["a", "b"]},
        {},
    ]
    for params in odd:
        r = await api.http.get(f"/v1/software/servers/{node_id}/metadata", params=params)
        assert 400 <= r.status_code < 500, r.text
    for bad_id in ("..%2f..%2fadmin-token", "x" * 5000, "%00", "srv-1"):
        r = await api.http.get(f"/v1/software/servers/{bad_id}/metadata", params={"token": "t"})
        assert 400 <= r.status_code < 500, r.text
