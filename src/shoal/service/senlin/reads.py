"""Read-only Senlin questions: clusters, nodes, actions and events, with Senlin's filters,
sorting and marker/limit paging, scoped to the caller's project (an admin sees all)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from shoal.service.errors import NotFound
from shoal.service.senlin import meta
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.nodes import find_node
from shoal.service.senlin.profiles import profile_of, senlin_name
from shoal.service.senlin.queries import MAX_LIMIT
from shoal.service.senlin.reasons import cluster_reason, node_reason
from shoal.service.senlin.shapes import ActionView, ClusterView, EventView, JsonObject, NodeView
from shoal.service.senlin.shortid import by_short_id
from shoal.service.senlin.specs import HEAT_STACK
from shoal.service.senlin.stacks import stack_details
from shoal.service.senlin.views import (
    SENLIN_ACTION,
    action_view,
    cluster_view,
    event_view,
    node_view,
)
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import profiles as profile_repo
from shoal.store import senlin_actions as senlin_action_repo
from shoal.store import senlin_lists as senlin_list_repo
from shoal.store import senlin_nodes as senlin_node_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.senlin_conn import Conn

Filters = dict[str, tuple[str, ...]]
"""A list's filters: field -> the values it may have (any of them)."""


@dataclass(frozen=True, slots=True)
class Paging:
    limit: int | None = None
    marker: str | None = None
    sort: str | None = None
    everyone: bool = False
    """Senlin's `global_project`: an admin's list spans every project."""


Item = TypeVar("Item", bound=Mapping[str, object])


def _by(key: str) -> Callable[[Mapping[str, object]], tuple[bool, str]]:
    """Senlin's order on one key: present values as text, absent ones last."""
    return lambda item: (item.get(key) is None, str(item.get(key) or ""))


def page(items: list[Item], paging: Paging, default_sort: str) -> list[Item]:
    """Sorted by `sort` ("key:dir,key2"), then the items after `marker`, at most `limit`."""
    for part in reversed((paging.sort or default_sort).split(",")):
        key, _, direction = part.strip().partition(":")
        if not key:
            continue
        if direction not in ("", "asc", "desc"):
            raise BadRequest(f"Invalid value '{direction}' specified for 'sort direction'")
        items = sorted(
            items,
            key=_by(key),
            reverse=direction == "desc",
        )
    if paging.marker is not None:
        ids = [str(i.get("id")) for i in items]
        if paging.marker not in ids:
            raise BadRequest(f"The marker '{paging.marker}' could not be found.")
        items = items[ids.index(paging.marker) + 1 :]
    if paging.limit is not None:
        items = items[: paging.limit]
    return items


def senlin_cluster_name(c: ClusterRecord) -> str:
    return meta.decode(c.document.get("metadata", {})).name or c.name


def matches(item: Mapping[str, object], filters: Filters) -> bool:
    return all(str(item.get(k)) in values for k, values in filters.items())


@dataclass(frozen=True, slots=True)
class NodePage:
    """One page of Senlin's node list, and the marker of the next when the page maximum
    (`MAX_LIMIT`) cut a list asked without `limit` (None: the list is whole)."""

    nodes: list[NodeView]
    next_marker: str | None = None


