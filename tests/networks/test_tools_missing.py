"""Without Debian's `haproxy` or `nftables`, networking on `local` says which packages to
install, in one message, before anything is made; a cluster without networking needs neither."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from shoal.providers.local.networking import LocalNetworking
from shoal.providers.networking import NetworkToolsMissingError
from tests.networks.support import cluster, networking

pytestmark = pytest.mark.asyncio

DOC = """
name: shop
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks: [{name: app, cidr: 10.10.0.0/24}]
"""
LB = """
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, pool: web}]
    pools: [{name: web, members: web, port: 8080}]
"""
SG = """
security_groups: [{name: g, rules: [{ports: 80}]}]
ports: [{server: web, network: app, security_groups: [g]}]
"""


async def test_missing_tools_name_their_packages(tmp_path: Path) -> None:
    bare = tmp_path / "bin"  # a machine's programs without haproxy and nft
    bare.mkdir()
    net = LocalNetworking(tmp_path, search=str(bare))
    servers = [("web-1", "web", "127.9.9.2")]
    with pytest.raises(NetworkToolsMissingError) as lb:
        await net.apply(cluster(networking(DOC + LB), servers, uuid.uuid4().hex))
    assert lb.value.packages == ("haproxy",) and "haproxy" in str(lb.value)
    assert not (tmp_path / "networking").exists(), "nothing is made before the check"
    with pytest.raises(NetworkToolsMissingError) as sg:
        await net.apply(cluster(networking(DOC + SG), servers, uuid.uuid4().hex))
    assert sg.value.packages == ("nftables",)
    # networks alone (logical on local) need neither tool
    await net.apply(cluster(networking(DOC), servers, uuid.uuid4().hex))
