"""Shoal in keystone mode against a real Keystone: tenancy from the token's project, admin from
the `admin` role, 401 with a Keystone challenge, openstacksdk with real password auth, and
`shoal keystone register` putting `clustering` into the catalog."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openstack
import pytest
from openstack.connection import Connection

from tests.keystone.conftest import (
    ADMIN_PASSWORD,
    USER_PASSWORD,
    Keystone,
    KeystoneShoal,
    register_clustering,
)
from tests.senlin.conftest import NOVA_SPEC

WAIT_S = 60

CLUSTER = """
name: {name}
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
"""


def h(token: str) -> dict[str, str]:
    return {"X-Auth-Token": token}


def test_no_or_bad_token_is_401_with_a_keystone_challenge(
    keystone: Keystone, shoal: KeystoneShoal
) -> None:
    for headers in ({}, h("not-a-token"), {"Authorization": "Bearer nope"}):
        r = httpx.get(f"{shoal.url}/v1/clusters", headers=headers, timeout=30)
        assert r.status_code == 401, r.text
        assert r.headers["WWW-Authenticate"].startswith("Keystone uri=")
        assert f"127.0.0.1:{keystone.port}" in r.headers["WWW-Authenticate"]
        r = httpx.get(f"{shoal.url}/clustering/v1/clusters", headers=headers, timeout=30)
        assert r.status_code == 401, r.text
        assert r.headers["WWW-Authenticate"].startswith("Keystone uri=")
    assert httpx.get(f"{shoal.url}/healthz", timeout=30).status_code == 200
    assert httpx.get(f"{shoal.url}/clustering/", timeout=30).status_code == 300


def test_the_tokens_project_is_the_tenant_and_admin_sees_all(
    keystone: Keystone, shoal: KeystoneShoal
) -> None:
    alice = keystone.token("alice", USER_PASSWORD, "alpha")
    bob = keystone.token("bob", USER_PASSWORD, "beta")
    admin = keystone.token("admin", ADMIN_PASSWORD, "admin")
    r = httpx.post(
        f"{shoal.url}/v1/clusters",
        content=CLUSTER.replace("{name}", "ks-alpha"),
        headers={**h(alice), "Content-Type": "application/yaml"},
        timeout=30,
    )
    assert r.status_code in (201, 202), r.text

    def names(token: str) -> set[str]:
        got = httpx.get(f"{shoal.url}/v1/clusters", headers=h(token), timeout=30)
        assert got.status_code == 200, got.text
        return {c["name"] for c in _items(got.json())}

    assert "ks-alpha" in names(alice)
    assert "ks-alpha" not in names(bob)
    assert "ks-alpha" in names(admin)
    # the cluster belongs to the Keystone project
    one = httpx.get(f"{shoal.url}/v1/clusters/ks-alpha", headers=h(alice), timeout=30)
    assert one.status_code == 200, one.text
    assert keystone.ids["alpha"] in one.text
    assert (
        httpx.get(f"{shoal.url}/v1/clusters/ks-alpha", headers=h(bob), timeout=30).status_code
        == 404
    )


def _items(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, list):
        return body
    for key in ("clusters", "items", "data"):
        if isinstance(body.get(key), list):
            return list(body[key])
    raise AssertionError(f"no list in {body}")


def _sdk(keystone: Keystone, **extra: Any) -> Connection:
    return openstack.connect(
        auth_type="password",
        auth={
            "auth_url": keystone.url,
            "username": "alice",
            "password": USER_PASSWORD,
            "project_name": "alpha",
            "user_domain_name": "Default",
            "project_domain_name": "Default",
        },
        region_name="RegionOne",
        load_yaml_config=False,
        load_envvars=False,
        **extra,
    )


@pytest.fixture
def sdk(keystone: Keystone, shoal: KeystoneShoal) -> Iterator[Connection]:
    conn = _sdk(keystone, clustering_endpoint_override=f"{shoal.url}/clustering/v1")
    try:
        yield conn
    finally:
        conn.close()


def test_openstacksdk_with_keystone_creates_a_profile_and_cluster(
    sdk: Connection, keystone: Keystone
) -> None:
    c = sdk.clustering
    profile = c.create_profile(name="ks-prof", spec=NOVA_SPEC)
    cluster = c.create_cluster(name="ks-sdk", profile_id=profile.id, desired_capacity=1)
    got = c.wait_for_status(c.get_cluster(cluster.id), "ACTIVE", failures=["ERROR"], wait=WAIT_S)
    assert got.name == "ks-sdk"
    assert got.project_id == keystone.ids["alpha"]
    assert "ks-sdk" in {x.name for x in c.clusters()}


def test_shoal_keystone_register_puts_clustering_in_the_catalog(
    keystone: Keystone, shoal: KeystoneShoal
) -> None:
    endpoint = f"{shoal.url}/clustering"
    for _ in range(2):  # idempotent
        done = register_clustering(keystone, endpoint)
        assert done.returncode == 0, done.stdout + done.stderr
    services = keystone.admin("GET", "/services?type=clustering")["services"]
    assert len(services) == 1
    eps = keystone.admin("GET", f"/endpoints?service_id={services[0]['id']}")["endpoints"]
    assert sorted(e["interface"] for e in eps) == ["admin", "internal", "public"]
    assert {e["url"] for e in eps} == {endpoint}

    conn = _sdk(keystone)  # no override: the endpoint comes from the catalog
    try:
        assert conn.clustering.get_endpoint().startswith(endpoint)
        assert "ks-prof" in {p.name for p in conn.clustering.profiles()}
    finally:
        conn.close()


def test_register_orchestration_and_drive_a_stack_through_the_catalog(
    keystone: Keystone, shoal: KeystoneShoal
) -> None:
    """`--orchestration` puts Heat's API into the catalog; openstacksdk with a real Keystone
    token finds it there (the project id in the URL is the token's) and drives a stack."""
    heat_url = f"{shoal.url}/orchestration/v1/%(project_id)s"
    done = register_clustering(keystone, f"{shoal.url}/clustering", "--orchestration", heat_url)
    assert done.returncode == 0, done.stdout + done.stderr
    services = keystone.admin("GET", "/services?type=orchestration")["services"]
    assert len(services) == 1
    conn = _sdk(keystone)
    try:
        o = conn.orchestration
        assert o.get_endpoint().endswith(f"/orchestration/v1/{keystone.ids['alpha']}")
        template = {
            "heat_template_version": "2016-10-14",
            "resources": {"t": {"type": "OS::Heat::TestResource", "properties": {"value": "k"}}},
            "outputs": {"o": {"value": {"get_attr": ["t", "output"]}}},
        }
        stack = o.create_stack(name="ks-stack", template=template)
        got = o.wait_for_status(
            stack, "CREATE_COMPLETE", failures=["CREATE_FAILED"], interval=0.2, wait=WAIT_S
        )
        assert [x["output_value"] for x in o.get_stack(got.id).outputs] == ["k"]
        o.delete_stack(got)
        o.wait_for_delete(got, interval=0.2, wait=WAIT_S)
    finally:
        conn.close()
