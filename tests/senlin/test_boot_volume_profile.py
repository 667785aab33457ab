"""A server profile with no `image` whose block-device mapping boots one, as Senlin accepts it
(its schema does not require `image`; real Senlin 16 in tests/senlin_live boots such servers):
the cluster's servers boot that image; a profile with neither is refused as Senlin's words say."""

from __future__ import annotations

import copy

from shoal.model.catalogs import CIRROS
from tests.senlin.conftest import NOVA_SPEC, Senlin


async def test_a_block_device_mapping_names_the_image(senlin: Senlin) -> None:
    shown = (await senlin.ok("GET", "/profile-types/os.nova.server-1.0"))["profile_type"]
    assert shown["schema"]["image"]["required"] is False  # as in Senlin 16
    spec = copy.deepcopy(NOVA_SPEC)
    del spec["properties"]["image"]
    spec["properties"]["block_device_mapping_v2"] = [
        {"uuid": CIRROS.id, "source_type": "image", "destination_type": "local", "boot_index": 0}
    ]
    profile = await senlin.profile("bdm", spec)
    body = {"cluster": {"name": "bdm", "profile_id": profile, "desired_capacity": 1}}
    await senlin.accepted("POST", "/clusters", json=body)
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=bdm"))["nodes"]
    assert [n["status"] for n in nodes] == ["ACTIVE"]

    del spec["properties"]["block_device_mapping_v2"]
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "none", "spec": spec}})
    assert r.status_code == 400, r.text
    assert "Required spec item 'image' not provided" in r.text


async def test_senlin_16_webhook_urls_without_token(senlin: Senlin) -> None:
    """Senlin 16's own receivers hand out `?V=2&<params>` with no token; only an imported
    receiver (its id its secret) runs from one. A Shoal receiver still needs its token."""
    cluster = await senlin.cluster("hooked", size=1)
    body = {
        "receiver": {
            "name": "out",
            "type": "webhook",
            "cluster_id": cluster["id"],
            "action": "CLUSTER_SCALE_OUT",
        }
    }
    rid = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]["id"]
    r = await senlin.http.post(f"/clustering/v1/webhooks/{rid}/trigger?V=2&count=1")
    assert r.status_code in (403, 404), r.text
