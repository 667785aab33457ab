"""Senlin server profiles' `networks` entries (issue 26), through the façade: the network and
its ports' security groups are honoured, and a floating network gives every member its own
floating IP; a port, fixed IP or existing floating IP, which Shoal's server profile (shared by
every member) cannot express, is refused naming the property (never silently dropped)."""

from __future__ import annotations

import copy
from typing import Any

from tests.senlin.conftest import NOVA_SPEC, Senlin
from tests.senlin.test_errors import senlin_error


def spec(networks: list[dict[str, Any]], **props: Any) -> dict[str, Any]:
    s = copy.deepcopy(NOVA_SPEC)
    s["properties"]["networks"] = networks
    s["properties"].update(props)
    return s


async def test_networks_and_their_ports_groups_reach_the_members(senlin: Senlin) -> None:
    both = [
        {"network": "private", "security_groups": ["web"]},
        {"network": "public", "security_groups": ["web"]},
    ]
    profile = await senlin.profile("net", spec(both))
    body = {"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 1}}
    await senlin.accepted("POST", "/clusters", json=body)
    r = await senlin.http.get("/v1/clusters/c", headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 200, r.text
    (group,) = r.json()["cluster"]["node_groups"]
    assert group["profile"]["networks"] == ["private", "public"]
    assert group["profile"]["security_groups"] == ["web"]
    shown = (await senlin.ok("GET", f"/profiles/{profile}"))["profile"]
    assert shown["spec"]["properties"]["networks"] == both, "the spec is shown as given"


async def test_a_floating_network_gives_every_member_its_own_floating_ip(senlin: Senlin) -> None:
    """Senlin's `floating_network` (one floating IP per server on that network) becomes the
    member profile's `floating_networks`, which the openstack provider makes per server
    (tests/netpeers); the same network given twice with different ones is refused."""
    nets = [{"network": "private", "floating_network": "public"}, {"network": "public"}]
    profile = await senlin.profile("fip", spec(nets))
    body = {"cluster": {"name": "f", "profile_id": profile, "desired_capacity": 2}}
    await senlin.accepted("POST", "/clusters", json=body)
    r = await senlin.http.get("/v1/clusters/f", headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 200, r.text
    (group,) = r.json()["cluster"]["node_groups"]
    assert group["profile"]["networks"] == ["private", "public"]
    assert group["profile"]["floating_networks"] == {"private": "public"}
    twice = [*nets, {"network": "private", "floating_network": "other"}]
    body = {"profile": {"name": "x", "spec": spec(twice)}}
    error = senlin_error(await senlin.call("POST", "/profiles", json=body), 400)
    assert "/spec/properties/networks/2/floating_network" in error["message"]


async def test_what_the_profile_cannot_express_is_refused_naming_it(senlin: Senlin) -> None:
    cases: list[tuple[list[dict[str, Any]], dict[str, Any], list[str]]] = [
        ([{"network": "private", "fixed_ip": "10.0.0.5"}], {}, ["networks/0/fixed_ip"]),
        ([{"port": "p1"}], {}, ["networks/0/port"]),
        # Senlin's own checks, in its words.
        (
            [{"port": "p1", "fixed_ip": "10.0.0.5"}],
            {},
            ["The 'port' property and the 'fixed_ip' property cannot be specified"],
        ),
        ([{"fixed_ip": "10.0.0.5"}], {}, ["One of 'port' and 'network' must be provided"]),
        (
            [{"network": "private", "floating_ip": "192.0.2.9"}],
            {},
            ["Must specify a network to create floating IP", "networks/0/floating_ip"],
        ),
        ([{"network": "private", "vnic": "x"}], {}, ["Unrecognizable spec item 'vnic'"]),
        # One list of groups for every port: differing ones cannot be expressed.
        (
            [
                {"network": "private", "security_groups": ["a"]},
                {"network": "public", "security_groups": ["b"]},
            ],
            {},
            ["networks/0/security_groups", "networks/1/security_groups"],
        ),
        (
            [{"network": "private", "security_groups": ["a"]}],
            {"security_groups": ["b"]},
            ["networks/0/security_groups"],
        ),
    ]
    for networks, props, words in cases:
        body = {"profile": {"name": "x", "spec": spec(networks, **props)}}
        error = senlin_error(await senlin.call("POST", "/profiles", json=body), 400)
        for w in words:
            assert w in error["message"], (networks, error)
    # All problems at once, each with its pointer.
    many = [{"network": "private", "fixed_ip": "10.0.0.5", "floating_network": "public"}]
    body = {"profile": {"name": "x", "spec": spec(many)}}
    error = senlin_error(await senlin.call("POST", "/profiles", json=body), 400)
    assert "/spec/properties/networks/0/fixed_ip" in error["message"]
    assert "/spec/properties/networks/0/floating_network" not in error["message"]
    assert (await senlin.ok("GET", "/profiles"))["profiles"] == [], "nothing stored"
