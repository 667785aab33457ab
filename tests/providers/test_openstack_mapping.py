"""How the openstack provider reads Nova's and Cinder's answers: states, faults, errors."""

from __future__ import annotations

from shoal.model.enums import NodeKind
from shoal.providers.base import ResourceState
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.openstack.provider import server_resource, volume_resource
from shoal.providers.openstack.rest import error_for, fault_of


def test_nova_statuses_become_shoal_states() -> None:
    def state(status: str, **extra: object) -> ResourceState:
        return server_resource({"id": "s", "status": status, **extra}).state

    assert state("ACTIVE") is ResourceState.ACTIVE
    assert state("BUILD") is ResourceState.BUILDING
    assert state("HARD_REBOOT") is ResourceState.BUILDING
    assert state("SHUTOFF") is ResourceState.STOPPED
    assert state("ERROR") is ResourceState.ERROR
    assert state("DELETED") is ResourceState.MISSING
    assert state("ACTIVE", host_status="DOWN") is ResourceState.MISSING


def test_a_server_reads_its_key_host_zone_address_and_fault() -> None:
    r = server_resource(
        {
            "id": "s1",
            "name": "web-1",
            "status": "ERROR",
            "metadata": {"shoal_node": "n1"},
            "OS-EXT-SRV-ATTR:host": "host003",
            "OS-EXT-AZ:availability_zone": "az1",
            "addresses": {
                "net": [{"addr": "fd00::5", "version": 6}, {"addr": "10.0.0.5", "version": 4}]
            },
            "fault": {"message": "No valid host was found."},
        }
    )
    assert (r.id, r.key, r.kind, r.host, r.zone) == ("s1", "n1", NodeKind.SERVER, "host003", "az1")
    assert r.address == "10.0.0.5"
    assert r.details["fault"] == "No valid host was found."
    # A floating IP Nova lists beside the fixed one is not the server's own address.
    public = {"OS-EXT-IPS:type": "floating", "version": 4}
    fixed = {"OS-EXT-IPS:type": "fixed", "version": 4}
    nat = server_resource(
        {
            "id": "s2",
            "status": "ACTIVE",
            "addresses": {
                "app": [{**public, "addr": "10.0.0.9"}, {**fixed, "addr": "192.168.0.5"}]
            },
        }
    )
    assert nat.address == "192.168.0.5"


def test_a_volume_reads_its_attachment() -> None:
    v = volume_resource(
        {
            "id": "v1",
            "status": "in-use",
            "metadata": {"shoal_node": "n2"},
            "attachments": [{"server_id": "s1"}],
        }
    )
    assert (v.state, v.key, v.attached_to) == (ResourceState.ACTIVE, "n2", "s1")
    assert volume_resource({"id": "v2", "status": "creating"}).state is ResourceState.BUILDING


def test_vendor_errors_become_shoal_errors_with_the_vendors_words() -> None:
    body = b'{"forbidden": {"code": 403, "message": "Quota exceeded for instances"}}'
    quota = error_for(403, "create server web-1", fault_of(body))
    assert isinstance(quota, PermanentError)
    assert "quota exceeded" in str(quota)
    assert quota.fault == "Quota exceeded for instances"
    assert isinstance(error_for(404, "show server", "gone"), ResourceGone)
    assert isinstance(error_for(503, "list servers", "busy"), TemporaryError)
    assert isinstance(error_for(409, "reboot", "task_state rebooting"), TemporaryError)
    assert isinstance(error_for(400, "create", "Invalid flavorRef"), PermanentError)
    assert fault_of(b"<html>Bad   Gateway</html>") == "<html>Bad Gateway</html>"
