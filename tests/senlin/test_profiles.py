"""Profile types and profiles: Senlin's spec stored faithfully, checked against the catalog."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from shoal.clock import ManualClock
from tests.databases import database_url
from tests.senlin.conftest import NOVA_SPEC, Senlin, serving
from tests.senlin.test_errors import senlin_error


async def test_profile_types_list_and_show(senlin: Senlin) -> None:
    listed = (await senlin.ok("GET", "/profile-types"))["profile_types"]
    assert [t["name"] for t in listed] == [
        "os.nova.server-1.0",
        "os.heat.stack-1.0",
        "container.dockerinc.docker-1.0",
    ], "Shoal's own types are found by name but not listed (Senlin's suite lists only its own)"
    bare = (await senlin.ok("GET", "/profile-types", version="1.5"))["profile_types"]
    assert (bare[0]["name"], bare[0]["version"]) == ("os.nova.server", "1.0")
    assert (await senlin.ok("GET", "/profile-types/shoal.server-1.0"))["profile_type"]
    shown = (await senlin.ok("GET", "/profile-types/os.nova.server-1.0"))["profile_type"]
    assert shown["schema"]["flavor"]["required"] is True
    assert shown["schema"]["availability_zone"]["type"] == "String"
    ops = await senlin.ok("GET", "/profile-types/os.nova.server-1.0/ops", version="1.4")
    assert set(ops["operations"]) >= {"reboot", "rebuild", "change_password"}


async def test_create_show_list_update_delete(senlin: Senlin) -> None:
    body = {"profile": {"name": "web", "spec": NOVA_SPEC, "metadata": {"owner": "ops"}}}
    created = (await senlin.ok("POST", "/profiles", 201, json=body))["profile"]
    assert created["type"] == "os.nova.server-1.0"
    assert created["spec"] == NOVA_SPEC, "show returns the spec as it was given"
    assert created["metadata"] == {"owner": "ops"}
    assert created["updated_at"] is None

    for ref in (created["id"], "web"):
        shown = (await senlin.ok("GET", f"/profiles/{ref}"))["profile"]
        assert shown == created
    listed = (await senlin.ok("GET", "/profiles"))["profiles"]
    assert [p["id"] for p in listed] == [created["id"]]
    assert (await senlin.ok("GET", "/profiles?type=shoal.server-1.0"))["profiles"] == []

    patch = {"profile": {"name": "web-v1", "metadata": {"owner": "dev"}}}
    updated = (await senlin.ok("PATCH", f"/profiles/{created['id']}", json=patch))["profile"]
    assert (updated["name"], updated["metadata"]) == ("web-v1", {"owner": "dev"})
    assert updated["spec"] == NOVA_SPEC
    assert updated["updated_at"] is not None

    refused = await senlin.call(
        "PATCH", f"/profiles/{created['id']}", json={"profile": {"spec": NOVA_SPEC}}
    )
    assert (
        "Additional properties are not allowed ('spec' was unexpected)"
        in (senlin_error(refused, 400)["message"])
    )

    await senlin.ok("DELETE", f"/profiles/{created['id']}", 204)
    senlin_error(await senlin.call("GET", f"/profiles/{created['id']}"), 404)


async def test_specs_are_checked_against_the_catalog_when_a_cluster_is_made(
    senlin: Senlin,
) -> None:
    """As in Senlin, a profile is stored without looking its flavor and image up; a cluster
    built from it is refused, naming the profile's fields."""
    bad = copy.deepcopy(NOVA_SPEC)
    bad["properties"]["flavor"] = "m1.huge"
    bad["properties"]["availability_zone"] = "az9"
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "x", "spec": bad}})
    assert r.status_code == 201, r.text
    body = {"cluster": {"name": "c", "profile_id": "x", "desired_capacity": 1}}
    error = senlin_error(await senlin.call("POST", "/clusters", json=body), 400)
    assert "flavor" in error["message"], error

    odd = copy.deepcopy(NOVA_SPEC)
    odd["properties"]["flavour"] = "m1.tiny"
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "y", "spec": odd}})
    assert senlin_error(r, 400)["message"] == (
        "Failed in creating profile y: Unrecognizable spec item 'flavour'"
    )

    unknown = {"type": "os.bogus.stack", "version": "1.0", "properties": {}}
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "z", "spec": unknown}})
    assert senlin_error(r, 404)["message"] == (
        "The profile_type 'os.bogus.stack-1.0' could not be found."
    )
    assert [p["name"] for p in (await senlin.ok("GET", "/profiles"))["profiles"]] == ["x"]


