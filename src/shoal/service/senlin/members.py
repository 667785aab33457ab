"""Senlin's membership actions: nodes adopted into a cluster, released from it, replaced, and
a member created or deleted through the node API.

Each request is checked in Senlin's order and words, then translated into edits
(`AdoptNodes`, `ReleaseNodes`, `RemoveNodes`, `AddInstances`) submitted on the cluster
service's one path, so a Senlin membership change and a native one can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from shoal.documents.names import NAME_RULE, is_name
from shoal.model.enums import ActionKind, NodeStatus
from shoal.service.clusters import Asked, ClusterService, Submitted
from shoal.service.edits import AdoptNodes, Edit, ReleaseNodes
from shoal.service.errors import NotFound
from shoal.service.senlin import meta
from shoal.service.senlin.edits import KeepProfiles
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported
from shoal.service.senlin.member_names import known_name, member_name
from shoal.service.senlin.nodes import find_node
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.shapes import JsonObject
from shoal.service.senlin.sizes import bounds_of, check_size_params
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store import nodes as node_repo
from shoal.store import senlin_nodes as senlin_node_repo
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.senlin_conn import Conn

DEFAULT_PROFILE_TYPE = "os.nova.server-1.0"


class SenlinMembers:
    def __init__(self, clusters: ClusterService, profiles: SenlinProfiles) -> None:
        self.svc = clusters
        self.profiles = profiles
        self.db = clusters.db

    def profile_type(self, conn: Conn, who: Principal, profile_id: str | None) -> str:
        if profile_id is None:
            return DEFAULT_PROFILE_TYPE
        try:
            return self.profiles.row(conn, who, profile_id).stored_type
        except (NotFound, BadRequest):
            return DEFAULT_PROFILE_TYPE

    def _cluster_type(self, conn: Conn, who: Principal, cluster: ClusterRecord) -> str:
        mine = meta.decode(cluster.document.get("metadata", {})).profile_id
        return self.profile_type(conn, who, mine)

    def _check_size(self, cluster: ClusterRecord, change: int) -> None:
        """Senlin's size check of a membership change of `change` nodes."""
        was = bounds_of(cluster.document)
        problem = check_size_params(was, was.desired + change, None, None, True)
        if problem:
            raise BadRequest(problem)

    def _found(
        self, conn: Conn, who: Principal, refs: Sequence[str], what: str
    ) -> list[NodeRecord]:
        found: list[NodeRecord] = []
        missing: list[str] = []
        for r in refs:
            try:
                found.append(find_node(conn, who, r))
            except NotFound:
                missing.append(r)
        if missing:
            raise BadRequest(f"{what} not found: {missing}.")
        return found

    def _joinable(
        self,
        conn: Conn,
        who: Principal,
        cluster: ClusterRecord,
        nodes: dict[str, NodeRecord],
        *,
        owned: str,
        odd: str,
        leaving: frozenset[str] = frozenset(),
    ) -> tuple[str, ...]:
        """Senlin's checks of standalone nodes joining `cluster`, in its order and words; the
        name each takes as a member (`member_names.py`)."""
        taken_by = [r for r, n in nodes.items() if n.cluster_id is not None]
        if taken_by:
            raise BadRequest(owned.format(taken_by))
        extras = senlin_node_repo.get_extras(conn, [n.id for n in nodes.values()])
        mine = self._cluster_type(conn, who, cluster)
        differ = [
            r
            for r, n in nodes.items()
            if self.profile_type(conn, who, extras[n.id].profile_id if n.id in extras else None)
            != mine
        ]
        if differ:
            raise BadRequest(odd.format(differ))
        idle = [r for r, n in nodes.items() if n.status is not NodeStatus.ACTIVE]
        if idle:
            raise BadRequest(f"Nodes are not ACTIVE: {idle}.")
        members = node_repo.list_nodes(conn, cluster.id)
        # Members' names and the node groups' (named after the cluster) share a namespace:
        # a joining node whose name is taken joins under another (issue 38: Senlin lets a
        # node share its cluster's name, and its clients' tests do).
        taken = {n.name for n in members if n.id not in leaving}
        taken |= {str(g.get("name")) for g in cluster.document.get("node_groups", [])}
        taken |= {str(i.get("name")) for i in cluster.document.get("instances", [])}
        names: list[str] = []
        for n in nodes.values():
            name = member_name(n, taken)
            if name is None:
                raise BadRequest(f"The cluster already has nodes named {[n.name]}.")
            taken.add(name)
            names.append(name)
        return tuple(names)

    def add_nodes(self, who: Principal, ref: str, refs: Sequence[str]) -> Submitted:
        """Senlin adopts standalone nodes: each becomes an instance of the cluster's document
        and its row joins the cluster in the same transaction, so planning finds it made."""
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            found = dict(zip(refs, self._found(conn, who, refs, "Nodes"), strict=True))
            names = self._joinable(
                conn,
                who,
                cluster,
                found,
                owned="Nodes {} already owned by some cluster.",
                odd="Profile type of nodes {} does not match that of the cluster.",
            )
            self._check_size(cluster, len(found))
        nodes = tuple(found.values())
        said = {"nodes": [n.name for n in nodes], SENLIN_ACTION: "CLUSTER_ADD_NODES"}
        asked = Asked(ActionKind.CLUSTER_ADD_NODES, said)
        return self.svc.submit(who, cluster.id, [AdoptNodes(nodes, names)], asked)

    def create_member(self, who: Principal, data: JsonObject) -> tuple[str, Submitted]:
        """`POST /v1/nodes` with a cluster: a new instance of the cluster's document (the
        engine plans and makes it); the cluster's id and the submitted action."""
        name = str(data["name"])
        if not is_name(name):
            raise BadRequest(f"Invalid node name '{name}': {NAME_RULE}.")
        ref, pref = str(data["cluster_id"]), str(data["profile_id"])
        with self.db.reading() as conn:
            try:
                row = self.profiles.row(conn, who, pref)
            except NotFound:
                raise BadRequest(f"The specified profile '{pref}' could not be found.") from None
            try:
                cluster = self.svc.get(conn, who, ref)
            except NotFound:
                raise BadRequest(f"The specified cluster '{ref}' could not be found.") from None
            if row.stored_type != self._cluster_type(conn, who, cluster):
                raise BadRequest("Node and cluster have different profile type, operation aborted.")
            self._check_size(cluster, 1)
        instance = {"name": name, "profile": self.profiles.native(row)}
        return cluster.id, self.svc.add_nodes(who, cluster.id, [instance])

    def _members(
        self, conn: Conn, who: Principal, cluster: ClusterRecord, refs: list[str]
    ) -> list[NodeRecord]:
        """The nodes `refs` name, all members of `cluster`; Senlin's 400s otherwise."""
        found = dict(zip(refs, self._found(conn, who, refs, "Nodes"), strict=True))
        strangers = [r for r, n in found.items() if n.cluster_id != cluster.id]
        if strangers:
            raise BadRequest(f"Nodes not members of specified cluster: {strangers}.")
        return list(found.values())

    def del_nodes(
        self, who: Principal, ref: str, refs: list[str], destroy: bool = False
    ) -> Submitted:
        """Senlin's del_nodes: the nodes leave the cluster and stay, standalone; with
        `destroy_after_deletion` they are deleted."""
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            nodes = self._members(conn, who, cluster, refs)
            self._check_size(cluster, -len(nodes))
        if destroy:
            return self.svc.del_nodes(who, cluster.id, [n.id for n in nodes])
        return self._swap(who, cluster, nodes, [], "CLUSTER_DEL_NODES")

    def replace_nodes(self, who: Principal, ref: str, pairs: dict[str, str]) -> Submitted:
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            olds = dict(
                zip(pairs, self._found(conn, who, list(pairs), "Original nodes"), strict=True)
            )
            new_refs = list(pairs.values())
            news = dict(
                zip(new_refs, self._found(conn, who, new_refs, "Replacement nodes"), strict=True)
            )
            strangers = [o for o, n in olds.items() if n.cluster_id != cluster.id]
            if strangers:
                raise BadRequest(
                    f"Nodes {strangers} to be replaced are not members of the cluster {ref}."
                )
            names = self._joinable(
                conn,
                who,
                cluster,
                news,
                owned="Nodes {} already member of a cluster.",
                odd="Profile type of nodes {} do not match that of the cluster.",
                leaving=frozenset(n.id for n in olds.values()),
            )
        return self._swap(
            who,
            cluster,
            list(olds.values()),
            list(news.values()),
            "CLUSTER_REPLACE_NODES",
            names,
        )

    def _swap(
        self,
        who: Principal,
        cluster: ClusterRecord,
        olds: list[NodeRecord],
        news: list[NodeRecord],
        senlin_action: str,
        names: tuple[str, ...] = (),
    ) -> Submitted:
        """Nodes leave the cluster and stay, standalone (Senlin's del_nodes, and the originals
        of its replace_nodes), keeping the cluster's profile; standalone nodes join it, as
        `add_nodes` adopts them. One action, one transaction."""
        profile_id = meta.decode(cluster.document.get("metadata", {})).profile_id
        changes: list[Edit] = [
            KeepProfiles(tuple(n.id for n in olds), profile_id),
            ReleaseNodes(tuple(olds), tuple(known_name(n) for n in olds)),
            AdoptNodes(tuple(news), names),
        ]
        said: JsonObject = {SENLIN_ACTION: senlin_action}
        if news:
            said["nodes"] = {o.name: n.name for o, n in zip(olds, news, strict=True)}
            kind = ActionKind.CLUSTER_ADD_NODES
        else:
            said["nodes"] = [o.name for o in olds]
            kind = ActionKind.CLUSTER_DEL_NODES
        return self.svc.submit(who, cluster.id, changes, Asked(kind, said))

    def delete_node(self, who: Principal, ref: str) -> Submitted:
        """A member node deleted: the cluster shrinks by it (Senlin lowers desired capacity)."""
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
        if node.cluster_id is None:
            raise FeatureNotSupported("standalone nodes are deleted through the node API")
        return self.svc.del_nodes(who, node.cluster_id, [node.id])
