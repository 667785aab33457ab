"""benchmarks/chaos.py's books, for network resources: every resource the services hold for a
cluster, counted straight from Neutron's and Octavia's own listings (not through the provider
under test).

- duplicates: resources beyond the first sharing one key (a retried create made a second);
- orphans: after a delete, anything of the cluster still there; before it, anything without
  a key (an attempt that died between creating and marking, not adopted by its retry).
"""

from __future__ import annotations

import json
import urllib.request
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

NEUTRON_KINDS = ("networks", "subnets", "routers", "security-groups", "ports", "floatingips")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.loads(resp.read())


@dataclass(frozen=True)
class Books:
    resources: int
    duplicates: int
    unkeyed: int
    by_kind: dict[str, int]
    unkeyed_names: tuple[str, ...] = ()


def books(cluster: str, neutron: str, octavia: str) -> Books:
    tag = f"shoal-cluster:{cluster}"
    found: dict[str, dict[str, Any]] = {}
    by_kind: Counter[str] = Counter()
    for kind in NEUTRON_KINDS:
        key = kind.replace("-", "_")
        rows = _get(f"{neutron}/v2.0/{kind}?tags={quote(tag)}")[key]
        rows += _get(f"{neutron}/v2.0/{kind}?description={quote(tag)}")[key]
        for r in rows:
            if r["id"] not in found:
                found[r["id"]] = {
                    "kind": kind,
                    "tags": r.get("tags") or [],
                    "name": f"{kind}/{r.get('name') or r.get('floating_ip_address')}",
                }
                by_kind[kind] += 1
    for lb in _get(f"{octavia}/v2/lbaas/loadbalancers?tags={quote(tag)}")["loadbalancers"]:
        if lb["provisioning_status"] != "DELETED":
            found[lb["id"]] = {
                "kind": "loadbalancers",
                "tags": lb.get("tags") or [],
                "name": f"loadbalancers/{lb['name']}",
            }
            by_kind["loadbalancers"] += 1
    keys = Counter(
        (r["kind"], t) for r in found.values() for t in r["tags"] if t.startswith("shoal-key:")
    )
    unkeyed = tuple(
        r["name"] for r in found.values() if not any(t.startswith("shoal-key:") for t in r["tags"])
    )
    return Books(
        resources=len(found),
        duplicates=sum(n - 1 for n in keys.values()),
        unkeyed=len(unkeyed),
        unkeyed_names=unkeyed,
        by_kind=dict(by_kind),
    )
