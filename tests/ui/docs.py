"""Documents the dashboard tests share."""

from __future__ import annotations

import json
from typing import Any

import yaml

TINY = {"type": "server", "flavor": "m1.tiny", "image": "cirros"}

DEMO: dict[str, Any] = {
    "name": "ui-demo",
    "profiles": {"small": TINY},
    "node_groups": [
        {"name": "web", "profile": "small", "count": 3, "min": 1, "max": 6},
        {"name": "cache", "profile": "small", "count": 2, "min": 1, "max": 4},
    ],
    "groupings": [
        {"name": "web-apart", "members": ["web"], "rule": "anti-affinity", "scope": "host"},
        {"name": "cache-pair", "members": ["cache"], "rule": "affinity", "scope": "host"},
    ],
}
"""Three web servers no two on one host, and a cache pair that always shares one."""

TOO_SPREAD: dict[str, Any] = {
    "name": "too-spread",
    "profiles": {"small": TINY},
    "node_groups": [{"name": "web", "profile": "small", "count": 8, "min": 1, "max": 8}],
    "groupings": [
        {"name": "web-apart", "members": ["web"], "rule": "anti-affinity", "scope": "host"}
    ],
}
"""Eight servers on distinct hosts: the default inventory has six."""

BROKEN: dict[str, Any] = {
    "name": "broken",
    "node_groups": [
        {
            "name": "web",
            "profile": {"type": "server", "flavor": "m9.huge", "image": "cirros"},
            "count": -1,
        }
    ],
}
"""Two problems at once: an unknown flavor and a negative count."""


def one_group(name: str, count: int) -> dict[str, Any]:
    return {
        "name": name,
        "node_groups": [{"name": "app", "profile": dict(TINY), "count": count, "min": 0}],
    }


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc)


def yaml_text(doc: dict[str, Any]) -> str:
    """The document as a person would write it (for the page, and its screenshot)."""
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=90)
