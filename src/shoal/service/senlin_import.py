"""`shoal import senlin`: a Senlin deployment's clusters become Shoal clusters, in place.

Each Senlin cluster becomes a Shoal cluster exactly as the Senlin façade would have made it (one
node group from the profile, its policies applied by the façade's own mapping), under the same
ids; each node whose server exists is adopted, bound to the same provider id with its host and
zone read back from the provider. The import only reads the cloud (`Provider.get`) and never
writes to Senlin's database (`store/senlin_source.py`). It goes cluster by cluster, each in one
transaction: a cluster already imported is left as it is, one Senlin is still acting on is
refused with that reason, and anything that does not map is reported by name.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from shoal.clock import Clock
from shoal.documents.export import profile_document
from shoal.documents.names import is_name
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.nodes import expand
from shoal.providers.base import Provider, ResourceState
from shoal.service.clusters import ClusterService
from shoal.service.edits import Document
from shoal.service.errors import ErrorKind, Invalid, ServiceError
from shoal.service.senlin import meta
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.policies import POLICY_TYPES, effect, parse_policy_spec
from shoal.service.senlin.profiles import ENVELOPE, SenlinProfiles, profile_of
from shoal.service.senlin.receivers import ACTIONS as RECEIVER_ACTIONS
from shoal.service.senlin.receivers import RESIZE, native_params
from shoal.service.senlin.shapes import JsonObject
from shoal.service.senlin.specs import HEAT_STACK, NOVA_SERVER
from shoal.store import nodes as node_repo
from shoal.store import senlin_adopt as repo
from shoal.store import senlin_receivers as senlin_receiver_repo
from shoal.store.database import Database
from shoal.store.records import NewNode
from shoal.store.senlin_conn import Conn
from shoal.store.senlin_receivers import SenlinReceiver
from shoal.store.senlin_source import (
    SenlinClusterRow,
    SenlinNode,
    SenlinSnapshot,
    SenlinSourceError,
    SenlinUrlError,
    read_snapshot,
    source_url,
)

TRUSTS = (
    "Senlin's trusts (the `credential` table) are not copied: Shoal acts on the cloud with its "
    "own provider credentials (clouds.yaml / OS_* of `shoal server`), and a webhook runs as the "
    "receiver's project."
)


READS_IN_FLIGHT = 16
"""Provider reads (`get` of a node's server) one cluster's import keeps in flight."""


class ImportFailed(ServiceError):
    """The Senlin database could not be read."""

    kind = ErrorKind.UNAVAILABLE
    code = "senlin_unreadable"
    title = "Senlin database unreadable"


def checked_url(url: str) -> str:
    """The database URL the import reads, or a 422 at `/database`."""
    try:
        return source_url(url)
    except SenlinUrlError as bad:
        problem = [{"path": "/database", "message": str(bad)}]
        raise Invalid("invalid Senlin database URL", problem) from None


class ItemJson(TypedDict):
    id: str
    name: str
    type: str
    mapped: bool
    why: NotRequired[str]


class NodeJson(TypedDict):
    id: str
    name: str
    physical_id: str | None
    adopted: bool
    shoal_name: NotRequired[str]
    host: NotRequired[str | None]
    zone: NotRequired[str | None]
    why: NotRequired[str]


class ClusterJson(TypedDict):
    id: str
    name: str
    project: str
    outcome: str
    reasons: list[str]
    desired_capacity: int
    min_size: int
    max_size: int
    nodes: list[NodeJson]
    policies: list[ItemJson]
    receivers: list[ItemJson]
    warnings: list[str]


class Credentials(TypedDict):
    found: int
    copied: int
    why: str


class ReportJson(TypedDict):
    """The import's report (`POST /v1/imports/senlin`, `shoal import senlin`)."""

    dry_run: bool
    summary: dict[str, int]
    clusters: list[ClusterJson]
    standalone_nodes: list[NodeJson]
    receivers_without_cluster: list[ItemJson]
    credentials: Credentials


@dataclass(frozen=True, slots=True)
class ReceiverToWrite:
    """A Senlin receiver the import writes: its native row and what the façade keeps."""

    id: str
    name: str
    action: str
    params: JsonObject
    senlin_action: str
    senlin_params: JsonObject


@dataclass(frozen=True, slots=True)
class Item:
    """A policy or receiver: mapped onto Shoal, or reported with why not."""

    id: str
    name: str
    type: str
    mapped: bool
    why: str = ""

    def to_json(self) -> ItemJson:
        out: ItemJson = {"id": self.id, "name": self.name, "type": self.type, "mapped": self.mapped}
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True, slots=True)
class NodeOutcome:
    id: str
    name: str
    physical_id: str | None
    adopted: bool
    shoal_name: str = ""
    host: str | None = None
    zone: str | None = None
    why: str = ""
    address: str | None = None

    def to_json(self) -> NodeJson:
        out: NodeJson = {
            "id": self.id,
            "name": self.name,
            "physical_id": self.physical_id,
            "adopted": self.adopted,
        }
        if self.adopted:
            out["shoal_name"] = self.shoal_name
            out["host"] = self.host
            out["zone"] = self.zone
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class ClusterPlan:
    id: str
    name: str
    project: str
    outcome: str
    """`import` (done, or to do on a dry run), `unchanged` (imported before), `refused`."""
    reasons: list[str] = field(default_factory=list)
    desired: int = 0
    min_size: int = 0
    max_size: int = -1
    nodes: list[NodeOutcome] = field(default_factory=list)
    policies: list[Item] = field(default_factory=list)
    receivers: list[Item] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    document: Document = field(default_factory=dict)
    profile_row: dict[str, Any] = field(default_factory=dict)
    """The profile's row as `store/senlin_adopt.put_profile` writes it."""
    node_rows: list[NewNode] = field(default_factory=list)
    receiver_rows: list[ReceiverToWrite] = field(default_factory=list)

    def to_json(self) -> ClusterJson:
        return {
            "id": self.id,
            "name": self.name,
            "project": self.project,
            "outcome": self.outcome,
            "reasons": self.reasons,
            "desired_capacity": self.desired,
            "min_size": self.min_size,
            "max_size": self.max_size,
            "nodes": [n.to_json() for n in self.nodes],
            "policies": [p.to_json() for p in self.policies],
            "receivers": [r.to_json() for r in self.receivers],
            "warnings": self.warnings,
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    dry_run: bool
    clusters: tuple[ClusterPlan, ...]
    standalone: tuple[NodeOutcome, ...]
    credentials: int
    loose_receivers: tuple[Item, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(p.outcome for p in self.clusters)
        return {
            "clusters": len(self.clusters),
            "imported": c["import"],
            "unchanged": c["unchanged"],
            "refused": c["refused"],
            "nodes_adopted": sum(n.adopted for p in self.clusters for n in p.nodes),
            "nodes_reported": sum(not n.adopted for p in self.clusters for n in p.nodes),
        }

    def to_json(self) -> ReportJson:
        return {
            "dry_run": self.dry_run,
            "summary": self.counts,
            "clusters": [p.to_json() for p in self.clusters],
            "standalone_nodes": [n.to_json() for n in self.standalone],
            "receivers_without_cluster": [r.to_json() for r in self.loose_receivers],
            "credentials": {"found": self.credentials, "copied": 0, "why": TRUSTS},
        }


def _senlin_name(name: str) -> str:
    """A Shoal name for a Senlin one (Senlin's names allow what Shoal's do not)."""
    if is_name(name):
        return name
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name).strip("-._")
    return cleaned[:60] or "senlin"


class SenlinImport:
    """Reads a Senlin database, plans each cluster, and (unless a dry run) records it."""

    def __init__(
        self,
        db: Database,
        provider: Provider,
        clusters: ClusterService,
        inventory: Callable[[], Inventory],
        clock: Clock,
    ) -> None:
        self.db = db
        self.provider = provider
        self.clusters = clusters
        self.profiles = SenlinProfiles(db, inventory, clock)
        self.inventory = inventory
        self.clock = clock

    async def run(self, url: str, project: str | None, dry_run: bool) -> ImportReport:
        checked_url(url)
        try:
            snap = await asyncio.to_thread(read_snapshot, url, project)
        except SenlinSourceError as e:
            raise ImportFailed(str(e), [{"path": "/database", "message": str(e)}]) from e
        plans: list[ClusterPlan] = []
        for c in snap.clusters:
            plan = await self._plan(c, snap)
            if plan.outcome == "import" and not dry_run:
                await asyncio.to_thread(self._write, plan, c, snap)
            plans.append(plan)
        standalone = tuple(
            NodeOutcome(
                n.id,
                n.name,
                n.physical_id,
                False,
                why="a standalone Senlin node (no cluster) is not imported; "
                "adopt it into a cluster in Senlin first, or leave it",
            )
            for n in snap.standalone
        )
        loose = tuple(
            Item(r.id, r.name, r.action, False, "it belongs to no cluster of this import")
            for r in snap.loose_receivers
        )
        return ImportReport(dry_run, tuple(plans), standalone, snap.credentials, loose)

    # -- planning -----------------------------------------------------------------------------

    async def _plan(self, c: SenlinClusterRow, snap: SenlinSnapshot) -> ClusterPlan:
        plan = ClusterPlan(c.id, c.name, c.project, "import")
        with self.db.reading() as conn:
            if repo.cluster_exists(conn, c.id):
                plan.outcome = "unchanged"
                plan.reasons.append("already imported (a Shoal cluster has this id)")
                return plan
        if c.locked_by or c.unfinished:
            plan.outcome = "refused"
            if c.locked_by:
                plan.reasons.append(
                    "Senlin is still acting on it: cluster_lock held by action(s) "
                    + ", ".join(c.locked_by)
                )
            if c.unfinished:
                plan.reasons.append("unfinished Senlin action(s): " + "; ".join(c.unfinished))
            return plan
        profile = snap.profiles.get(c.profile_id)
        if profile is None or profile.type not in (NOVA_SERVER, HEAT_STACK):
            plan.outcome = "refused"
            kind = "missing" if profile is None else f"of type {profile.type}"
            plan.reasons.append(
                f"its profile {c.profile_id} is {kind}; Shoal imports os.nova.server-1.0 "
                "and os.heat.stack-1.0"
            )
            return plan
        env = {"name": profile.name, "spec": profile.spec, "metadata": profile.metadata}
        plan.profile_row = {
            "id": profile.id,
            "project_id": c.project,
            "name": profile.name,
            "type": profile.type,
            "spec": {ENVELOPE: dict(env, updated_at=None)},
            "created_at": self.clock.now(),
        }
        try:
            native = self.profiles.native(profile_of(plan.profile_row))
        except ServiceError as e:
            plan.outcome = "refused"
            plan.reasons.append(f"its profile '{profile.name}' does not map: {e}")
            return plan
        name = _senlin_name(c.name)
        with self.db.reading() as conn:
            if repo.cluster_name_taken(conn, c.project, name):
                # Senlin's names repeat, Shoal's are unique per project: the Senlin name is
                # kept in the document's metadata, where the façade shows it from.
                name = f"{name[:54]}-{c.id[:8]}"
        group: Document = {"name": name, "profile": native, "min": c.min_size}
        doc: Document = {"name": name, "node_groups": [group]}
        bindings = self._policies(plan, c, snap, doc, group)
        await self._nodes(plan, c, profile.type)
        self._known_hosts(plan)
        adopted = [n for n in plan.nodes if n.adopted]
        count = len(adopted)
        if count != c.desired_capacity:
            plan.warnings.append(
                f"desired_capacity {c.desired_capacity} becomes {count}: only nodes whose "
                "resource exists are adopted, and the import creates nothing (resize the "
                "cluster afterwards to make up the difference)"
            )
        if count < c.min_size:
            plan.warnings.append(f"min_size {c.min_size} becomes {count}, with the nodes adopted")
        if c.status != "ACTIVE":
            plan.warnings.append(f"Senlin showed it {c.status or 'without a status'}")
        plan.desired = count
        plan.min_size = min(c.min_size, count)
        plan.max_size = c.max_size
        group["count"] = count
        group["min"] = plan.min_size
        if c.max_size >= 0:
            group["max"] = max(c.max_size, count)
        extra = meta.SenlinMeta(
            metadata=dict(c.metadata),
            profile_id=profile.id,
            timeout=c.timeout if c.timeout is not None else meta.DEFAULT_TIMEOUT,
            config=dict(c.config),
            policies=bindings,
            name=c.name if name != c.name else None,
        )
        doc["metadata"] = meta.encode(extra)
        plan.document = doc
        try:
            spec = self.clusters.spec_of(doc)
        except Invalid as bad:
            plan.outcome = "refused"
            plan.reasons.append(f"its Shoal document is invalid: {bad}: {bad.details}")
            return plan
        self._node_rows(plan, c, spec, adopted)
        self._receivers(plan, c)
        self._rule_warnings(plan, doc)
        return plan

    def _policies(
        self,
        plan: ClusterPlan,
        c: SenlinClusterRow,
        snap: SenlinSnapshot,
        doc: Document,
        group: Document,
    ) -> tuple[meta.PolicyBinding, ...]:
        bound: list[meta.PolicyBinding] = []
        for b in c.bindings:
            p = snap.policies.get(b.policy_id)
            if p is None:
                plan.policies.append(Item(b.policy_id, "", "", False, "the policy row is missing"))
                continue
            if "loadbalance" in p.type:
                # The façade serves this type now (issue 26), but binding it here would make
                # Shoal build a second balancer beside the Octavia one Senlin made: adopting an
                # existing balancer is not built, so the import leaves it as it is.
                why = "an existing load balancer is not adopted; keep the LB as it is"
                plan.policies.append(Item(p.id, p.name, p.type, False, why))
                continue
            if "region_placement" in p.type:
                why = "Shoal runs in one region; the policy would change nothing"
                plan.policies.append(Item(p.id, p.name, p.type, False, why))
                continue
            if p.type not in POLICY_TYPES:
                why = f"Shoal has no {p.type.rsplit('-', 1)[0]} policy"
                plan.policies.append(Item(p.id, p.name, p.type, False, why))
                continue
            try:
                checked = parse_policy_spec(p.spec)
                e = effect(checked, str(group["name"]), p.id)
            except (ServiceError, KeyError, TypeError, ValueError) as bad:
                plan.policies.append(Item(p.id, p.name, p.type, False, f"its spec: {bad}"))
                continue
            plan.policies.append(Item(p.id, p.name, p.type, True))
            bound.append(meta.PolicyBinding(p.id, b.enabled, b.priority))
            if b.enabled:
                group.update(copy.deepcopy(e.group))
                doc.setdefault("groupings", []).extend(copy.deepcopy(e.groupings))
        return tuple(bound)

    async def _nodes(self, plan: ClusterPlan, c: SenlinClusterRow, profile_type: str) -> None:
        # A few reads at a time: a thousand-node cluster is not a thousand round trips in a row.
        limit = asyncio.Semaphore(READS_IN_FLIGHT)

        async def one(n: SenlinNode) -> NodeOutcome:
            async with limit:
                return await self._node(n, profile_type)

        plan.nodes.extend(await asyncio.gather(*(one(n) for n in c.nodes)))

    async def _node(self, n: SenlinNode, profile_type: str) -> NodeOutcome:
        if n.status != "ACTIVE":
            return NodeOutcome(
                n.id,
                n.name,
                n.physical_id,
                False,
                why=f"status {n.status} in Senlin ({n.status_reason or 'no reason given'})",
            )
        if not n.physical_id:
            return NodeOutcome(n.id, n.name, None, False, why="no physical resource in Senlin")
        if profile_type == HEAT_STACK:
            return NodeOutcome(
                n.id,
                n.name,
                n.physical_id,
                False,
                why="its Heat stack cannot be read back: Shoal's providers see servers and "
                "volumes, not Heat stacks",
            )
        try:
            found = await self.provider.get(NodeKind.SERVER, n.physical_id)
        except Exception as e:  # the cloud's answer, whatever it is, is reported
            return NodeOutcome(n.id, n.name, n.physical_id, False, why=f"cannot read it: {e}")
        if found.state is ResourceState.MISSING:
            return NodeOutcome(
                n.id, n.name, n.physical_id, False, why="its server no longer exists"
            )
        if found.state is not ResourceState.ACTIVE:
            return NodeOutcome(
                n.id, n.name, n.physical_id, False, why=f"its server is {found.state}"
            )
        return NodeOutcome(
            n.id,
            n.name,
            n.physical_id,
            True,
            host=found.host,
            zone=found.zone,
            address=found.address,
        )

    def _known_hosts(self, plan: ClusterPlan) -> None:
        """Adopted nodes on hosts Shoal's inventory names. A tenant does not see hypervisors
        (OpenStack as a tenant: hosts are a zone's slots), so a node the provider shows on no
        known host is recorded on its zone's least used slot; with no such zone it is not
        adopted (Shoal would take its host for lost and replace it)."""
        inv = self.inventory()
        names = {h.name for h in inv.hosts}
        by_zone: dict[str, list[str]] = {}
        for h in inv.hosts:
            by_zone.setdefault(h.zone, []).append(h.name)
        used: Counter[str] = Counter(n.host for n in plan.nodes if n.adopted and n.host)
        out: list[NodeOutcome] = []
        moved = 0
        for n in plan.nodes:
            if not n.adopted or n.host in names:
                out.append(n)
                continue
            slots = by_zone.get(n.zone or "", [])
            if not slots:
                why = f"its host {n.host} and zone {n.zone} are not in Shoal's inventory"
                out.append(dataclasses.replace(n, adopted=False, why=why))
                continue
            pick = min(slots, key=lambda h: used[h])
            used[pick] += 1
            moved += 1
            out.append(dataclasses.replace(n, host=pick))
        if moved:
            plan.warnings.append(
                f"{moved} node(s) on hosts the provider does not name to Shoal: recorded on "
                "their zone's slots (placement rules are then checked per slot, not per hypervisor)"
            )
        plan.nodes = out

    def _node_rows(
        self,
        plan: ClusterPlan,
        c: SenlinClusterRow,
        spec: ClusterSpec,
        adopted: list[NodeOutcome],
    ) -> None:
        """Node rows for the adopted nodes: replica = Senlin's index (a free one if it is
        missing or repeated), so the engine's diff finds every replica present."""
        by_id = {n.id: n for n in c.nodes}
        taken: set[int] = set()
        replicas: list[int] = []
        for a in adopted:
            index = by_id[a.id].index
            if index <= 0 or index in taken:
                index = max(taken | {0}) + 1
            taken.add(index)
            replicas.append(index)
        g = spec.node_groups[0]
        spec = dataclasses.replace(
            spec, node_groups=(dataclasses.replace(g, replicas=tuple(sorted(replicas))),)
        )
        specs = {s.replica: s for s in expand(spec) if s.part is None}
        now = self.clock.now()
        outcomes = []
        for a, replica in zip(adopted, replicas, strict=True):
            s = specs[replica]
            senlin = by_id[a.id]
            plan.node_rows.append(
                NewNode(
                    id=a.id,
                    project_id=c.project,
                    name=s.name,
                    kind=s.kind,
                    status=NodeStatus.ACTIVE,
                    host=a.host,
                    zone=a.zone,
                    profile=profile_document(s.profile),
                    demand=s.demand,
                    created_at=senlin.created_at or now,
                    updated_at=now,
                    cluster_id=c.id,
                    group_name=s.group,
                    part=s.part,
                    replica=replica,
                    status_reason="adopted from Senlin",
                    address=a.address,
                    provider_id=a.physical_id,
                )
            )
            outcomes.append((a.id, s.name))
        names = dict(outcomes)
        plan.nodes = [
            dataclasses.replace(n, shoal_name=names[n.id]) if n.adopted else n for n in plan.nodes
        ]

    def _receivers(self, plan: ClusterPlan, c: SenlinClusterRow) -> None:
        for r in c.receivers:
            if r.type != "webhook":
                why = f"receivers of type '{r.type}' are not supported (only webhook)"
                plan.receivers.append(Item(r.id, r.name, r.action, False, why))
                continue
            if r.action not in RECEIVER_ACTIONS and r.action != RESIZE:
                why = f"Shoal's webhooks cannot run {r.action}"
                plan.receivers.append(Item(r.id, r.name, r.action, False, why))
                continue
            native_action = RECEIVER_ACTIONS.get(r.action, "scale_out")
            try:
                params = native_params(r.params) if native_action != "recover" else {}
            except BadRequest as bad:
                plan.receivers.append(Item(r.id, r.name, r.action, False, bad.message))
                continue
            plan.receivers.append(Item(r.id, r.name, r.action, True))
            plan.receiver_rows.append(
                ReceiverToWrite(r.id, r.name, native_action, params, r.action, r.params)
            )

    def _rule_warnings(self, plan: ClusterPlan, doc: Document) -> None:
        hosts = [n.host for n in plan.nodes if n.adopted and n.host]
        for g in doc.get("groupings", []):
            rule = str(g.get("rule", ""))
            shared = [h for h, k in Counter(hosts).items() if k > 1]
            if rule.endswith("anti-affinity") and shared:
                plan.warnings.append(
                    f"{rule} already broken: host(s) {', '.join(sorted(shared))} hold more than "
                    "one node; recorded as it is, not repaired"
                )
            elif not rule.endswith("anti-affinity") and len(set(hosts)) > 1:
                plan.warnings.append(
                    f"{rule} already broken: nodes on {len(set(hosts))} hosts; recorded "
                    "as it is, not repaired"
                )

    # -- writing ------------------------------------------------------------------------------

    def _write(self, plan: ClusterPlan, c: SenlinClusterRow, snap: SenlinSnapshot) -> None:
        now = self.clock.now()
        doc = plan.document
        with self.db.transaction() as conn:
            if repo.cluster_exists(conn, c.id):  # another import got here first
                plan.outcome = "unchanged"
                return
            # Senlin's project (a Keystone project id) is the cluster's Shoal project: known
            # as is in Keystone mode; with Shoal's own tokens, `shoal project token create`.
            repo.remember_project(conn, c.project, now)
            row = dict(plan.profile_row)
            if repo.profile_name_taken(conn, c.project, row["name"]):
                # The envelope keeps the Senlin name the façade shows.
                row["name"] = f"{row['name'][:200]}~{row['id'][:8]}"
            repo.put_profile(conn, row)
            for b in c.bindings:
                p = snap.policies.get(b.policy_id)
                if p is None or not any(i.id == p.id and i.mapped for i in plan.policies):
                    continue
                repo.put_policy(
                    conn,
                    {
                        "id": p.id,
                        "project_id": p.project,
                        "name": p.name,
                        "type": p.type,
                        "spec": parse_policy_spec(p.spec).spec,
                        "created_at": now,
                        "updated_at": None,
                    },
                )
            name = doc["name"]
            repo.insert_active_cluster(
                conn,
                id=c.id,
                project_id=c.project,
                name=name,
                document=doc,
                status_reason="imported from Senlin",
                now=now,
            )
            rows = plan.node_rows
            node_repo.insert_nodes(conn, rows)
            by_id = {n.id: n for n in c.nodes}
            repo.insert_node_extras(
                conn,
                [
                    {
                        "node_id": r.id,
                        "project_id": c.project,
                        "profile_id": by_id[r.id].profile_id,
                        "metadata": dict(by_id[r.id].metadata),
                        "role": by_id[r.id].role,
                        "tainted": False,
                    }
                    for r in rows
                ],
            )
            for r in plan.receiver_rows:
                if repo.receiver_exists(conn, r.id):
                    continue
                repo.insert_receiver(
                    conn,
                    id=r.id,
                    project_id=c.project,
                    cluster_id=c.id,
                    name=_receiver_name(conn, c.project, r.name, r.id),
                    action=r.action,
                    params=r.params,
                    secret=r.id,
                    now=now,
                )
                senlin_receiver_repo.put(
                    conn,
                    SenlinReceiver(
                        r.id, RESIZE if r.senlin_action == RESIZE else None, r.name, r.senlin_params
                    ),
                )


def _receiver_name(conn: Conn, project: str, name: str, receiver_id: str) -> str:
    """Senlin's receiver names repeat; the native row's name is unique per project."""
    mine = _senlin_name(name)
    if not senlin_receiver_repo.native_name_taken(conn, project, mine):
        return mine
    return f"{mine[:54]}-{receiver_id[:8]}"
