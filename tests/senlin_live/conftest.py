"""The live cloud for issue 28's real-Senlin tests, started once per test session: the project's
Keystone (tests/keystone), the Nova harness (tests/nova) serving its images Glance-shaped and
registered in Keystone's catalog as `compute` and `image`, real Senlin 16 (tests/senlin_live/
live.py) and a Shoal in Keystone mode whose provider is that same Nova."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.keystone.conftest import Keystone, keystone  # noqa: F401 - the session fixture
from tests.nova.conftest import Peer, start_nova
from tests.senlin_live.cloud_ops import Nova
from tests.senlin_live.live import LiveSenlin, ShoalOnNova, register_service
from tests.support.server import free_port


@dataclass
class LiveCloud:
    keystone: Keystone
    nova_peer: Peer
    nova: Nova
    senlin: LiveSenlin
    shoal: ShoalOnNova


@pytest.fixture(scope="session")
def live(keystone: Keystone, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("senlin-live")
    glance_port = free_port()
    peer = start_nova(tmp, hosts=4, zones=2, extra=["--glance-port", str(glance_port)])
    nova = Nova(peer.url)
    senlin = LiveSenlin(tmp / "senlin", keystone)
    shoal: ShoalOnNova | None = None
    try:
        register_service(keystone, "compute", peer.url)
        register_service(keystone, "image", f"http://127.0.0.1:{glance_port}")
        senlin.setup()
        senlin.start()
        shoal = ShoalOnNova(tmp / "shoal-home", keystone, peer.url)
        shoal.start()
        yield LiveCloud(keystone, peer, nova, senlin, shoal)
    finally:
        if shoal is not None:
            shoal.stop()
        senlin.stop()
        senlin.drop()
        nova.close()
        peer.stop()