async def test_flavors_and_images_by_id_work_too(senlin: Senlin) -> None:
    spec = copy.deepcopy(NOVA_SPEC)
    spec["properties"]["flavor"] = "1"
    spec["properties"]["image"] = "8a1f4e6c-0c8b-4b7e-9d3a-2f0c6e1d5a10"
    await senlin.profile("by-id", spec)


async def test_validate_checks_without_storing(senlin: Senlin) -> None:
    body = {"profile": {"spec": NOVA_SPEC}}
    shown = (await senlin.ok("POST", "/profiles/validate", json=body))["profile"]
    assert shown["type"] == "os.nova.server-1.0"
    assert shown["id"] is None
    assert (await senlin.ok("GET", "/profiles"))["profiles"] == []
    bad = {"profile": {"spec": {"type": "os.nova.server", "version": "1.0", "properties": {}}}}
    senlin_error(await senlin.call("POST", "/profiles/validate", json=bad), 400, "InvalidSpec")


async def test_shoal_profile_types(senlin: Senlin) -> None:
    volume = {"type": "shoal.volume", "version": "1.0", "properties": {"size": 10}}
    created = (
        await senlin.ok("POST", "/profiles", 201, json={"profile": {"name": "v", "spec": volume}})
    )["profile"]
    assert created["type"] == "shoal.volume-1.0"


async def test_native_profiles_show_as_shoal_types(senlin: Senlin) -> None:
    native = {"name": "native-web", "type": "server", "flavor": "m1.small", "image": "cirros"}
    r = await senlin.http.post("/v1/profiles", json=native, headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 201, r.text
    shown = (await senlin.ok("GET", "/profiles/native-web"))["profile"]
    assert shown["type"] == "shoal.server-1.0"
    assert shown["spec"] == {
        "type": "shoal.server",
        "version": "1.0",
        "properties": {"flavor": "m1.small", "image": "cirros"},
    }


async def test_a_profile_in_use_cannot_be_deleted(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    r = await senlin.call("DELETE", f"/profiles/{cluster['profile_id']}")
    senlin_error(r, 409, "ResourceInUse")


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
async def test_the_list_filters_sorts_and_pages_in_sql(db: str, tmp_path: Path) -> None:
    """Façade and native profiles in one list, by the names and types Senlin shows, on SQLite
    and PostgreSQL: a repeated Senlin name (stored under another), a native volume, sort keys
    with NULLs (`updated_at` of the never-updated), markers and limits. A manual clock orders
    the creations."""
    clock = ManualClock()
    with database_url(db, tmp_path) as url:
        async with serving(tmp_path / "home", url, clock=clock) as senlin:
            await _list_in_sql(senlin, clock)


async def _list_in_sql(senlin: Senlin, clock: ManualClock) -> None:
    volume = {"type": "shoal.volume", "version": "1.0", "properties": {"size": 10}}
    made = []
    for name, spec in (("b", NOVA_SPEC), ("a", NOVA_SPEC), ("b", NOVA_SPEC), ("c", volume)):
        body = {"profile": {"name": name, "spec": spec}}
        made.append((await senlin.ok("POST", "/profiles", 201, json=body))["profile"])
        clock.advance(1.0)
    native = {"name": "n-vol", "type": "volume", "size": 5}
    clock.advance(1.0)
    r = await senlin.http.post("/v1/profiles", json=native, headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 201, r.text
    await senlin.ok("PATCH", f"/profiles/{made[1]['id']}", json={"profile": {"name": "a2"}})

    async def ids(query: str) -> list[str]:
        listed = (await senlin.ok("GET", f"/profiles?{query}"))["profiles"]
        return [p["name"] for p in listed]

    assert await ids("") == ["b", "a2", "b", "c", "n-vol"], "by created_at by default"
    assert await ids("name=b") == ["b", "b"], "the Senlin name, though stored under another"
    assert await ids("type=shoal.volume-1.0") == ["c", "n-vol"], "façade and native alike"
    assert await ids("type=os.nova.server-1.0&sort=name:desc") == ["b", "b", "a2"]
    assert await ids("sort=updated_at:desc,name") == ["b", "b", "c", "n-vol", "a2"], "NULLs first"
    first = (await senlin.ok("GET", "/profiles?limit=2"))["profiles"]
    rest = await ids(f"marker={first[-1]['id']}")
    assert [p["name"] for p in first] + rest == ["b", "a2", "b", "c", "n-vol"]
    bad = await senlin.call("GET", "/profiles?marker=8f7e0a3c-5a2b-4a70-9d8e-2d6f6c1f0b11")
    assert "could not be found" in senlin_error(bad, 400)["message"]
