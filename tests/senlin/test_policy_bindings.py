"""Senlin's scaling policies are not singletons: two may be attached to one cluster, and a
binding looked up by a name they share is Senlin's 400."""

from __future__ import annotations

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error
from tests.senlin.test_policies import act, policy, spec


async def test_two_scaling_policies_of_one_name(senlin_db: Senlin) -> None:
    senlin = senlin_db
    await senlin.cluster(size=1)
    body = spec(
        "scaling", event="CLUSTER_SCALE_IN", adjustment={"type": "CHANGE_IN_CAPACITY", "number": 1}
    )
    ids = [await policy(senlin, "test-policy", body) for _ in range(2)]
    for pid in ids:
        await act(senlin, "web", {"policy_attach": {"policy_id": pid}})
    bindings = (await senlin.ok("GET", "/clusters/web/policies"))["cluster_policies"]
    assert sorted(b["policy_id"] for b in bindings) == sorted(ids)
    r = await senlin.call("GET", "/clusters/web/policies/test-policy")
    assert senlin_error(r, 400)["message"] == (
        "Multiple results found matching the query criteria 'test-policy'. Please be more specific."
    )
    for pid in ids:
        await act(senlin, "web", {"policy_detach": {"policy_id": pid}})
    assert (await senlin.ok("GET", "/clusters/web/policies"))["cluster_policies"] == []
