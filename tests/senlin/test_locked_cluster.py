"""A cluster busy with an action refuses another with Senlin's 409 and message."""

from __future__ import annotations

from pathlib import Path

from tests.senlin.conftest import Senlin, serving
from tests.senlin.test_errors import senlin_error


async def _cluster_id(senlin: Senlin) -> str:
    profile = await senlin.profile("slow")
    body = {"cluster": {"name": "web", "profile_id": profile, "desired_capacity": 0}}
    await senlin.accepted("POST", "/clusters", json=body)
    cluster_id: str = (await senlin.ok("GET", "/clusters/web"))["cluster"]["id"]
    return cluster_id


async def _locked_answer(senlin: Senlin, cluster_id: str) -> str:
    first = await senlin.call("POST", "/clusters/web/actions", json={"scale_out": {"count": 1}})
    assert first.status_code == 202, first.text
    # the node's create takes an hour in this cloud: the cluster stays locked
    second = await senlin.call(
        "POST", "/clusters/web/actions", json={"scale_out": {"count": "1"}}, version="1.11"
    )
    message: str = senlin_error(second, 409, "ActionInProgress")["message"]
    return message


async def test_scale_out_of_a_locked_cluster_is_409(tmp_path: Path) -> None:
    async with serving(tmp_path / "home", create_latency_s=3600.0) as senlin:
        cluster_id = await _cluster_id(senlin)
        assert await _locked_answer(senlin, cluster_id) == (
            f"CLUSTER_SCALE_OUT for cluster '{cluster_id}' cannot be completed because it is "
            "already locked."
        )
