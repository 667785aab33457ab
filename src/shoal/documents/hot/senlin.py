"""Senlin's resources in a template: a profile, clusters and nodes of it, an affinity policy.

`OS::Senlin::Cluster` of an `os.nova.server` profile is a node group (`desired_capacity`,
`min_size`, `max_size`); `OS::Senlin::Node` a single server; an affinity policy attached to a
cluster becomes a grouping of its nodes. Other Senlin policies (deletion, scaling, health,
load balancing) are accepted and named in a notice: Shoal's own policies cover them.
"""

from __future__ import annotations

from shoal.documents.collect import child
from shoal.documents.hot.context import Resource, StackView, check_props
from shoal.documents.hot.groups import MAX_COUNT
from shoal.documents.hot.shapes import GroupShape, Shape
from shoal.documents.hot.values import Ref
from shoal.documents.tree import describe

PROFILE_PROPS = frozenset({"name", "type", "properties", "metadata"})
CLUSTER_PROPS = frozenset(
    {
        "name",
        "profile",
        "desired_capacity",
        "min_size",
        "max_size",
        "metadata",
        "timeout",
        "policies",
        "config",
    }
)
NODE_PROPS = frozenset({"name", "profile", "cluster", "metadata", "role"})
POLICY_PROPS = frozenset({"name", "type", "properties", "bindings"})
_SERVER_PROFILE = "os.nova.server"


def profile(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, PROFILE_PROPS, ("type", "properties"))
    kind = props.get("type")
    if isinstance(kind, str) and not kind.startswith(_SERVER_PROFILE):
        report.cannot(
            f"senlin profile {kind.split('-')[0]}",
            child(res.path, "properties", "type"),
            f"Senlin profile type {kind} is not supported; Shoal reads {_SERVER_PROFILE} profiles",
        )


def policy(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, POLICY_PROPS, ("type",))
    kind = props.get("type")
    if isinstance(kind, str) and not kind.startswith("senlin.policy.affinity"):
        report.notice(
            child(res.path, "properties", "type"),
            f"Senlin policy {kind} is not followed: give the cluster Shoal's own policy instead",
        )


def cluster(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, CLUSTER_PROPS, ("profile",))
    where = child(res.path, "properties")
    count = props.get("desired_capacity", 0)
    lo = props.get("min_size", 0)
    hi = props.get("max_size", -1)
    for key, value in (("desired_capacity", count), ("min_size", lo), ("max_size", hi)):
        if not isinstance(value, int) or isinstance(value, bool) or not -1 <= value <= MAX_COUNT:
            report.problem(
                child(where, key),
                f"{key} is a whole number up to {MAX_COUNT}, found {describe(value)}",
            )
            return
    assert isinstance(count, int) and isinstance(lo, int) and isinstance(hi, int)
    member = _member(stack, res, props.get("profile"), child(where, "profile"))
    if member is None:
        return
    group = GroupShape(
        res.name, res.path, count, member, min_size=lo, max_size=None if hi < 0 else hi
    )
    stack.shape.groups.append(group)
    bindings = props.get("policies")
    for i, binding in enumerate(bindings if isinstance(bindings, list) else []):
        ref = binding.get("policy") if isinstance(binding, dict) else None
        if isinstance(ref, Ref) and stack.type_of(ref.name) == "OS::Senlin::Policy":
            stack.bind_policy(ref.name, res.name, child(where, "policies", i))


def node(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, NODE_PROPS, ("profile",))
    if props.get("cluster") is not None:
        report.notice(
            child(res.path, "properties", "cluster"),
            "a Senlin node joining a cluster is read as its own instance",
        )
    member = _member(stack, res, props.get("profile"), child(res.path, "properties", "profile"))
    if member is not None:
        for s in member.servers:
            s.name = res.name
            stack.shape.servers.append(s)


def _member(stack: StackView, res: Resource, ref: object, path: str) -> Shape | None:
    if not isinstance(ref, Ref) or stack.type_of(ref.name) != "OS::Senlin::Profile":
        stack.ctx.report.problem(
            path, "profile must be {get_resource: ...} of an OS::Senlin::Profile"
        )
        return None
    body = stack.properties_of(ref.name)
    if not isinstance(body, dict) or not str(body.get("type", "")).startswith(_SERVER_PROFILE):
        return None
    inner = body.get("properties")
    if not isinstance(inner, dict):
        stack.ctx.report.problem(path, "the profile's properties must be a mapping")
        return None
    return stack.member(
        res, "OS::Nova::Server", inner, child(stack.path_of(ref.name), "properties", "properties")
    )
