"""Every local node in a network of its own (issue 39): its namespace, and what it may reach.

Ties the namespaces (netns.py) and the home's filter (nodefilter.py) to the provider's records:
a server's record names its namespace and veth, so a restarted Shoal finds them; the filter is
rendered from the records after every change that moves what a node may reach (a node started
or deleted, its agents' URL, its cluster's balancers). Namespaces left by servers that no longer
have a record, and by homes that no longer exist, are removed when a provider starts (`sweep`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from shoal.providers.local import netns, nodefilter
from shoal.providers.local.netns import NodeLink
from shoal.providers.local.records import RecordStore, ServerRecord

log = logging.getLogger("shoal.local.isolation")

Vips = Callable[[str], Sequence[str]]
"""A cluster id -> the addresses of its balancers (networking.py)."""


def home_tag(home: Path) -> str:
    """Eight hex digits naming a provider's home in the machine's shared tables and names."""
    return hashlib.sha256(str(Path(home).resolve()).encode()).hexdigest()[:8]


class NodeNetworks:
    def __init__(self, home: Path, records: RecordStore, vips: Vips) -> None:
        self.home = Path(home)
        self.tag = home_tag(home)
        self.table = nodefilter.table_name(self.tag)
        self._records = records
        self._vips = vips
        self._lock_file = self.home / "networking" / ".nodes.lock"
        netns.register_home(self.tag, self.home)

    def link(self, record: ServerRecord) -> NodeLink | None:
        """The server's namespace, once it was given one."""
        if record.netns is None or record.veth is None or record.mac is None:
            return None
        return NodeLink(record.netns, record.veth, record.mac, record.address)

    def assign(self, record: ServerRecord) -> NodeLink:
        """Give the server its namespace's names (kept in its record from then on)."""
        found = self.link(record)
        if found is not None:
            return found
        made = NodeLink.of(self.tag, record.id, record.address)
        record.netns, record.veth, record.mac = made.netns, made.iface, made.mac
        return made

    async def ensure(self, record: ServerRecord) -> NodeLink:
        """The server's namespace, made if it is not there (a first start, or a machine
        restarted since). Raises `netns.NetnsError`."""
        link = self.assign(record)
        if not link.exists():
            await netns.make(link)
        return link

    async def release(self, record: ServerRecord) -> None:
        link = self.link(record)
        if link is not None:
            await netns.remove(link)

    async def sync(self) -> None:
        """Make the home's filter what the records say (none when no node is isolated)."""
        await asyncio.to_thread(self._sync)

    def _sync(self) -> None:
        nodefilter.apply(self._script, self._lock_file)

    def _script(self) -> str:
        nodes = [
            nodefilter.FilteredNode(
                r.veth, r.address, r.cluster, nodefilter.agents_endpoint(r.metadata_url)
            )
            for r in self._records.all()
            if isinstance(r, ServerRecord) and r.veth is not None
        ]
        if not nodes:
            return nodefilter.delete_script(self.table)
        vips = {c: self._vips(c) for c in {n.cluster for n in nodes}}
        return nodefilter.render(self.table, nodes, vips, f"shoal nodes of {self.home}")

    def sweep(self) -> None:
        """This home's namespaces no record names any more, and every namespace and filter of
        homes that no longer exist: removed (blocking: once, when the provider starts)."""
        self.sweep_home()
        sweep_homes()

    def sweep_home(self) -> None:
        """Remove this home's namespaces that no server record names any more (blocking: at
        start)."""
        named = {r.netns for r in self._records.all() if isinstance(r, ServerRecord) and r.netns}
        for name in netns.names(self.tag):
            if name not in named:
                netns.remove_named(name)


def sweep_homes() -> None:
    """Remove every namespace and filter of homes that no longer exist (a test's temporary
    home deleted with its nodes still recorded). Blocking."""
    for tag in netns.orphaned_tags():
        log.info("removing the node networks of a deleted Shoal home (%s)", tag)
        remove_tag(tag)


def remove_home(home: Path) -> None:
    """Remove every namespace and the filter of a provider's home whose nodes are gone (what
    a test's teardown calls after killing them). Blocking."""
    remove_tag(home_tag(home))


def remove_tag(tag: str) -> None:
    for name in netns.names(tag):
        netns.remove_named(name)
    try:
        nodefilter.delete(nodefilter.table_name(tag))
    except nodefilter.NodeFilterError as e:
        log.warning("%s", e)
        return
    netns.forget_home(tag)
