"""`Shoal::Workload`: the seed's "Kubernetes Pod resource to be named later", in templates.

Its properties are a native workload's fields (docs/workloads.md): `replicas`, `containers` or
a Kubernetes `template` (Pod or apps/v1 Deployment), `rules`, `max_per_node`, `nodes`,
`restart`, `update`, `min`, `max`. `nodes.groups` name the template's server resources (or
ResourceGroups), and the resource's own `depends_on` (explicit or through functions) orders it
after deployments and other workloads. Values must be known when the template is read: a
`get_attr` of a server is not (use `{members: GROUP}` in env). A hidden parameter is refused
in a workload (the stored document would show it); native documents' `{secret: NAME}` is
the way to give one.

An `OS::Octavia::PoolMember` whose `address` is a `get_attr` of the workload makes its pool
serve the workload's ready replicas (documents/hot/netmap.py), as a PoolMember in a
ResourceGroup's member template makes the pool follow the group; `workload_ports` gives the
networking reader what it checks such a pool against.
"""

from __future__ import annotations

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft
from shoal.documents.hot.context import Resource, StackView
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import Shape, WorkloadShape
from shoal.documents.hot.values import first_symbolic
from shoal.documents.net_common import WorkloadPorts
from shoal.documents.params import ParameterTable
from shoal.documents.workloads import build_workloads, check_workloads, read_workloads
from shoal.model.software import SoftwareSpec
from shoal.model.workloads import Workload

TYPE = "Shoal::Workload"


def workload(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    where = child(res.path, "properties")
    symbolic = first_symbolic(props)
    if symbolic is not None:
        stack.ctx.report.problem(
            where,
            "a workload's properties must be known when the template is read; a resource's "
            "attribute is not (give addresses with {members: GROUP} in env)",
        )
        return
    hidden = sorted(p.name for p in stack.params.values() if p.hidden)
    if hidden and _uses_param(res.raw.get("properties"), set(hidden)):
        stack.ctx.report.problem(
            where,
            "a hidden parameter cannot be given to a workload here (the stored document would "
            "show it); use a native document's {secret: NAME} in env",
        )
        return
    if stack.depth > 0:
        stack.ctx.report.problem(res.path, f"{TYPE} is read in the top template only")
        return
    stack.shape.workloads.append(WorkloadShape(res.name, res.path, props))


def _uses_param(value: object, names: set[str]) -> bool:
    if isinstance(value, dict):
        if set(value) == {"get_param"}:
            arg = value["get_param"]
            first = arg[0] if isinstance(arg, list) and arg else arg
            return isinstance(first, str) and first in names
        return any(_uses_param(v, names) for v in value.values())
    if isinstance(value, list):
        return any(_uses_param(v, names) for v in value)
    return False


def workload_ports(shape: Shape) -> dict[str, WorkloadPorts]:
    """The ports of the template's workloads, for pools whose `PoolMember` names one
    (documents/hot/netmap.py). Read apart from `map_workloads`, which runs after the networking
    (deployments read addresses from it); a workload's problems are reported there, once."""
    if not shape.workloads:
        return {}
    tree = {w.name: dict(w.props) for w in shape.workloads}
    drafts = read_workloads(tree, "/workloads", ParameterTable(), ProblemList())
    return {d.name: WorkloadPorts.of(d.containers) for d in drafts.workloads}


def map_workloads(
    shape: Shape, draft: ClusterDraft, software: SoftwareSpec | None, report: Report
) -> tuple[Workload, ...]:
    """The template's workloads as the native reader reads them, checked against the draft."""
    if not shape.workloads:
        return ()
    names = {w.name for w in shape.workloads}
    deployments = {d.name for d in software.deployments} if software is not None else set()
    out = ProblemList()
    tree: dict[str, object] = {}
    paths: dict[str, str] = {}
    for w in shape.workloads:
        props = dict(w.props)
        after = sorted(d for d in shape.depends.get(w.name, set()) if d in names | deployments)
        if after:
            props["depends_on"] = after
        tree[w.name] = props
        paths[f"/workloads/{w.name}"] = child(w.path, "properties")
    drafts = read_workloads(tree, "/workloads", ParameterTable(), out)
    members = {g.name: dict(g.labels or {}) for g in draft.groups if g.name is not None}
    members.update({i.name: {} for i in draft.instances if i.name is not None})
    check_workloads(drafts, members, deployments, out)
    for p in out.items:
        at = next((paths[k] + p.path[len(k) :] for k in paths if p.path.startswith(k)), p.path)
        report.problem(at, p.message)
    return () if out.items else build_workloads(drafts)
