"""Rich tables for the API's objects: clusters, nodes, node groups, actions, events.

Rich is imported when a table is made, not with this module: `shoal --help` needs none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

STATUS_STYLE = {
    "ACTIVE": "green",
    "SUCCEEDED": "green",
    "ERROR": "red",
    "FAILED": "red",
    "WARNING": "yellow",
    "DEGRADED": "yellow",
    "CANCELLED": "yellow",
    "DELETED": "dim",
}


def plain(value: Any) -> str:
    """A value as a string: nothing for None, lists and mappings joined."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
    return str(value)


def text(value: Any) -> str:
    """A cell: `plain`, with Rich markup escaped (a message may hold brackets)."""
    from rich.markup import escape

    return escape(plain(value))


def status(value: Any) -> str:
    s = text(value)
    style = STATUS_STYLE.get(plain(value))
    return f"[{style}]{s}[/]" if style else s


def when(value: Any) -> str:
    """An ISO timestamp as `YYYY-MM-DD HH:MM:SS`."""
    s = plain(value)
    return s.replace("T", " ")[:19] if s else ""


def table(title: str | None, columns: Iterable[str]) -> Table:
    """A table whose cells fold onto more lines in a narrow terminal, never cut with `…`."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def clusters_table(clusters: list[dict[str, Any]]) -> Table:
    # "desired": the declared server count; `describe` lists every node, volumes too.
    t = table(None, ("name", "status", "desired", "action", "created", "id"))
    for c in clusters:
        t.add_row(
            text(c.get("name")),
            status(c.get("status")),
            text(c.get("desired_capacity")),
            text(c.get("action")),
            when(c.get("created_at")),
            text(c.get("id")),
        )
    return t


def nodes_table(
    nodes: list[dict[str, Any]], title: str | None = None, *, wide: bool = False
) -> Table:
    columns = ["name", "kind", "group", "status", "zone", "host", "address"]
    if wide:
        columns += ["id", "physical id", "reason"]
    t = table(title, columns)
    for n in by_name(nodes):
        row = [
            text(n.get("name")),
            text(n.get("kind")),
            text(n.get("group")),
            status(n.get("status")),
            text(n.get("zone")),
            text(n.get("host")),
            text(n.get("address")),
        ]
        if wide:
            row += [text(n.get("id")), text(n.get("physical_id")), text(n.get("status_reason"))]
        t.add_row(*row)
    return t


def by_name(items: Iterable[dict[str, Any]], key: str = "name") -> list[dict[str, Any]]:
    """`items` in the natural order of their `key` (web-2 before web-10), not the API's
    (creation, then id: issue 36)."""
    from shoal.model.names import natural_key

    return sorted(items, key=lambda x: natural_key(plain(x.get(key))))


def profile_summary(profile: Any) -> str:
    """`m1.small/cirros` for an inline server profile, the name for a named one."""
    if isinstance(profile, dict):
        if "type" in profile:
            if profile.get("type") == "volume":
                return f"volume {text(profile.get('size'))}G"
            return "/".join(text(profile.get(k)) for k in ("flavor", "image") if profile.get(k))
        return ", ".join(f"{k}: {profile_summary(v)}" for k, v in profile.items())
    return text(profile)


def nodegroups_table(groups: list[dict[str, Any]], title: str | None = None) -> Table:
    t = table(title, ("name", "count", "min", "max", "nodes", "zones", "role", "profile"))
    for g in groups:
        t.add_row(
            text(g.get("name")),
            text(g.get("count")),
            text(g.get("min")),
            text(g.get("max")),
            text(g.get("nodes")),
            text(g.get("zones")),
            text(g.get("role")),
            profile_summary(g.get("profile")),
        )
    return t


def outputs_table(outputs: list[dict[str, Any]], title: str | None = None) -> Table:
    """A cluster's outputs: a value as JSON when it is a list or mapping, so it reads back."""
    t = table(title, ("name", "value", "description"))
    for o in outputs:
        value = o.get("value")
        if o.get("status") == "pending":
            cell = f"[yellow]pending[/]: {text(o.get('reason'))}"
        elif isinstance(value, list | dict):
            cell = text(json.dumps(value))
        else:
            cell = text(value)
        t.add_row(text(o.get("name")), cell, text(o.get("description")))
    return t


def actions_table(actions: list[dict[str, Any]], *, wide: bool = False) -> Table:
    """Near 80 columns by default (ids whole, folded if need be); `-o wide` adds target and
    created time."""
    columns = ["id", "action", "status", "ended", "reason"]
    if wide:
        columns[3:3] = ["target", "created"]
    t = table(None, columns)
    for a in actions:
        row = [
            text(a.get("id")),
            text(a.get("action")),
            status(a.get("status")),
            when(a.get("end_time")),
            text(a.get("status_reason")),
        ]
        if wide:
            row[3:3] = [text(a.get("target")), when(a.get("created_at"))]
        t.add_row(*row)
    return t


def events_table(events: list[dict[str, Any]]) -> Table:
    t = table(None, ("id", "time", "level", "object", "name", "status", "message"))
    for e in events:
        t.add_row(
            text(e.get("id")),
            when(e.get("timestamp")),
            level(e.get("level")),
            text(e.get("obj_type")),
            text(e.get("obj_name")),
            status(e.get("status")),
            text(e.get("message")),
        )
    return t


def level(value: Any) -> str:
    s = plain(value)
    return {"ERROR": "[red]ERROR[/]", "WARNING": "[yellow]WARNING[/]"}.get(s, s)


def event_line(e: dict[str, Any]) -> str:
    """One event as a log line: `12:01:02 NODE db-0 ACTIVE: created on az1-host1`."""
    ts = when(e.get("timestamp"))[11:]
    lvl = plain(e.get("level"))
    mark = f"{level(lvl)} " if lvl not in ("", "INFO") else ""
    return (
        f"[dim]{ts}[/] {mark}{text(e.get('obj_type'))} [bold]{text(e.get('obj_name'))}[/] "
        f"{status(e.get('status'))}: {text(e.get('message'))}"
    )


def fields_table(rows: Iterable[tuple[str, Any]], title: str | None = None) -> Table:
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column()
    for k, v in rows:
        if k == "status":
            cell = status(v)
        elif isinstance(v, str) and ISO.match(v):
            cell = when(v)
        else:
            cell = text(v)
        t.add_row(k, cell)
    return t
