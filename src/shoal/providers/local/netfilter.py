"""Security groups on `local` as real packet filtering: one nftables table per cluster.

Local servers are processes on loopback addresses (127.Z.H.N), so a security group becomes
rules about packets *to* a server's address, wherever the host sees them (`_HOOKS`): a server
in at least one group accepts replies to what it sent, what some rule of its groups allows,
and its load balancers' health checks and traffic to the pools it is in; any other TCP is
refused with a reset, anything else rejected. A server in no group is not filtered (Neutron's
"port security off"). A peer is known by its source address, so a process that speaks for a
node binds the node's address first (HAProxy does, with `source`).

Not enforced on `local` (docs/networks.md): egress rules, IPv6 sources (local servers have
IPv4 addresses), and the networks themselves: a cluster's networks and fixed IPs are logical.
What a node may reach at all (its own cluster, its agents' endpoint) is the nodes' filter's
business (nodefilter.py); these rules narrow what reaches each server within that.

The table is Shoal's own (`shoal_<home>_<cluster>`, family inet), replaced whole in one `nft`
transaction on every change and deleted with the cluster; other tables are never touched.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterable
from ipaddress import IPv4Network

from shoal.model.networks import CidrSource, Direction, GroupSource, Protocol, SecurityRule
from shoal.providers.networking import ClusterNetworks, NetworkToolsMissingError

PACKAGE = "nftables"
_HOOKS = ("input", "forward", "output")
"""Where a packet to a server is seen: on the host's loopback (a node sharing the host's
network) at input; to a node in its own network (isolation.py) at forward from another node,
at output from the host itself (HAProxy, health probes, a user's curl)."""
_TABLE = re.compile(r"^table inet (shoal_[0-9a-z]+_[0-9a-z_]+)\s*$", re.M)


def table_name(home_tag: str, cluster_id: str) -> str:
    return f"shoal_{home_tag}_{re.sub(r'[^0-9a-z]', '_', cluster_id.lower())}"


def protected(cluster: ClusterNetworks) -> dict[str, tuple[str, ...]]:
    """Server address -> the security groups it is in (servers in none are left out)."""
    out: dict[str, tuple[str, ...]] = {}
    for s in cluster.servers:
        groups = cluster.spec.groups_of(s.group, s.part)
        if groups:
            out[s.address] = groups
    return out


def _sources(rule: SecurityRule, cluster: ClusterNetworks) -> list[str] | None:
    """The IPv4 sources of a rule as nft set elements; None means any source."""
    src = rule.source
    if src is None:
        return None
    if isinstance(src, CidrSource):
        if not isinstance(src.cidr, IPv4Network):
            return []
        return None if src.cidr.prefixlen == 0 else [str(src.cidr)]
    if isinstance(src, GroupSource):
        return sorted(a for a, gs in protected(cluster).items() if src.group in gs)
    return [s.address for s in cluster.members(src.member.target, src.member.part)]


def _l4(rule: SecurityRule) -> str:
    if rule.protocol is Protocol.ANY:
        return ""
    if rule.protocol is Protocol.ICMP:
        return "meta l4proto icmp"
    if rule.port_min is None or rule.port_max is None:
        return f"meta l4proto {rule.protocol}"
    ports = (
        str(rule.port_min) if rule.port_min == rule.port_max else f"{rule.port_min}-{rule.port_max}"
    )
    return f"{rule.protocol} dport {ports}"


def _set(items: Iterable[str]) -> str:
    return "{ " + ", ".join(items) + " }"


def render(table: str, cluster: ClusterNetworks, vips: dict[str, str]) -> str:
    """The nft script that replaces the cluster's table (`vips`: balancer name -> address)."""
    lines = [
        f"table inet {table}",
        f"delete table inet {table}",
        f"table inet {table} {{",
        "  chain guard {",
    ]
    spec = cluster.spec
    for address, groups in sorted(protected(cluster).items()):
        lines.append(f"    ip daddr {address} ct state established,related accept")
        lines.append(f"    ip daddr {address} ip saddr {address} accept")
        for name in groups:
            group = spec.security_group(name)
            for rule in group.rules if group is not None else ():
                if rule.direction is not Direction.INGRESS:
                    continue
                sources = _sources(rule, cluster)
                if sources == []:
                    continue  # a group or member with no server yet allows nobody
                match = f"ip daddr {address}"
                if sources is not None:
                    match += f" ip saddr {_set(sources)}"
                l4 = _l4(rule)
                lines.append(f"    {match}{' ' + l4 if l4 else ''} accept")
        for lb in spec.load_balancers:
            vip = vips.get(lb.name)
            if vip is None:
                continue
            for pool in lb.pools:
                served = cluster.members(pool.members.target, pool.members.part)
                if any(s.address == address for s in served):
                    lines.append(
                        f"    ip daddr {address} ip saddr {vip} tcp dport {pool.member_port} accept"
                    )
        lines.append(f"    ip daddr {address} meta l4proto tcp reject with tcp reset")
        lines.append(f"    ip daddr {address} reject")
    lines.append("  }")
    for hook in _HOOKS:
        lines.append(
            f"  chain {hook} {{ type filter hook {hook} priority 0; policy accept; jump guard; }}"
        )
    lines += ["}", ""]
    return "\n".join(lines)


def available() -> bool:
    return shutil.which("nft") is not None


def need(search: str | None = None) -> str:
    """nft's path, looked for on `search` (PATH-style; by default PATH), or the error naming
    the package to install."""
    nft = shutil.which("nft", path=search)
    if nft is None:
        raise NetworkToolsMissingError((PACKAGE,), "security groups on local need nft")
    return nft


async def _nft(*args: str, script: str | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        need(),
        *args,
        stdin=asyncio.subprocess.PIPE if script is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate(script.encode() if script is not None else None)
    return proc.returncode or 0, (out + err).decode(errors="replace")


class NftError(Exception):
    """nft refused a script or a command; the message carries its words."""


async def apply(table: str, script: str) -> None:
    code, text = await _nft("-f", "-", script=script)
    if code != 0:
        raise NftError(f"nft could not load table {table}: {text.strip()}")


async def delete(table: str) -> None:
    if table not in await tables("shoal_"):
        return
    code, text = await _nft("delete", "table", "inet", table)
    if code != 0 and table in await tables("shoal_"):
        raise NftError(f"nft could not delete table {table}: {text.strip()}")


async def tables(prefix: str) -> set[str]:
    """Shoal's tables whose names start with `prefix` (one home's)."""
    if not available():
        return set()
    code, text = await _nft("list", "tables", "inet")
    if code != 0:
        raise NftError(f"nft could not list tables: {text.strip()}")
    return {m.group(1) for m in _TABLE.finditer(text) if m.group(1).startswith(prefix)}
