"""A node run's values built without their frozen init (issue 23): equal to the ones built
normally, and as immutable."""

from __future__ import annotations

import dataclasses

import pytest

from shoal.engine.contracts import NodeInputs, NodeOutputs, NodeUpdate
from shoal.engine.nodework import _server_request
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS
from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.profile import ServerProfile
from shoal.providers.base import ServerGroupHint, ServerRequest


@pytest.mark.parametrize(
    "row",
    [
        {
            "node": "web-1",
            "cluster_name": "c",
            "kind": "server",
            "host": "h1",
            "zone": "az1",
            "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
        },
        {
            "node": "data-2",
            "kind": NodeKind.VOLUME,
            "provider_id": "v-9",
            "server_group": {"grouping": "g", "policy": "anti-affinity", "max_per_host": 2},
            "metadata_url": "http://x/md",
        },
        {},
    ],
)
def test_node_inputs_from_json_is_a_plain_frozen_node_inputs(row: dict[str, object]) -> None:
    got = NodeInputs.from_json(row)
    pid, url, hint = row.get("provider_id"), row.get("metadata_url"), row.get("server_group")
    expected = NodeInputs(
        node=str(row.get("node", "")),
        cluster_name=str(row.get("cluster_name") or ""),
        kind=NodeKind(row.get("kind", "server")),
        host=row.get("host"),  # type: ignore[arg-type]
        zone=row.get("zone"),  # type: ignore[arg-type]
        profile=dict(row.get("profile") or {}),  # type: ignore[call-overload]
        provider_id=str(pid) if pid else None,
        server_group=ServerGroupHint("g", "anti-affinity", 2) if hint else None,
        existing="provider_id" in row,
        metadata_url=str(url) if url else None,
    )
    assert type(got) is NodeInputs and got == expected and repr(got) == repr(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.host = "h2"  # type: ignore[misc]
    assert got.with_server_group(None).server_group is None


def test_a_running_update_is_a_plain_frozen_node_update() -> None:
    got = NodeUpdate.running("srv-1", "10.1.1.2")
    expected = NodeUpdate(
        status=NodeStatus.ACTIVE,
        status_reason="",
        provider_id="srv-1",
        address="10.1.1.2",
        health="UNKNOWN",
        health_reason="",
        deleted_at=None,
        clear_address=True,
    )
    assert type(got) is NodeUpdate and got == expected and repr(got) == repr(expected)
    assert got.change("n1", 5.0) == expected.change("n1", 5.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.address = None  # type: ignore[misc]


def test_a_create_request_is_a_plain_frozen_server_request() -> None:
    profile = ServerProfile(CLASSIC_FLAVORS[0], CIRROS)
    hint = ServerGroupHint("g", "affinity")
    got = _server_request("k", "c-web-1", "c", "h1", "az1", profile, hint, True, None, None)
    expected = ServerRequest(
        "k", "c-web-1", "c", "h1", "az1", profile, hint, fresh=True, metadata_url=None
    )
    assert type(got) is ServerRequest and got == expected and repr(got) == repr(expected)
    assert got.ports == () and got.networking is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.fresh = False  # type: ignore[misc]
    assert dataclasses.replace(got, fresh=False) == dataclasses.replace(expected, fresh=False)


def test_made_outputs_are_plain_frozen_node_outputs() -> None:
    got = NodeOutputs.made("srv-1", None)
    expected = NodeOutputs(provider_id="srv-1", address=None, server=None)
    assert type(got) is NodeOutputs and got == expected and repr(got) == repr(expected)
    assert got.to_json() == {"provider_id": "srv-1", "address": None}
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.server = "s"  # type: ignore[misc]
