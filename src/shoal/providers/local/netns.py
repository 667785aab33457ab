"""A network of its own for each local node (issue 39): a named network namespace joined to the
host by a veth pair, the node's loopback address routed to it.

A node that shares the host's network reaches everything listening there: the database, Shoal's
API, every other tenant's node. So a node runs in its own namespace (`ip netns`, named
`shoal-<home tag>-<server id>`, so a restarted Shoal finds it again and two homes never share
one), and the host reaches it, and it reaches the host, through one veth pair:

- inside: `lo` up with the node's own address `127.Z.H.N/32` (and no 127.0.0.1, so every other
  address, 127.0.0.1 included, goes out `eth0` to the host, where the home's filter decides:
  nodefilter.py); `eth0` the default route, its source the node's address;
- on the host: the other end (`sh<12 hex>`), and a route for `127.Z.H.N/32` through it in the
  `local` table (more specific than `127.0.0.0/8 dev lo`), so placement still reads off the
  address and anyone on the machine still reaches the node there: `curl`, Shoal's health probes,
  HAProxy. Two homes cannot route one address: the second `route add` fails, and the slot table
  skips addresses the host can no longer bind (slots.py).

Loopback addresses on a non-loopback device are "martian" to Linux unless `route_localnet` is
set on it, and packets between two nodes are forwarded by the host: both are set per interface
(never the machine-wide `ip_forward`). Both ends use one MAC address with ARP off, so a frame
always reaches the other end without neighbour discovery. IPv6 is off on the host's end (no
link-local path to the host's services).

Needs root (CAP_SYS_ADMIN for the namespace, CAP_NET_ADMIN for links and routes), `ip`
(iproute2) and `nsenter` (util-linux): `usable()` says why not, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

NETNS_DIR = Path("/run/netns")
HOMES_DIR = Path("/run/shoal/homes")
"""`<home tag>` -> the home's path: lets any home's provider remove the namespaces of homes
that no longer exist (a test's temporary home deleted with its nodes still recorded)."""
PREFIX = "shoal-"
PACKAGES = "iproute2 util-linux nftables"
INNER_IFACE = "eth0"


class NetnsError(Exception):
    """`ip` refused to make or change a node's namespace; the message carries its words."""


@dataclass(frozen=True, slots=True)
class NodeLink:
    """One node's namespace and veth pair, by name."""

    netns: str
    iface: str
    """The host's end of the veth pair (15 characters at most, as Linux allows)."""
    mac: str
    address: str

    @classmethod
    def of(cls, home_tag: str, server_id: str, address: str) -> NodeLink:
        digest = hashlib.sha256(f"{home_tag}/{server_id}".encode()).hexdigest()
        mac = "02:" + ":".join(digest[i : i + 2] for i in range(12, 22, 2))
        return cls(f"{PREFIX}{home_tag}-{server_id}", f"sh{digest[:12]}", mac, address)

    @property
    def path(self) -> Path:
        return NETNS_DIR / self.netns

    def enter(self, argv: Sequence[str]) -> list[str]:
        """`argv` run inside the namespace (nsenter execs it: the pid stays the same)."""
        return [tool("nsenter"), f"--net={self.path}", "--", *argv]

    def exists(self) -> bool:
        """The namespace is there and joined to the host (its host end exists)."""
        return self.path.exists() and Path("/sys/class/net", self.iface).exists()


async def make(link: NodeLink) -> None:
    """Make the namespace, its veth pair and routes; one left half-made is made again."""
    await remove(link)
    host = [
        f"netns add {link.netns}",
        f"link add {link.iface} address {link.mac} type veth peer name {INNER_IFACE} "
        f"address {link.mac} netns {link.netns}",
        f"link set {link.iface} up arp off",
        f"route add {link.address}/32 dev {link.iface} table local src 127.0.0.1",
    ]
    await _ip(host, link)
    # Before anything runs in the namespace, so before any packet (one `ip` less per start).
    _host_sysctls(link.iface)
    inner = [
        "link set lo up",
        "address del 127.0.0.1/8 dev lo",
        f"address add {link.address}/32 dev lo",
        f"link set {INNER_IFACE} up arp off",
        f"route add default dev {INNER_IFACE} src {link.address}",
    ]
    # route_localnet inside: the node receives and sends its 127.Z.H.N on eth0.
    script = "echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet && exec ip -batch -"
    await _run(link.enter(["/bin/sh", "-c", script]), "\n".join(inner) + "\n", link)


async def remove(link: NodeLink) -> None:
    """Delete the veth pair (its route goes with it) and the namespace; gone is fine."""
    if Path("/sys/class/net", link.iface).exists():
        await _run([tool("ip"), "link", "del", link.iface], None, link, check=False)
    if link.path.exists():
        await _run([tool("ip"), "netns", "del", link.netns], None, link, check=False)


def names(home_tag: str) -> list[str]:
    """The namespaces of one home."""
    prefix = f"{PREFIX}{home_tag}-"
    with contextlib.suppress(OSError):
        return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(prefix))
    return []


