"""What a local node may reach from its namespace (issue 39): one nftables table per home.

Every packet a node sends leaves its namespace through the host's end of its veth pair
(netns.py), so the host decides on the interface it came in by, which the node cannot change.
From a node's interface, the table `shoalnodes_<home tag>` accepts only:

- replies to connections made to the node (`ct state established,related`);
- packets from the node's own address (anything else is spoofed: dropped);
- TCP to its agents' endpoint (the host:port of its metadata URL: Shoal's agent listener);
- anything to the servers of its own cluster and to its cluster's balancer addresses (a
  cluster's security groups then filter what reaches each server: netfilter.py).

Everything else is refused (TCP with a reset, the rest with an ICMP error, IPv6 dropped): the
database, Shoal's API and internal ports, the host's other addresses, other clusters' and other
projects' nodes. Traffic *to* a node (the host's curl, health probes, HAProxy) is not this
table's business.

The table is rendered whole from the provider's records and replaced in one `nft` transaction,
so it is always what the records say; a file lock keeps two providers on one home in order.
Each cluster has a chain of its own, reached through a verdict map keyed by interface, so a
change costs one element per node, not one per pair of nodes.
"""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import os
import socket
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from shoal.files import open_private_append, private_dir
from shoal.providers.local.netns import tool

TABLE_PREFIX = "shoalnodes_"


class NodeFilterError(Exception):
    """nft refused the home's table; the message carries its words."""


@dataclass(frozen=True, slots=True)
class FilteredNode:
    """A node as the filter needs it."""

    iface: str
    address: str
    cluster: str
    agents: tuple[str, int] | None
    """The IPv4 address and port its agents reach Shoal at; None: it runs no agents."""


def table_name(home_tag: str) -> str:
    return f"{TABLE_PREFIX}{home_tag}"


def agents_endpoint(metadata_url: str | None) -> tuple[str, int] | None:
    """The IPv4 address and port of a metadata URL (a name is resolved); None if it has none."""
    if metadata_url is None:
        return None
    parts = urlsplit(metadata_url)
    if parts.hostname is None:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        return str(ipaddress.IPv4Address(parts.hostname)), port
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(parts.hostname, port, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return None
    return (str(found[0][4][0]), port) if found else None


def _chain(cluster: str) -> str:
    return "c_" + hashlib.sha256(cluster.encode()).hexdigest()[:16]


def _elements(items: Iterable[str]) -> str:
    listed = sorted(set(items))
    return f"elements = {{ {', '.join(listed)} }}" if listed else ""


def render(
    table: str,
    nodes: Sequence[FilteredNode],
    vips: Mapping[str, Sequence[str]],
    comment: str,
) -> str:
    """The nft script that replaces the home's table (`vips`: cluster -> its balancers'
    addresses)."""
    clusters: dict[str, set[str]] = {}
    for n in nodes:
        clusters.setdefault(n.cluster, set()).add(n.address)
    for cluster, given in vips.items():
        if cluster in clusters:
            clusters[cluster].update(given)
    safe = comment.replace('"', "'")[:120]
    ifaces = _elements(f'"{n.iface}"' for n in nodes)
    owners = _elements(f'"{n.iface}" . {n.address}' for n in nodes)
    agents = _elements(f'"{n.iface}" . {a[0]} . {a[1]}' for n in nodes if (a := n.agents))
    jumps = _elements(f'"{n.iface}" : jump {_chain(n.cluster)}' for n in nodes)
    lines = [
        f"table inet {table}",
        f"delete table inet {table}",
        f"table inet {table} {{",
        f'  comment "{safe}"',
        f"  set ifaces {{ type ifname; {ifaces} }}",
        f"  set owners {{ type ifname . ipv4_addr; {owners} }}",
        f"  set agents {{ type ifname . ipv4_addr . inet_service; {agents} }}",
        f"  map clusters {{ type ifname : verdict; {jumps} }}",
    ]
    for cluster, members in sorted(clusters.items()):
        listed = ", ".join(sorted(members))
        lines.append(f"  chain {_chain(cluster)} {{ ip daddr {{ {listed} }} accept; }}")
    lines += [
        "  chain from_node {",
        "    ct state established,related accept",
        "    meta nfproto ipv6 drop",
        "    iifname . ip saddr != @owners drop",
        "    iifname . ip daddr . tcp dport @agents accept",
        "    iifname vmap @clusters",
        "    meta l4proto tcp reject with tcp reset",
        "    reject with icmpx type admin-prohibited",
        "  }",
        "  chain input { type filter hook input priority filter - 10; policy accept;"
        " iifname @ifaces jump from_node; }",
        "  chain forward { type filter hook forward priority filter - 10; policy accept;"
        " iifname @ifaces jump from_node; }",
        "}",
        "",
    ]
    return "\n".join(lines)


def apply(script: Callable[[], str], lock: Path) -> None:
    """Load the script `script()` makes, under the home's lock, so what it read is what is
    loaded, whatever another provider on the home does meanwhile (blocking)."""
    private_dir(lock.parent)
    with os.fdopen(open_private_append(lock), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        _nft(["-f", "-"], script())


def delete_script(table: str) -> str:
    """Deletes the table whether it is there or not (made first: one transaction, no race)."""
    return f"table inet {table}\ndelete table inet {table}\n"


def delete(table: str) -> None:
    """Delete a table if it is there (blocking)."""
    _nft(["-f", "-"], delete_script(table))


def _nft(args: list[str], script: str | None) -> str:
    try:
        done = subprocess.run(
            [tool("nft"), *args],
            input=script,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NodeFilterError(f"nft could not run: {e}") from e
    if done.returncode != 0:
        raise NodeFilterError(f"nft refused the nodes' filter: {done.stderr.strip()[-2000:]}")
    return done.stdout
