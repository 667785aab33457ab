"""Senlin's `os.nova.server` profile property `security_groups` (issue 26) reaches the model
and the node row's profile, which is what the openstack provider boots from."""

from __future__ import annotations

import pytest
import yaml

from shoal.documents import load_cluster
from shoal.engine.profiles import profile_from_row, profile_row
from shoal.model import InvalidDocument
from shoal.model.catalogs import default_inventory
from shoal.model.profile import ServerProfile
from shoal.service.senlin.specs import NOVA_SERVER, to_native


def test_a_senlin_profiles_security_groups_reach_the_server_profile_and_its_row() -> None:
    native = to_native(
        NOVA_SERVER,
        {
            "flavor": "m1.small",
            "image": "cirros",
            "networks": [{"network": "private"}],
            "security_groups": ["web", "ssh"],
        },
    )
    doc = {"name": "sg", "node_groups": [{"name": "web", "profile": native, "count": 1}]}
    inventory = default_inventory()
    spec = load_cluster(yaml.safe_dump(doc), inventory)
    profile = spec.node_groups[0].parts[0].profile
    assert isinstance(profile, ServerProfile)
    assert (profile.networks, profile.security_groups) == (("private",), ("web", "ssh"))
    again = profile_from_row(profile_row(profile), inventory)
    assert isinstance(again, ServerProfile) and again.security_groups == ("web", "ssh")


def test_a_floating_network_reaches_the_server_profile_its_row_and_is_checked() -> None:
    """Senlin's `floating_network` is the native profile's `floating_networks` (network ->
    external network), kept on the node row the openstack provider boots from; a network the
    profile does not attach, or a bad name, is refused with its pointer, all at once."""
    native = to_native(
        NOVA_SERVER,
        {
            "flavor": "m1.small",
            "image": "cirros",
            "networks": [{"network": "private", "floating_network": "public"}],
        },
    )
    assert native["floating_networks"] == {"private": "public"}
    doc = {"name": "fip", "node_groups": [{"name": "web", "profile": native, "count": 2}]}
    inventory = default_inventory()
    profile = load_cluster(yaml.safe_dump(doc), inventory).node_groups[0].parts[0].profile
    assert isinstance(profile, ServerProfile)
    assert profile.floating_networks == (("private", "public"),)
    again = profile_from_row(profile_row(profile), inventory)
    assert isinstance(again, ServerProfile) and again == profile
    native["floating_networks"] = {"elsewhere": "public", "private": "no such!"}
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(yaml.safe_dump(doc), inventory)
    where = "/node_groups/0/profile/floating_networks"
    assert {p.path for p in caught.value.problems} == {f"{where}/elsewhere", f"{where}/private"}
