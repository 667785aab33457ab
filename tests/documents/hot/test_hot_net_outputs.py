"""`get_attr` of a port's fixed IP, a floating IP's address and a balancer's VIP in a HOT
template's outputs (and the native `network_address` form they are stored as): named in the
cluster's networking, evaluated from it, pending while the cloud has not said."""

from __future__ import annotations

import json

import pytest
import yaml

from shoal.documents import load_cluster
from shoal.documents.export import to_document
from shoal.documents.hot import read_body
from shoal.model import InvalidDocument, Inventory
from shoal.model.catalogs import default_inventory
from shoal.model.outputs import NetAttr, NetworkFact, OutputStatus
from shoal.model.software import LiteralInput, SoftwareSpec
from shoal.planning.outputs import evaluate
from tests.documents.hot.test_hot_networks import TEMPLATE

OUTPUTS = """
outputs:
  web_ip: {value: {get_attr: [web_port, fixed_ips, 0, ip_address]}}
  db_ip: {value: {get_attr: [db_port, fixed_ips, 0, ip_address]}}
  vip: {value: {get_attr: [lb, vip_address]}}
  url:
    value:
      str_replace:
        template: http://HOST:80/
        params: {HOST: {get_attr: [lb, vip_address]}}
  public: {value: {get_attr: [fip, floating_ip_address]}}
"""


def test_network_addresses_in_outputs_are_served_from_the_networking(
    inventory: Inventory,
) -> None:
    spec = load_cluster(TEMPLATE + OUTPUTS, inventory)
    values = {o.name: o.value for o in spec.outputs}
    assert values["web_ip"] == NetworkFact(NetAttr.PORT_ADDRESS, "web_port")
    assert values["vip"] == NetworkFact(NetAttr.VIP_ADDRESS, "lb")
    assert values["public"] == NetworkFact(NetAttr.FLOATING_IP_ADDRESS, "fip")
    got = {r.name: r for r in evaluate(spec.outputs, SoftwareSpec(), [], [], spec.networking)}
    assert (got["web_ip"].status, got["web_ip"].value) == (OutputStatus.READY, "10.50.0.10")
    assert got["vip"].value == "10.50.0.100"
    assert got["url"].value == "http://10.50.0.100:80/"
    # Addresses the cloud picks are not known from the document: pending, with the reason.
    for name, what in (("db_ip", "port db_port"), ("public", "floating IP fip")):
        assert got[name].status is OutputStatus.PENDING
        assert got[name].reason == f"the address of {what} is assigned by the cloud"
    # Stored as a native document, the outputs come back the same.
    assert load_cluster(json.dumps(to_document(spec)), inventory) == spec


def test_an_attribute_of_a_port_the_cluster_does_not_own_is_a_notice_not_an_output(
    inventory: Inventory,
) -> None:
    extra = TEMPLATE.replace(
        "  db:\n",
        "  other_port:\n    type: OS::Neutron::Port\n    properties: {network: existing}\n  db:\n",
    )
    spec = load_cluster(
        extra + OUTPUTS + "  other: {value: {get_attr: [other_port, fixed_ips, 0, ip_address]}}\n",
        inventory,
    )
    assert "other" not in {o.name for o in spec.outputs}
    assert "web_ip" in {o.name for o in spec.outputs}


@pytest.mark.parametrize(
    ("form", "where", "words"),
    [
        ({"network_address": "nope", "of": "port"}, "/outputs/a/value/network_address", "nope"),
        ({"network_address": "web_port", "of": "router"}, "/outputs/a/value/of", "router"),
    ],
)
def test_a_native_network_address_names_the_clusters_own(
    inventory: Inventory, form: dict[str, str], where: str, words: str
) -> None:
    spec = load_cluster(TEMPLATE, inventory)
    document = to_document(spec)
    document["outputs"] = {
        "a": {"value": form},
        "b": {"value": {"network_address": "gone", "of": "load_balancer"}},
    }
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(json.dumps(document), inventory)
    problems = {p.path: p.message for p in caught.value.problems}
    assert words in problems[where], problems
    assert "gone" in problems["/outputs/b/value/network_address"]  # all problems at once


DEPLOYMENT = """
  cfg:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "echo $vip", inputs: [{name: vip}, {name: me}]}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: cfg}
      server: {get_resource: db}
      input_values:
        vip: {get_attr: [lb, vip_address]}
        me: {get_attr: [web_port, fixed_ips, 0, ip_address]}
"""


def test_a_deployment_takes_the_addresses_the_template_gives(inventory: Inventory) -> None:
    spec = load_cluster(TEMPLATE + DEPLOYMENT, inventory)
    d = spec.software.deployment("dep")
    assert d is not None
    assert dict(d.inputs) == {
        "vip": LiteralInput("10.50.0.100"),
        "me": LiteralInput("10.50.0.10"),
    }


def test_an_address_the_cloud_assigns_is_a_deployment_input_that_waits_for_it(
    inventory: Inventory,
) -> None:
    """Mapped as the `NetworkFact`: the deployment waits until the engine recorded the
    address (tests/networks/test_deploy_addresses.py), no notice."""
    text = TEMPLATE + DEPLOYMENT.replace("[web_port, fixed", "[db_port, fixed")
    result = read_body(yaml.safe_load(text), default_inventory())
    assert [u for u in result.unsupported if "dep" in u.path] == []
    spec = load_cluster(text, inventory)
    d = spec.software.deployment("dep")
    assert d is not None
    assert dict(d.inputs) == {
        "vip": LiteralInput("10.50.0.100"),
        "me": NetworkFact(NetAttr.PORT_ADDRESS, "db_port"),
    }