class SenlinReads:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    @staticmethod
    def _list_scope(who: Principal, paging: Paging) -> str | None:
        """Lists show the caller's project; an admin's spans all with `global_project`."""
        return None if who.is_admin and paging.everyone else who.project_id

    def _cluster(self, conn: Conn, who: Principal, ref: str) -> ClusterRecord:
        """By id, else by the name Senlin clients know (two matches are Senlin's 400), else by
        a unique short id."""
        found = cluster_repo.get_cluster(conn, ref, self._scope(who))
        if found is not None and found.id == ref:
            return found
        mine = cluster_repo.list_clusters(conn, self._scope(who))
        named = [c for c in mine if senlin_cluster_name(c) == ref]
        if len(named) > 1:
            raise BadRequest(
                f"Multiple results found matching the query criteria '{ref}'. "
                "Please be more specific."
            )
        if named:
            return named[0]
        short = by_short_id({c.id: c for c in mine}, ref)
        if short is None:
            raise NotFound(f"The cluster '{ref}' could not be found.")
        return next(c for c in mine if c.id == short)

    def _profile_of(self, conn: Conn, c: ClusterRecord) -> tuple[str | None, str | None]:
        pid = meta.decode(c.document.get("metadata", {})).profile_id
        if pid is None:
            return None, None
        row = profile_repo.get_profile(conn, c.project_id, pid)
        return pid, (row["name"] if row else None)

    def _cluster_view(self, conn: Conn, c: ClusterRecord) -> ClusterView:
        nodes = node_repo.list_nodes(conn, c.id)
        view = cluster_view(c, nodes, self._profile_of(conn, c)[1])
        recent = senlin_action_repo.latest_of_clusters(conn, [c.id])[c.id]
        view["status_reason"] = cluster_reason(c, nodes, recent)
        return view

    def clusters(self, who: Principal, filters: Filters, paging: Paging) -> list[ClusterView]:
        query = list_query(self._list_scope(who, paging), None, filters, paging, "created_at")
        with self.db.reading() as conn:
            try:
                found = senlin_list_repo.list_clusters(conn, query, meta.NAME)
            except senlin_list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{paging.marker}' could not be found.") from None
            return [self._cluster_view(conn, c) for c in found]

    def cluster(self, who: Principal, ref: str) -> ClusterView:
        with self.db.reading() as conn:
            return self._cluster_view(conn, self._cluster(conn, who, ref))

    def cluster_id(self, who: Principal, ref: str) -> str:
        with self.db.reading() as conn:
            return self._cluster(conn, who, ref).id

    def nodes(
        self,
        who: Principal,
        cluster: str | None,
        filters: Filters,
        paging: Paging,
        *,
        details: bool = False,
        tainted: bool = False,
    ) -> NodePage:
        """A page of nodes, filtered, sorted and paged in SQL. Without `limit` a page is at
        most `MAX_LIMIT` long: one more row is read to tell whether the list goes on."""
        capped = paging.limit is None
        if capped:
            paging = replace(paging, limit=MAX_LIMIT + 1)
        with self.db.reading() as conn:
            cluster_id = None
            if cluster is not None:
                try:
                    cluster_id = self._cluster(conn, who, cluster).id
                except NotFound:
                    raise BadRequest(f"Cannot find the given cluster: {cluster}.") from None
            scope = None if cluster_id is not None else self._list_scope(who, paging)
            query = list_query(scope, cluster_id, filters, paging, "init_at")
            try:
                found = senlin_list_repo.list_nodes(conn, query)
            except senlin_list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{paging.marker}' could not be found.") from None
            after = None
            if capped and len(found) > MAX_LIMIT:
                found = found[:MAX_LIMIT]
                after = found[-1].id
            return NodePage(self._node_views(conn, found, details=details, tainted=tainted), after)

    def _node_views(
        self, conn: Conn, found: list[NodeRecord], *, details: bool, tainted: bool
    ) -> list[NodeView]:
        """Senlin's node views: the cluster's profile, or the node's own (standalone nodes and
        nodes made through the façade), with its metadata, role and tainted flag."""
        profiles = self._profiles_by_cluster(conn, {n.cluster_id for n in found})
        extras = senlin_node_repo.get_extras(conn, [n.id for n in found])
        own = senlin_action_repo.latest_of_nodes(conn, [n.id for n in found])
        clusters = senlin_action_repo.latest_of_clusters(
            conn, [n.cluster_id for n in found if n.cluster_id], per_cluster=5
        )
        names: dict[str, str | None] = {}
        stacks: dict[str, JsonObject | None] = {}
        views = []
        for n in found:
            view = node_view(n, *profiles[n.cluster_id], details=details, tainted=tainted)
            recent = clusters.get(n.cluster_id, []) if n.cluster_id else []
            view["status_reason"] = node_reason(n, own.get(n.id), recent)
            e = extras.get(n.id)
            if e is not None:
                if e.profile_id is not None and e.profile_id not in names:
                    row = profile_repo.get_profile(conn, n.project_id, e.profile_id)
                    names[e.profile_id] = senlin_name(row) if row else None
                view["metadata"] = e.metadata
                view["role"] = e.role or view["role"]
                if e.profile_id is not None:
                    view["profile_id"] = e.profile_id
                    view["profile_name"] = names[e.profile_id]
                if tainted:
                    view["tainted"] = e.tainted
            if details:
                self._stack_details(conn, n, view, stacks)
            if view["cluster_id"] is None:
                view["cluster_id"] = ""
            views.append(view)
        return views

    @staticmethod
    def _stack_details(
        conn: Conn, n: NodeRecord, view: NodeView, stacks: dict[str, JsonObject | None]
    ) -> None:
        """A node of an `os.heat.stack` profile shows its stack's resources (the template's,
        as Senlin showed Heat's stack) under `details.stack`; read once per profile in a
        listing, with each node's own status."""
        pid = view.get("profile_id")
        if not pid:
            return
        if pid not in stacks:
            row = profile_repo.get_profile(conn, n.project_id, pid)
            is_stack = row is not None and row.get("type") == HEAT_STACK
            stacks[pid] = stack_details(profile_of(row).properties) if row and is_stack else None
        stack = stacks[pid]
        if stack is not None:
            view["details"]["stack"] = {"stack_status": str(n.status), **stack}

    def _profiles_by_cluster(
        self, conn: Conn, ids: Iterable[str | None]
    ) -> dict[str | None, tuple[str | None, str | None]]:
        out: dict[str | None, tuple[str | None, str | None]] = {}
        for cid in ids:
            c = cluster_repo.get_cluster(conn, cid, include_deleted=True) if cid else None
            out[cid] = self._profile_of(conn, c) if c is not None else (None, None)
        return out

    def member_id(self, cluster_id: str, name: str) -> str | None:
        """The id of the node `name` of a cluster, once the engine has planned it."""
        with self.db.reading() as conn:
            for n in node_repo.list_nodes(conn, cluster_id):
                if n.name == name:
                    return n.id
        return None

    def node(
        self, who: Principal, ref: str, *, details: bool = False, tainted: bool = False
    ) -> NodeView:
        with self.db.reading() as conn:
            n = find_node(conn, who, ref)
            return self._node_views(conn, [n], details=details, tainted=tainted)[0]

    def actions(self, who: Principal, filters: Filters, paging: Paging) -> list[ActionView]:
        with self.db.reading() as conn:
            cluster_id = None
            if filters.get("cluster_id"):
                cluster_id = self._cluster(conn, who, filters["cluster_id"][0]).id
            query = list_query(
                self._list_scope(who, paging), cluster_id, filters, paging, "created_at"
            )
            try:
                found = senlin_list_repo.list_actions(conn, query)
            except senlin_list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{paging.marker}' could not be found.") from None
            return self._with_deps(conn, [action_view(a) for a in found])

    @staticmethod
    def _with_deps(conn: Conn, views: list[ActionView]) -> list[ActionView]:
        on, by = senlin_action_repo.dependencies(conn, [str(v["id"]) for v in views])
        for v in views:
            v["depends_on"] = sorted(set(on.get(v["id"], [])))
            v["depended_by"] = sorted(set(by.get(v["id"], [])))
        return views

    def action(self, who: Principal, ref: str) -> ActionView:
        scope = self._scope(who)
        with self.db.reading() as conn:
            a = action_repo.get_action(conn, ref, scope)
            if a is None:
                prefixed = senlin_action_repo.ids_with_prefix(conn, ref, scope)
                short = by_short_id(prefixed, ref)
                a = action_repo.get_action(conn, short, scope) if short is not None else None
            if a is None:
                raise NotFound(f"The action '{ref}' could not be found.")
            return self._with_deps(conn, [action_view(a)])[0]

    def events(self, who: Principal, filters: Filters, paging: Paging) -> list[EventView]:
        with self.db.reading() as conn:
            cluster_id = None
            if filters.get("cluster_id"):
                ref = filters["cluster_id"][0]
                c = cluster_repo.get_cluster(conn, ref, self._scope(who), include_deleted=True)
                if c is None:
                    raise NotFound(f"The cluster '{ref}' could not be found.")
                cluster_id = c.id
            query = list_query(
                self._list_scope(who, paging), cluster_id, filters, paging, "timestamp"
            )
            try:
                found = senlin_list_repo.list_events(conn, query)
            except senlin_list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{paging.marker}' could not be found.") from None
            names = _action_names(conn, {e.action_id for e in found if e.action_id})
        return [event_view(e, names) for e in found]

    def event(self, who: Principal, ref: str) -> EventView:
        for e in self.events(who, {"id": (ref,)}, Paging(everyone=True)):
            return e
        raise NotFound(f"The event '{ref}' could not be found.")


def list_query(
    project_id: str | None,
    cluster_id: str | None,
    filters: Filters,
    paging: Paging,
    default_sort: str,
) -> senlin_list_repo.ListQuery:
    """A list request as the store pages it (`sort` was checked by the façade)."""
    return senlin_list_repo.ListQuery(
        project_id=project_id,
        cluster_id=cluster_id,
        filters={k: v for k, v in filters.items() if k != "cluster_id"},
        sort=senlin_list_repo.parse_sort(paging.sort or default_sort),
        marker=paging.marker,
        limit=paging.limit,
    )


def _action_names(conn: Conn, ids: set[str]) -> dict[str, str]:
    """Action id -> the name Senlin would show (its kind, or the Senlin action it stands for)."""
    found = senlin_action_repo.kinds_and_inputs(conn, sorted(ids))
    return {i: str(inputs.get(SENLIN_ACTION) or kind) for i, (kind, inputs) in found.items()}
