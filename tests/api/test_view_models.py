"""One shape per view (issue 24): the native API's response models are the service's views and
forbid extra keys, so a key added to a view but not to its schema fails where the view is built
instead of reaching clients undocumented. No database: the routers and models are read as they
are declared."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator

import pytest
from fastapi import APIRouter
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError

from shoal.api import app as app_module
from shoal.model.enums import (
    ActionKind,
    ActionStatus,
    ClusterStatus,
    Health,
    NodeKind,
    NodeStatus,
)
from shoal.service import views
from shoal.store.records import ActionRecord, ClusterRecord, EventRecord, NodeRecord


def routes() -> list[APIRoute]:
    routers = [v for v in vars(app_module).values() if isinstance(v, APIRouter)]
    assert len(routers) >= 15
    return [r for router in routers for r in router.routes if isinstance(r, APIRoute)]


def models_in(annotation: object) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names, through lists, unions and dicts."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        for field in annotation.model_fields.values():
            yield from models_in(field.annotation)
        return
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            yield from models_in(arg)


def response_models() -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    for route in routes():
        if route.response_model is not None:
            found.update(models_in(route.response_model))
    return found


def test_every_response_model_forbids_extra_keys() -> None:
    found = response_models()
    assert views.ClusterView in found and views.EventView in found
    lax = sorted(m.__name__ for m in found if m.model_config.get("extra") != "forbid")
    assert lax == []


@pytest.mark.parametrize("model", sorted(response_models(), key=lambda m: m.__name__), ids=str)
def test_a_stray_key_is_refused(model: type[BaseModel]) -> None:
    with pytest.raises(ValidationError) as raised:
        model.model_validate({"stray": 1})
    assert any(e["type"] == "extra_forbidden" for e in raised.value.errors())


NOW = 1_700_000_000.0


def built_views() -> list[views.View]:
    doc = {"node_groups": [{"name": "web", "count": 2, "max": 3}], "metadata": {"k": "v"}}
    cluster = ClusterRecord(
        "c1", "p1", "one", ClusterStatus.ACTIVE, "", doc, "native", None, 1, {}, NOW, NOW, None
    )
    node = NodeRecord(
        id="n1",
        cluster_id="c1",
        project_id="p1",
        name="web-1",
        kind=NodeKind.SERVER,
        group_name="web",
        part=None,
        replica=1,
        status=NodeStatus.ACTIVE,
        status_reason="",
        host="h1",
        zone="az1",
        address=None,
        provider_id=None,
        profile={"flavor": "small"},
        vcpus=1,
        ram_mb=512,
        disk_gb=1,
        volume_gb=0,
        attach_to=None,
        health=Health.HEALTHY,
        health_reason="",
        checked_at=None,
        created_at=NOW,
        updated_at=NOW,
        deleted_at=None,
    )
    action = ActionRecord(
        id="a1" * 8,
        project_id="p1",
        cluster_id="c1",
        node_id=None,
        parent_id=None,
        kind=ActionKind.CLUSTER_CREATE,
        status=ActionStatus.SUCCEEDED,
        status_reason="",
        inputs={"previous_document": {"x": 1}},
        outputs={},
        owner=None,
        lease_expires_at=None,
        attempts=1,
        deps_pending=0,
        cancel_requested=False,
        created_at=NOW,
        started_at=NOW,
        ended_at=NOW,
    )
    event = EventRecord(
        id=7,
        ts=NOW,
        project_id="p1",
        cluster_id="c1",
        node_id="n1",
        action_id=None,
        level="INFO",
        obj_type="NODE",
        obj_name="web-1",
        status="ACTIVE",
        message="up",
    )
    return [
        views.cluster_view(cluster),
        views.cluster_view(cluster, {}, ([node], "n1")),
        views.node_view(node),
        views.node_summary(node),
        views.action_view(action),
        views.event_view(event),
    ]


@pytest.mark.parametrize("view", built_views(), ids=lambda v: type(v).__name__)
def test_a_built_view_round_trips_and_a_stray_key_fails(view: views.View) -> None:
    shown = view.model_dump(mode="json", exclude_unset=True)
    assert type(view).model_validate(shown).model_dump(mode="json", exclude_unset=True) == shown
    with pytest.raises(ValidationError):
        type(view).model_validate({**shown, "stray": 1})
    with pytest.raises(ValueError):
        view.stray = 1  # type: ignore[attr-defined]
