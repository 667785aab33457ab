"""What `shoal plan DOC -e ENV` shows besides the placement: the shape the environments gave
the cluster (node groups, instances, groupings) and the deployments with their targets, so a
reader sees what an environment produced before anything runs.

The model is imported only for types: the CLI stays light at start-up (test_cli_light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoal.cli.errors import escape
from shoal.cli.output import console

if TYPE_CHECKING:
    from shoal.model.cluster import ClusterSpec


def software_view(spec: ClusterSpec) -> dict[str, Any]:
    """The shape and the deployments as data, for `-o json` / `-o yaml`."""
    return {
        "shape": {
            "node_groups": [
                {"name": g.name, "count": g.count, "role": g.role} for g in spec.node_groups
            ],
            "instances": [i.name for i in spec.instances],
            "groupings": [g.describe() for g in spec.groupings],
        },
        "deployments": [
            {
                "name": d.name,
                "config": d.config,
                "target": str(d.target),
                "nodes": _nodes(spec, d.target.target),
                "depends_on": list(d.all_dependencies()),
                "actions": sorted(str(a) for a in d.actions),
            }
            for d in spec.software.deployments
        ],
    }


def _nodes(spec: ClusterSpec, target: str) -> int:
    group = spec.node_group(target)
    if group is not None:
        return group.count
    return 1 if spec.instance(target) is not None else 0


def show_shape(spec: ClusterSpec) -> None:
    from rich.table import Table

    table = Table(title=f"shape of {spec.name} (after the environments)", title_justify="left")
    for col in ("member", "kind", "count", "role"):
        table.add_column(col)
    for g in spec.node_groups:
        table.add_row(g.name, "node group", str(g.count), g.role or "")
    for i in spec.instances:
        table.add_row(i.name, "instance", "1", "")
    console().print(table)
    for rule in spec.groupings:
        console().print(escape(f"  {rule.describe()}: {', '.join(str(m) for m in rule.members)}"))


def show_software(spec: ClusterSpec) -> None:
    from rich.table import Table

    table = Table(title="deployments (in dependency order)", title_justify="left")
    for col in ("deployment", "config", "target", "nodes", "after", "actions"):
        table.add_column(col)
    for d in _ordered(spec):
        table.add_row(
            d["name"],
            d["config"],
            d["target"],
            str(d["nodes"]),
            ", ".join(d["depends_on"]),
            ", ".join(d["actions"]),
        )
    console().print(table)


def _ordered(spec: ClusterSpec) -> list[dict[str, Any]]:
    from shoal.planning.software import order

    view = {d["name"]: d for d in software_view(spec)["deployments"]}
    return [view[name] for name in order(spec.software)]
