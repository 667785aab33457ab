"""What a hostile local node tries to reach, and what it must still reach (issue 39).

Shared by `tests/sandbox/test_node_network.py` and `benchmarks/isolation.py`. A node of the
`probe` cluster runs a deployment script (Heat's real agents, in the node's sandbox and its own
network) that tries each target and prints one `PROBE {json}` line per try: the database and
the machine's other services on 127.0.0.1, Shoal's API and its admin routes, HAProxy's stats
socket, another project's node, another cluster's node and balancer (all expected unreachable),
and its own address, a peer of its cluster, its metadata URL (expected reachable); its signal
is reached when the deployment completes (the agents POST it).

Targets the node resolves itself: `self:PORT` (its own address), `peer:PORT` (another member of
its group, from `{members: p}`), `metadata` (its metadata URL, from its agents' configuration).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

PROBE_CLUSTER = "probe"

PROBE_SCRIPT = r"""#!/usr/bin/env python3
import json, os, re, socket, urllib.error, urllib.request
own = os.environ.get("SHOAL_NODE_ADDRESS", "")
peers = [a for a in re.findall(r"\d+\.\d+\.\d+\.\d+", os.environ.get("peers", "")) if a != own]
conf = os.path.join(os.environ.get("SHOAL_NODE_WORKDIR", ""), "agents/etc/os-collect-config.conf")
found = re.search(r"metadata_url = (\S+)", open(conf).read())
meta = found.group(1).replace("$$", "$") if found else ""

def tcp(host, port):
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            return True
    except OSError:
        return False

def http(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status < 400
    except urllib.error.HTTPError as e:
        return e.code in (401, 403)  # the route is there, only the token is missing
    except (OSError, ValueError):
        return False

def abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + name)
        return True
    except OSError:
        return False
    finally:
        s.close()

for p in json.loads(os.environ["probes"]):
    kind, _, rest = p["target"].partition(":")
    if kind == "self":
        target, reached = f"{own}:{rest}", tcp(own, rest)
    elif kind == "peer":
        target = f"{peers[0]}:{rest}" if peers else "(no peer yet)"
        reached = bool(peers) and tcp(peers[0], rest)
    elif kind == "metadata":
        target, reached = meta.split("?")[0], http(meta)
    elif kind == "tcp":
        host, port = rest.rsplit(":", 1)
        target, reached = rest, tcp(host, port)
    elif kind == "http":
        target, reached = rest, http(rest)
    else:
        target, reached = "@" + rest, abstract(rest)
    line = {"probe": p["probe"], "target": target, "reached": reached}
    print("PROBE " + json.dumps({**line, "expected": p["expected"]}), flush=True)
"""


@dataclass(frozen=True)
class Probe:
    probe: str
    target: str
    expected: bool


def probes(
    *,
    node_port: int,
    api_port: int,
    agent_port: int,
    victim: str,
    neighbour: str,
    vip: str | None = None,
    stats_socket: str | None = None,
) -> list[Probe]:
    """The probes against a server on `api_port` (agents on `agent_port`), another project's
    node at `victim` and another cluster's (same project) at `neighbour` (addresses alone), its
    nodes listening on `node_port`."""
    out = [
        Probe("database", "tcp:127.0.0.1:5432", False),
        Probe("mariadb", "tcp:127.0.0.1:3306", False),
        Probe("rabbitmq", "tcp:127.0.0.1:5672", False),
        Probe("api", f"tcp:127.0.0.1:{api_port}", False),
        Probe("api-admin-route", f"http:http://127.0.0.1:{api_port}/v1/projects", False),
        Probe("agents-port-admin-route", f"http:http://127.0.0.1:{agent_port}/v1/projects", False),
        Probe("other-project-node", f"tcp:{victim}:{node_port}", False),
        Probe("other-cluster-node", f"tcp:{neighbour}:{node_port}", False),
        Probe("own-address", f"self:{node_port}", True),
        Probe("peer", f"peer:{node_port}", True),
        Probe("metadata", "metadata", True),
    ]
    if vip is not None:
        out.append(Probe("other-cluster-balancer", f"tcp:{vip}:80", False))
    if stats_socket is not None:
        out.append(Probe("haproxy-stats", f"abstract:{stats_socket}", False))
    return out


def probe_document(listed: list[Probe]) -> str:
    """The hostile cluster: two servers, each running the probes (JSON, a native document)."""
    doc: dict[str, Any] = {
        "name": PROBE_CLUSTER,
        "node_groups": [
            {
                "name": "p",
                "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
                "count": 2,
            }
        ],
        "software": {
            "configs": {
                "probe": {
                    "group": "script",
                    "inputs": [{"name": "probes"}, {"name": "peers", "type": "CommaDelimitedList"}],
                    "config": PROBE_SCRIPT,
                }
            },
            "deployments": {
                "probe": {
                    "config": "probe",
                    "target": "p",
                    "inputs": {
                        "probes": {"value": json.dumps([asdict(p) for p in listed])},
                        "peers": {"members": "p"},
                    },
                }
            },
        },
    }
    return json.dumps(doc)


def plain_document(name: str, node_port: int, balancer: bool = False) -> str:
    """A one-server cluster to aim at (with a balancer in front of it, when asked)."""
    doc: dict[str, Any] = {
        "name": name,
        "node_groups": [
            {
                "name": "web",
                "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
                "count": 1,
            }
        ],
    }
    if balancer:
        doc["networks"] = [{"name": "app", "cidr": "10.10.0.0/24"}]
        doc["load_balancers"] = [
            {
                "name": "front",
                "network": "app",
                "listeners": [{"port": 80, "pool": "web"}],
                "pools": [{"name": "web", "members": "web", "port": node_port}],
            }
        ]
    return json.dumps(doc)


_LINE = re.compile(r"^PROBE (\{.*\})$", re.M)


def results(stdout: str) -> list[dict[str, Any]]:
    """The probes' results in a run's stdout."""
    return [json.loads(m.group(1)) for m in _LINE.finditer(stdout)]


def failing(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in found if r["reached"] != r["expected"]]