def register_home(home_tag: str, home: Path) -> None:
    """Say which home a tag is (for `orphaned_tags`)."""
    with contextlib.suppress(OSError):
        HOMES_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        (HOMES_DIR / home_tag).write_text(str(home))


def orphaned_tags() -> list[str]:
    """Tags of registered homes that no longer exist (deleted directories)."""
    out = []
    with contextlib.suppress(OSError):
        for entry in sorted(HOMES_DIR.iterdir()):
            try:
                home = Path(entry.read_text())
            except OSError:
                continue
            if not home.exists():
                out.append(entry.name)
    return out


def forget_home(home_tag: str) -> None:
    (HOMES_DIR / home_tag).unlink(missing_ok=True)


def remove_named(netns: str) -> None:
    """Remove a namespace known only by its name, with the host end of its veth pair
    (blocking)."""
    for iface in _host_ends(netns):
        subprocess.run([tool("ip"), "link", "del", iface], capture_output=True, timeout=30)
    subprocess.run([tool("ip"), "netns", "del", netns], capture_output=True, timeout=30)


def _host_ends(netns: str) -> list[str]:
    """The host ends of a namespace's veth pairs: those whose peer is in it."""
    done = subprocess.run(
        [tool("ip"), "-o", "link", "show", "type", "veth"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    out = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) > 1 and f"link-netns {netns}" in line:
            out.append(fields[1].split("@", 1)[0])
    return out


@functools.cache
def usable() -> str:
    """Why nodes cannot get namespaces here ("" when they can): root, the tools, and a
    namespace really made and removed (a container may forbid it). Asked once."""
    if os.geteuid() != 0:
        return "Shoal does not run as root (namespaces and veth pairs need CAP_NET_ADMIN)"
    missing = [t for t in ("ip", "nsenter", "nft") if _which(t) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian packages: {PACKAGES})"
    probe = f"{PREFIX}probe-{uuid.uuid4().hex[:8]}"
    try:
        done = subprocess.run(
            [tool("ip"), "netns", "add", probe], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"ip netns add failed: {e}"
    subprocess.run([tool("ip"), "netns", "del", probe], capture_output=True, timeout=30)
    if done.returncode != 0:
        return f"ip netns add failed: {done.stderr.strip()}"
    return ""


def _which(name: str) -> str | None:
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
    return shutil.which(name, path=search)


def tool(name: str) -> str:
    found = _which(name)
    if found is None:
        raise NetnsError(f"{name} not found (Debian packages: {PACKAGES})")
    return found


def _host_sysctls(iface: str) -> None:
    conf = Path("/proc/sys/net")
    for path, value in (
        (conf / "ipv4/conf" / iface / "route_localnet", "1"),
        (conf / "ipv4/conf" / iface / "forwarding", "1"),
        (conf / "ipv6/conf" / iface / "disable_ipv6", "1"),
    ):
        with contextlib.suppress(FileNotFoundError):  # no IPv6 in this kernel
            path.write_text(value)


async def _ip(lines: list[str], link: NodeLink) -> None:
    await _run([tool("ip"), "-batch", "-"], "\n".join(lines) + "\n", link)


async def _run(
    argv: list[str], stdin: str | None, link: NodeLink | None, *, check: bool = True
) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate(stdin.encode() if stdin is not None else None)
    if check and proc.returncode != 0:
        where = f" for {link.address} ({link.netns})" if link is not None else ""
        raise NetnsError(f"could not make the node's network{where}: {out.decode().strip()}")
