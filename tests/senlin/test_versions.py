"""Version discovery and microversions: what clients do before anything else."""

from __future__ import annotations

from tests.senlin.conftest import Senlin


async def test_the_root_lists_versions_without_a_token(senlin: Senlin) -> None:
    r = await senlin.http.get("/clustering/")
    assert r.status_code == 300
    (v,) = r.json()["versions"]
    assert v["id"] == "1.0"
    assert v["status"] == "CURRENT"
    assert (v["min_version"], v["max_version"]) == ("1.0", "1.14")
    assert {"rel": "self", "href": "http://shoal/clustering/v1/"} in v["links"]
    assert v["media-types"][0]["type"] == "application/vnd.openstack.clustering-v1+json"


async def test_v1_is_the_version_itself_without_a_token(senlin: Senlin) -> None:
    for path in ("/clustering/v1", "/clustering/v1/"):
        r = await senlin.http.get(path)
        assert r.status_code == 200, r.text
        assert r.json()["version"]["max_version"] == "1.14"


async def test_no_header_means_1_0_and_is_echoed(senlin: Senlin) -> None:
    r = await senlin.call("GET", "/profile-types")
    assert r.status_code == 200
    assert r.headers["OpenStack-API-Version"] == "clustering 1.0"
    assert "OpenStack-API-Version" in r.headers["Vary"]
    assert r.json()["profile_types"][0] == {"name": "os.nova.server-1.0"}


async def test_a_microversion_is_honoured_and_echoed(senlin: Senlin) -> None:
    r = await senlin.call("GET", "/profile-types", version="1.5")
    assert r.headers["OpenStack-API-Version"] == "clustering 1.5"
    first = r.json()["profile_types"][0]
    assert first["version"] == "1.0"
    assert first["support_status"]["1.0"][0]["status"] == "SUPPORTED"


async def test_latest_is_the_maximum(senlin: Senlin) -> None:
    r = await senlin.call("GET", "/build-info", version="latest")
    assert r.status_code == 200
    assert r.headers["OpenStack-API-Version"] == "clustering 1.14"


async def test_other_services_in_the_header_are_ignored(senlin: Senlin) -> None:
    r = await senlin.call(
        "GET", "/build-info", headers={"OpenStack-API-Version": "compute 2.90, clustering 1.7"}
    )
    assert r.headers["OpenStack-API-Version"] == "clustering 1.7"


async def test_an_unsupported_version_is_406_in_senlins_shape(senlin: Senlin) -> None:
    r = await senlin.call("GET", "/clusters", version="1.15")
    assert r.status_code == 406
    body = r.json()
    assert body["code"] == 406
    assert body["title"] == "Not Acceptable"
    assert body["error"]["type"] == "InvalidGlobalAPIVersion"
    assert "Minimum is '1.0' and maximum is '1.14'" in body["error"]["message"]
    r = await senlin.call("GET", "/clusters", version="2.0")
    assert r.status_code == 406


async def test_a_malformed_version_is_400(senlin: Senlin) -> None:
    r = await senlin.call("GET", "/clusters", version="one")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "InvalidAPIVersionString"


async def test_build_info(senlin: Senlin) -> None:
    info = (await senlin.ok("GET", "/build-info"))["build_info"]
    assert info["api"]["revision"].startswith("shoal-")


async def test_the_root_without_a_slash_redirects(senlin: Senlin) -> None:
    r = await senlin.http.get("/clustering", follow_redirects=True)
    assert r.status_code == 300
    assert r.json()["versions"][0]["id"] == "1.0"
