#!/usr/bin/env python3
"""Smoke-check a Cinder started by serve.py, with openstacksdk (4.x).

  /work/main/.venv/bin/python check.py http://127.0.0.1:PORT/v3/<project>
        [--token admin:<project>]   # send X-Auth-Token explicitly (admin_token
                                    # auth); default: auth_type='none', relying
                                    # on serve.py's default-token wrapper
        [--no-attach]               # skip the attachments (3.27/3.44) part

Volume: create 1 GB with metadata {"shoal_key": "abc"} -> available, list
filtered by that metadata, delete, see it gone.
Attachment (no Nova): POST /attachments with a connector (mv 3.54, any
instance uuid) -> 'attaching'/'reserved', complete (mv 3.44) -> 'in-use',
DELETE attachment -> 'available'.
Exit 0 and last line 'CHECK OK {json timings}' on success.
"""

import argparse
import json
import time
import uuid

import openstack

p = argparse.ArgumentParser()
p.add_argument("url")
p.add_argument("--token", default=None)
p.add_argument("--no-attach", dest="attach", action="store_false")
p.add_argument("--timeout", type=float, default=60)
a = p.parse_args()

if a.token:
    # keystoneauth 'admin_token' plugin: static token + endpoint, no Keystone
    conn = openstack.connect(
        auth_type="admin_token",
        auth={"token": a.token, "endpoint": a.url},
        block_storage_endpoint_override=a.url,
        block_storage_api_version="3",
    )
else:
    conn = openstack.connect(
        auth_type="none", block_storage_endpoint_override=a.url, block_storage_api_version="3"
    )
bs = conn.block_storage
T = {}


def wait_status(vol_id, want, timeout=a.timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = bs.get_volume(vol_id)
        if v.status == want:
            return v, time.time() - t0
        if v.status == "error":
            raise SystemExit(f"volume {vol_id} went to error")
        time.sleep(0.1)
    raise SystemExit(f"timeout waiting {want} for {vol_id} (last {v.status})")


def raw_vol(vol_id):
    # raw body at the newest microversion (status + attachments list)
    return bs.get(f"/volumes/{vol_id}", headers={"OpenStack-API-Version": "volume 3.71"}).json()[
        "volume"
    ]


name = f"shoal-check-{uuid.uuid4().hex[:8]}"
t0 = time.time()
vol = bs.create_volume(size=1, name=name, metadata={"shoal_key": "abc"})
T["create_call_s"] = round(time.time() - t0, 3)
vol, _ = wait_status(vol.id, "available")
T["create_to_available_s"] = round(time.time() - t0, 3)
print("created", vol.id, vol.status, vol.size, "GB", dict(vol.metadata))
assert vol.metadata.get("shoal_key") == "abc", vol.metadata


# NB openstacksdk 4.x pitfalls with this filter:
#  * a dict value goes on the wire as '?metadata=shoal_key' (requests encodes
#    only the keys) -> cinder matches nothing;
#  * the kwarg 'metadata=' is ALSO applied client-side against the resource's
#    metadata attr, so metadata='<json string>' drops every row (str != dict).
# What works: the sdk's query alias 'properties' (-> ?metadata=) with the dict
# as a JSON string; cinder parses '?metadata={"shoal_key": "abc"}' itself.
def by_meta(md):
    return [v.id for v in bs.volumes(details=True, properties=json.dumps(md))]


found = by_meta({"shoal_key": "abc"})
other = by_meta({"shoal_key": "nope"})
print("filter shoal_key=abc ->", found, "; shoal_key=nope ->", other)
assert vol.id in found and vol.id not in other

if a.attach:
    # Attachments API without Nova: instance_uuid is any uuid. With a
    # connector the attachment is created 'attaching' and connection_info is
    # filled by the (fake) driver; complete flips the volume to 'in-use'.
    instance = str(uuid.uuid4())
    connector = {
        "initiator": "iqn.1993-08.org.debian:01:shoal",
        "host": "shoal-host",
        "ip": "127.0.0.1",
        "platform": "x86_64",
        "os_type": "linux",
        "multipath": False,
        "mode": "rw",
    }
    hdr = {"OpenStack-API-Version": "volume 3.54"}
    t1 = time.time()
    r = bs.post(
        "/attachments",
        json={
            "attachment": {
                "volume_uuid": vol.id,
                "instance_uuid": instance,
                "connector": connector,
                "mode": "rw",
            }
        },
        headers=hdr,
    )
    assert r.status_code == 200, (r.status_code, r.text)
    att = r.json()["attachment"]
    print(
        "attachment",
        att["id"],
        "status",
        att["status"],
        "conn driver_volume_type",
        (att.get("connection_info") or {}).get("driver_volume_type"),
    )
    v = raw_vol(vol.id)
    print("volume after attachment create:", v["status"], v["attachments"])
    r = bs.post("/attachments/{}/action".format(att["id"]), json={"os-complete": None}, headers=hdr)
    assert r.status_code == 204, (r.status_code, r.text)
    wait_status(vol.id, "in-use")
    T["attach_create_complete_s"] = round(time.time() - t1, 3)
    v = raw_vol(vol.id)
    print(
        "after complete:",
        v["status"],
        [(x.get("server_id"), x.get("attachment_id")) for x in v["attachments"]],
    )
    assert v["attachments"][0]["server_id"] == instance
    r = bs.get(f"/attachments?volume_id={vol.id}", headers=hdr)
    print("attachments list:", [(x["id"], x["status"]) for x in r.json()["attachments"]])
    t2 = time.time()
    # Deleting a connected attachment (instance_uuid + connection_info) is
    # refused unless the request carries a SERVICE token (Bug #2004555,
    # cinder.volume.api.attachment_deletion_allowed); otherwise cinder asks
    # Nova (GET /servers/{id}/os-volume_attachments/{vol}) and, with no Nova
    # in the catalog, 500s with keystoneauth1 EndpointNotFound.  Under noauth
    # the context is built from headers, so 'X-Service-Roles: service' (what
    # keystonemiddleware sets for Nova's service token) stands in for Nova.
    r = bs.delete(
        "/attachments/{}".format(att["id"]), headers=dict(hdr, **{"X-Service-Roles": "service"})
    )
    assert r.status_code == 200, (r.status_code, r.text)
    wait_status(vol.id, "available")
    T["detach_s"] = round(time.time() - t2, 3)
    v = raw_vol(vol.id)
    print("after attachment delete:", v["status"], v["attachments"])
    assert v["attachments"] == [], v["attachments"]

t3 = time.time()
bs.delete_volume(vol.id)
while time.time() - t3 < a.timeout:
    if bs.find_volume(vol.id, ignore_missing=True) is None:
        break
    time.sleep(0.1)
else:
    raise SystemExit(f"volume {vol.id} not gone after delete")
T["delete_to_gone_s"] = round(time.time() - t3, 3)
left = by_meta({"shoal_key": "abc"})
print("deleted; filter shoal_key=abc ->", left)
assert vol.id not in left
print("CHECK OK " + json.dumps(T))
