"""Every kind of refusal has its HTTP status, chosen once at the API's edge.

The service names refusals by kind (`ErrorKind`); `api/errors.py` maps kinds to statuses. A kind
added without a status would surface as a KeyError (a 500) the first time it is raised, so this
checks the map against the enum and against every refusal type the service defines.
"""

from __future__ import annotations

import importlib
import pkgutil

import shoal.api
import shoal.service
from shoal.api.errors import HTTP_STATUS, http_status
from shoal.service.errors import ClusterBusy, ErrorKind, ServiceError


def _all_refusals() -> set[type[ServiceError]]:
    for package in (shoal.service, shoal.api):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
    found: set[type[ServiceError]] = set()
    todo = [ServiceError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return found


def test_every_error_kind_has_an_http_status() -> None:
    missing = [k for k in ErrorKind if k not in HTTP_STATUS]
    assert not missing, f"kinds without an HTTP status: {missing}"
    assert all(400 <= s < 600 for s in HTTP_STATUS.values())


def test_every_refusal_type_maps_to_a_status_by_its_kind_alone() -> None:
    refusals = _all_refusals()
    assert ClusterBusy in refusals and len(refusals) > 15
    for cls in refusals:
        assert cls.kind in HTTP_STATUS, cls
        assert not hasattr(cls, "status"), f"{cls.__name__} still says its own HTTP status"
    assert http_status(ClusterBusy("c", "a1")) == 409
