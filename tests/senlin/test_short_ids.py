"""Senlin's short ids: `openstack cluster ... list` shows ids cut to 8 characters, and Senlin
finds profiles, policies, actions and receivers by a unique prefix of their id (as it does
clusters and nodes); `openstack cluster profile show <short id>` and the like used to be 404."""

from __future__ import annotations

from collections import defaultdict

from tests.senlin.conftest import NOVA_SPEC, Senlin
from tests.senlin.test_errors import senlin_error
from tests.senlin.test_policies import policy, spec


async def test_profiles_policies_actions_receivers_by_short_id(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    profile_id = cluster["profile_id"]
    policy_id = await policy(senlin, "oldest", spec("deletion", criteria="OLDEST_FIRST"))
    action_id = (await senlin.ok("GET", f"/actions?cluster_id={cluster['id']}"))["actions"][0]["id"]
    body = {
        "receiver": {
            "name": "grow",
            "type": "webhook",
            "cluster_id": cluster["id"],
            "action": "CLUSTER_SCALE_OUT",
        }
    }
    receiver_id = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]["id"]

    for kind, full in (
        ("profile", profile_id),
        ("policy", policy_id),
        ("action", action_id),
        ("receiver", receiver_id),
    ):
        plural = "policies" if kind == "policy" else f"{kind}s"
        shown = (await senlin.ok("GET", f"/{plural}/{full[:8]}"))[kind]
        assert shown["id"] == full, kind
    # a short id finds only its own kind
    senlin_error(await senlin.call("GET", f"/profiles/{policy_id[:8]}"), 404)
    senlin_error(await senlin.call("GET", f"/policies/{profile_id[:8]}"), 404)
    # and works wherever an id does: attach a policy, create a cluster, delete a receiver
    await senlin.accepted(
        "POST",
        f"/clusters/{cluster['id']}/actions",
        json={"policy_attach": {"policy_id": policy_id[:8]}},
    )
    bound = await senlin.ok("GET", f"/clusters/{cluster['id']}/policies/{policy_id[:8]}")
    assert bound["cluster_policy"]["policy_id"] == policy_id
    body = {"cluster": {"name": "other", "profile_id": profile_id[:8], "desired_capacity": 0}}
    await senlin.accepted("POST", "/clusters", json=body)
    assert (await senlin.ok("GET", "/clusters/other"))["cluster"]["profile_id"] == profile_id
    await senlin.ok("DELETE", f"/receivers/{receiver_id[:8]}", 204)
    senlin_error(await senlin.call("GET", f"/receivers/{receiver_id}"), 404)


async def test_a_short_id_of_several_is_a_bad_request(senlin: Senlin) -> None:
    by_first: dict[str, list[str]] = defaultdict(list)
    for i in range(17):  # 16 hex digits: two of 17 ids share their first character
        created = await senlin.ok(
            "POST", "/profiles", 201, json={"profile": {"name": f"p{i}", "spec": NOVA_SPEC}}
        )
        by_first[created["profile"]["id"][0]].append(created["profile"]["id"])
    shared = next(c for c, ids in by_first.items() if len(ids) > 1)
    error = senlin_error(await senlin.call("GET", f"/profiles/{shared}"), 400, "BadRequest")
    assert error["message"] == (
        f"Multiple results found matching the query criteria '{shared}'. Please be more specific."
    )
    senlin_error(await senlin.call("GET", "/profiles/not-an-id"), 404, "ResourceNotFound")
