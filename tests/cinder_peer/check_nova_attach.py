#!/usr/bin/env python3
"""Check Nova -> real Cinder volume attach/detach end to end.

  /work/main/.venv/bin/python check_nova_attach.py NOVA_URL CINDER_URL

NOVA_URL is tests/nova/cloud.py's READY url (http://127.0.0.1:P/v2.1), started with
`--cinder CINDER_URL`; CINDER_URL is serve.py's READY url (http://127.0.0.1:Q/v3/<project>),
started with `--project` = Nova's project id. Steps:

 1. create a 1 GB volume in Cinder (openstacksdk block_storage) -> available
 2. boot a server in Nova (m1.tiny, cirros, networks none) -> ACTIVE
 3. POST /servers/{id}/os-volume_attachments -> Cinder volume in-use, attached to the server
    (and Nova's GET os-volume_attachments lists it)
 4. DELETE /servers/{id}/os-volume_attachments/{vol} -> volume available, no attachments
 5. attach again, then DELETE the server -> the volume is available again
 6. delete the volume

Prints `CHECK OK {json timings}` or exits non-zero with `CHECK FAIL ...`.
"""

import json
import sys
import time
import uuid

import httpx
import openstack

TIMEOUT = 60.0


def fail(msg):
    print("CHECK FAIL " + msg, flush=True)
    sys.exit(1)


def wait(what, fn, timeout=TIMEOUT, interval=0.05):
    t0 = time.time()
    last = None
    while time.time() - t0 < timeout:
        ok, last = fn()
        if ok:
            return time.time() - t0, last
        time.sleep(interval)
    fail(f"timeout waiting for {what}; last={last!r}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    nova_url, cinder_url = sys.argv[1].rstrip("/"), sys.argv[2].rstrip("/")
    timings = {}
    nova = httpx.Client(
        base_url=nova_url,
        timeout=30.0,
        headers={"OpenStack-API-Version": "compute latest", "Content-Type": "application/json"},
    )
    conn = openstack.connect(
        auth_type="none",
        block_storage_endpoint_override=cinder_url,
        block_storage_api_version="3",
    )
    bs = conn.block_storage

    def vol_raw(vid):
        r = conn.session.get(
            cinder_url + "/volumes/" + vid,
            headers={"OpenStack-API-Version": "volume 3.0"},
            endpoint_filter={"service_type": "block-storage"},
        )
        return r.json()["volume"]

    def nova_req(method, path, **kw):
        r = nova.request(method, path, **kw)
        if r.status_code >= 400:
            fail(f"{method} {path} -> {r.status_code} {r.text[:500]}")
        return r

    # 1. volume
    t = time.time()
    vol = bs.create_volume(size=1, name="nova-attach-" + uuid.uuid4().hex[:8])
    timings["volume_create_call_s"] = round(time.time() - t, 3)
    dt, _ = wait("volume available", lambda: ((v := vol_raw(vol.id))["status"] == "available", v))
    timings["volume_to_available_s"] = round(dt, 3)

    # 2. server
    images = nova_req("GET", "/images", headers={"OpenStack-API-Version": "compute 2.35"}).json()[
        "images"
    ]
    image = next((i["id"] for i in images if i["name"] == "cirros"), None)
    flavors = nova_req("GET", "/flavors").json()["flavors"]
    flavor = next((f["id"] for f in flavors if f["name"] == "m1.tiny"), None)
    if not image or not flavor:
        fail(f"no cirros image / m1.tiny flavor: {images!r} {flavors!r}")

    def boot(name):
        t0 = time.time()
        body = {
            "server": {"name": name, "imageRef": image, "flavorRef": flavor, "networks": "none"}
        }
        sid = nova_req("POST", "/servers", json=body).json()["server"]["id"]

        def active():
            s = nova_req("GET", "/servers/" + sid).json()["server"]
            if s["status"] == "ERROR":
                fail("server {} ERROR: {!r}".format(sid, s.get("fault")))
            return s["status"] == "ACTIVE", s["status"]

        wait("server ACTIVE", active)
        return sid, time.time() - t0

    sid, dt = boot("nova-attach-a")
    timings["server_boot_to_active_s"] = round(dt, 3)

    def attach(server_id):
        t0 = time.time()
        r = nova_req(
            "POST",
            f"/servers/{server_id}/os-volume_attachments",
            json={"volumeAttachment": {"volumeId": vol.id}},
        )
        # microversion >= 2.101 (what "latest" gets): 202 and no body; before: 200 + body
        if r.status_code != 202 or r.content:
            att = r.json()["volumeAttachment"]
            if att["volumeId"] != vol.id or att["serverId"] != server_id:
                fail(f"bad attach reply {att!r}")
        t_call = time.time() - t0

        def in_use():
            v = vol_raw(vol.id)
            ok = (
                v["status"] == "in-use"
                and len(v["attachments"]) == 1
                and v["attachments"][0]["server_id"] == server_id
            )
            return ok, (v["status"], v["attachments"])

        wait("volume in-use attached to " + server_id, in_use)
        return t_call, time.time() - t0

    # 3. attach
    t_call, dt = attach(sid)
    timings["attach_call_s"] = round(t_call, 3)
    timings["attach_to_in_use_s"] = round(dt, 3)
    v = vol_raw(vol.id)
    listed = nova_req("GET", f"/servers/{sid}/os-volume_attachments").json()["volumeAttachments"]
    if [a["volumeId"] for a in listed] != [vol.id]:
        fail(f"nova lists {listed!r}")
    # Nova's BDM and Cinder's volume name the same Cinder attachment (attachment_id: 2.89+)
    if listed[0].get("attachment_id") != v["attachments"][0]["attachment_id"]:
        fail("attachment ids differ: nova {!r} cinder {!r}".format(listed[0], v["attachments"]))
    device = listed[0].get("device")

    # 4. detach
    t0 = time.time()
    nova_req("DELETE", f"/servers/{sid}/os-volume_attachments/{vol.id}")

    def available():
        v = vol_raw(vol.id)
        return v["status"] == "available" and not v["attachments"], (v["status"], v["attachments"])

    wait("volume available after detach", available)
    timings["detach_to_available_s"] = round(time.time() - t0, 3)

    def nova_empty(server_id):
        lst = nova_req("GET", f"/servers/{server_id}/os-volume_attachments").json()
        return not lst["volumeAttachments"], lst

    wait("nova attachment list empty", lambda: nova_empty(sid))

    # 5. attach again, delete the server
    _, dt = attach(sid)
    timings["reattach_to_in_use_s"] = round(dt, 3)
    t0 = time.time()
    nova_req("DELETE", "/servers/" + sid)
    wait("volume available after server delete", available)
    timings["server_delete_to_volume_available_s"] = round(time.time() - t0, 3)

    def server_gone():
        r = nova.get("/servers/" + sid)
        return r.status_code == 404, r.status_code

    wait("server gone", server_gone)

    # 6. clean up
    t0 = time.time()
    bs.delete_volume(vol.id)

    def vol_gone():
        r = conn.session.get(
            cinder_url + "/volumes/" + vol.id,
            endpoint_filter={"service_type": "block-storage"},
            raise_exc=False,
        )
        return r.status_code == 404, r.status_code

    wait("volume gone", vol_gone)
    timings["volume_delete_to_gone_s"] = round(time.time() - t0, 3)
    timings["device"] = device
    print("CHECK OK " + json.dumps(timings), flush=True)


if __name__ == "__main__":
    main()
