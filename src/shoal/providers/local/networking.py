"""The local provider's `NetworkDriver`: nftables for security groups, HAProxy for balancers.

Everything made for a cluster is listed on disk under `home/networking/<cluster>/` (the
balancers' configs, pids and stats sockets, their loopback addresses in `vips.json`) and in one
nftables table named after the provider's home and the cluster, so a new provider on the same
home finds it again and `remove` leaves nothing behind. Balancer addresses are 127.253.X.Y,
outside the 127.Z.H.N of servers (zones and hosts are numbered from 1 and far below 253).

Addresses a document leaves to the cloud are the ones that reach the thing here
(`addresses`): a named port's is its server's own loopback address (every local server is
reached there, whatever network the port is on), a floating IP's is its server's too (a public
alias of the server, which on one machine is the server's address), a balancer's VIP is its
HAProxy's 127.253.X.Y. So a deployment or an output taking one gets an address it can connect
to, not a logical one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from shoal.files import private_dir, write_private
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.providers.local import balancer, netfilter
from shoal.providers.local.isolation import NodeNetworks, home_tag
from shoal.providers.networking import BalancerState, ClusterNetworks

VIP_OCTET = 253


class LocalNetworking:
    def __init__(self, home: Path, search: str | None = None) -> None:
        """`search`: where to look for haproxy and nft (PATH-style); None: where the system
        keeps them (a test gives a directory without them)."""
        self.search = search
        self.root = Path(home) / "networking"
        self.tag = home_tag(home)
        self.nodes: NodeNetworks | None = None
        """The nodes' own networks, whose filter lets a cluster's nodes reach its balancers
        (isolation.py): told when they change."""

    def vips_of(self, cluster_id: str) -> list[str]:
        """The addresses given to the cluster's balancers so far (read only)."""
        try:
            known: dict[str, str] = json.loads((self._dir(cluster_id) / "vips.json").read_text())
        except (OSError, ValueError):
            return []
        return sorted(known.values())

    async def _nodes_changed(self) -> None:
        if self.nodes is not None:
            await self.nodes.sync()

    def _dir(self, cluster_id: str) -> Path:
        return self.root / cluster_id

    def table(self, cluster_id: str) -> str:
        return netfilter.table_name(self.tag, cluster_id)

    def vips(self, cluster: ClusterNetworks) -> dict[str, str]:
        """Balancer name -> its loopback address, kept stable once given."""
        path = self._dir(cluster.cluster_id) / "vips.json"
        try:
            known: dict[str, str] = json.loads(path.read_text())
        except (OSError, ValueError):
            known = {}
        wanted = {lb.name for lb in cluster.spec.load_balancers}
        vips = {k: v for k, v in known.items() if k in wanted}
        taken = set(self._all_vips()) | set(vips.values())
        for lb in cluster.spec.load_balancers:
            if lb.name in vips:
                continue
            seed = hashlib.sha256(f"{self.tag}/{cluster.cluster_id}/{lb.name}".encode()).digest()
            n = int.from_bytes(seed[:4], "big")
            for step in range(253 * 253):
                x = (n + step) % (253 * 253)
                address = f"127.{VIP_OCTET}.{1 + x // 253}.{2 + x % 253}"
                if address not in taken:
                    break
            vips[lb.name] = address
            taken.add(address)
        if vips != known:
            private_dir(path.parent)
            write_private(path, json.dumps(vips, sort_keys=True))
        return vips

    def _all_vips(self) -> list[str]:
        found: list[str] = []
        if not self.root.is_dir():
            return found
        for f in self.root.glob("*/vips.json"):
            try:
                found.extend(json.loads(f.read_text()).values())
            except (OSError, ValueError):
                continue
        return found

    async def apply(self, cluster: ClusterNetworks) -> None:
        spec = cluster.spec
        if spec.empty:
            await self.remove(cluster.cluster_id)
            return
        # One clear message naming the package before anything is made.
        if spec.load_balancers:
            balancer.haproxy(self.search)
        if netfilter.protected(cluster):
            netfilter.need(self.search)
        directory = self._dir(cluster.cluster_id)
        private_dir(self.root)
        private_dir(directory)
        before = self.vips_of(cluster.cluster_id)
        vips = self.vips(cluster)
        table = self.table(cluster.cluster_id)
        if netfilter.protected(cluster):
            script = netfilter.render(table, cluster, vips)
            applied = directory / "filter.nft"
            current = applied.read_text() if applied.exists() else None
            if current != script or table not in await netfilter.tables("shoal_"):
                await netfilter.apply(table, script)
                write_private(applied, script)
        else:
            applied = directory / "filter.nft"
            try:
                await netfilter.delete(table)
            except netfilter.NftError:
                if applied.exists():
                    raise
                # Nothing was ever loaded for it: an nft that may not list tables (no
                # CAP_NET_ADMIN) must not fail a cluster that needs no filter (its ports'
                # addresses are recorded after this apply).
            applied.unlink(missing_ok=True)
        wanted = {lb.name for lb in spec.load_balancers}
        for lb in spec.load_balancers:
            b = balancer.Balancer(directory, lb.name)
            await b.ensure(balancer.render(lb, cluster, vips[lb.name], b.socket))
        for cfg in directory.glob("lb-*.cfg"):
            name = cfg.name[3:-4]
            if name not in wanted:
                await balancer.Balancer(directory, name).stop()
        if set(vips.values()) != set(before):
            await self._nodes_changed()

    async def remove(self, cluster_id: str) -> None:
        directory = self._dir(cluster_id)
        if directory.is_dir():
            for cfg in directory.glob("lb-*.cfg"):
                await balancer.Balancer(directory, cfg.name[3:-4]).stop()
        await netfilter.delete(self.table(cluster_id))
        had_vips = bool(self.vips_of(cluster_id))
        shutil.rmtree(directory, ignore_errors=True)
        if had_vips:
            await self._nodes_changed()

    async def clusters(self) -> set[str]:
        """Clusters with something made: their directory is written before anything else and
        removed after everything else, so it is the list."""
        if not self.root.is_dir():
            return set()
        return {d.name for d in self.root.iterdir() if d.is_dir()}

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        """The cluster's balancers as they serve now, members' health from HAProxy."""
        directory = self._dir(cluster.cluster_id)
        vips = self.vips(cluster) if directory.is_dir() else {}
        out: list[BalancerState] = []
        for lb in cluster.spec.load_balancers:
            b = balancer.Balancer(directory, lb.name)
            out.append(await b.state(lb, cluster, vips.get(lb.name, "")))
        return tuple(out)

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        """A named port's address for its first server (by name, as on openstack), a floating
        IP's once its server exists, a VIP once its balancer was given its address."""
        spec = cluster.spec
        out: dict[NetworkFact, str] = {}
        for p in spec.ports:
            servers = cluster.members(p.member.target, p.member.part)
            if p.name is not None and p.fixed_ip is None and servers:
                out[NetworkFact(NetAttr.PORT_ADDRESS, p.name)] = servers[0].address
        where = {s.name: s.address for s in cluster.servers}
        for f in spec.floating_ips:
            if f.address is None and f.server in where:
                out[NetworkFact(NetAttr.FLOATING_IP_ADDRESS, f.name)] = where[f.server]
        if any(lb.vip_address is None for lb in spec.load_balancers):
            vips = self.vips(cluster) if self._dir(cluster.cluster_id).is_dir() else {}
            for lb in spec.load_balancers:
                if lb.vip_address is None and lb.name in vips:
                    out[NetworkFact(NetAttr.VIP_ADDRESS, lb.name)] = vips[lb.name]
        return out
