"""Senlin's node API: standalone nodes (a Shoal node with no cluster) and node actions.

A standalone node is a node row with no cluster, its host claimed under the placement lock in
the same transaction that records the top-level NODE_CREATE action; the engine's node workers
create it through the provider like any cluster's node, and delete it with NODE_DELETE. Check,
recover and operations (reboot, rebuild) are node actions too. Nothing here talks to a provider.

A node of an `os.heat.stack` profile is its template's one server (made like any server node),
or, when the template makes nothing to place, a row of kind `stack` with no host: it is ACTIVE
when recorded and its NODE_CREATE is a BARRIER the engine closes (`stacks.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from shoal.clock import Clock
from shoal.documents.names import NAME_RULE, is_name
from shoal.engine.profiles import profile_from_row, profile_row
from shoal.model.enums import ActionKind, NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, demand_of
from shoal.model.profile import ServerProfile
from shoal.providers.errors import ProviderError
from shoal.service.errors import Conflict, NotFound
from shoal.service.senlin.bodies import flag
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported, InvalidSpec
from shoal.service.senlin.nodes import find_node
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.shapes import JsonObject
from shoal.service.senlin.specs import HEAT_STACK
from shoal.service.senlin.stacks import StackReading
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store import nodes as node_repo
from shoal.store import senlin_nodes as repo
from shoal.store.actions import NewAction
from shoal.store.database import Database
from shoal.store.records import NewNode, NodeChange, NodeRecord, Principal
from shoal.store.senlin_conn import Conn

NODE_ACTIONS = ("check", "recover")
OPERATIONS = {"reboot": ("SOFT", "HARD"), "rebuild": ()}


def _name(value: object) -> str:
    if not isinstance(value, str) or not is_name(value):
        raise BadRequest(f"Invalid node name '{value}': {NAME_RULE}.")
    return value


def _map(name: str, value: object) -> JsonObject:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"The '{name}' must be a map.")
    return dict(value)


def _fits(free: Demand, need: Demand) -> bool:
    return (
        free.vcpus >= need.vcpus
        and free.ram_mb >= need.ram_mb
        and free.disk_gb >= need.disk_gb
        and free.volume_gb >= need.volume_gb
    )


def _host_for(
    inventory: Inventory, used: dict[str, Demand], need: Demand, zone: str | None
) -> tuple[str, str]:
    """The host with the most free vCPUs that fits `need` (in `zone`, if one is asked)."""
    best: tuple[int, str, str] | None = None
    for h in inventory.hosts:
        if zone and h.zone != zone:
            continue
        u = used.get(h.name, Demand())
        free = Demand(
            h.vcpus - u.vcpus, h.ram_mb - u.ram_mb, h.disk_gb - u.disk_gb, h.volume_gb - u.volume_gb
        )
        if _fits(free, need) and (best is None or free.vcpus > best[0]):
            best = (free.vcpus, h.name, h.zone)
    if best is None:
        raise Conflict("No host has room for this node.")
    return best[1], best[2]


class SenlinNodes:
    def __init__(
        self,
        db: Database,
        profiles: SenlinProfiles,
        inventory: Callable[[], Inventory],
        clock: Clock,
    ) -> None:
        self.db = db
        self.profiles = profiles
        self.inventory = inventory
        self.clock = clock

    def create(self, who: Principal, data: JsonObject) -> tuple[str, str]:
        """A standalone node; its id and the id of the action that makes it."""
        name = _name(data["name"])
        metadata = _map("metadata", data.get("metadata"))
        role = str(data.get("role") or "")
        profile_ref = str(data["profile_id"])
        inventory = self.inventory()
        now = self.clock.now()
        with self.db.transaction() as conn:
            try:
                row = self.profiles.row(conn, who, profile_ref)
            except NotFound:
                raise BadRequest(
                    f"The specified profile '{profile_ref}' could not be found."
                ) from None
            if data.get("cluster_id") is not None:
                raise FeatureNotSupported(
                    "Creating a node straight into a cluster is not supported here: create "
                    "it standalone, or grow the cluster with scale_out."
                )
            try:
                stack = self.profiles.stack(row)
                if stack is not None and stack.server is None:
                    return self._empty_stack(conn, who, name, row.id, metadata, role, stack)
                native = stack.native() if stack is not None else self.profiles.native(row)
                profile = profile_from_row(native, inventory)
            except ProviderError as e:
                raise BadRequest(f"Failed in creating node {name}: {e}") from None
            except InvalidSpec as bad:
                raise BadRequest(
                    f"Failed in creating node {name}: {bad.message}", bad.details
                ) from None
            need = demand_of(profile)
            node_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
            repo.lock_placement(conn, self.db.is_sqlite, f"senlin-node:{node_id}", now)
            host, zone = _host_for(inventory, node_repo.used_capacity(conn), need, profile.zone)
            kind = NodeKind.SERVER if isinstance(profile, ServerProfile) else NodeKind.VOLUME
            stored = profile_row(profile)
            node_row = NewNode(
                node_id,
                who.project_id,
                name,
                kind,
                NodeStatus.INIT,
                host,
                zone,
                stored,
                need,
                now,
                now,
            )
            extras = repo.NodeExtras(node_id, who.project_id, row.id, metadata, role)
            inputs = {
                "node": name,
                "cluster_name": "",
                "kind": str(kind),
                "host": host,
                "zone": zone,
                "profile": stored,
                SENLIN_ACTION: "NODE_CREATE",
            }
            action = NewAction(
                action_id, who.project_id, ActionKind.NODE_CREATE, None, node_id, inputs=inputs
            )
            repo.create_standalone(conn, node_row, extras, action, now)
        return node_id, action_id

    def _empty_stack(
        self,
        conn: Conn,
        who: Principal,
        name: str,
        profile_id: str,
        metadata: JsonObject,
        role: str,
        stack: StackReading,
    ) -> tuple[str, str]:
        """A node whose template makes nothing to place (Heat's own resources only): it claims
        no host, and its NODE_CREATE is a BARRIER, so the engine closes it without a provider
        call; it is ACTIVE from the start because nothing is left to make."""
        if not stack.buildable:
            raise BadRequest(
                f"Failed in creating node {name}: a node of an os.heat.stack profile is built "
                "from a template that makes one server, or nothing to place; this template "
                f"makes {stack.makes}."
            )
        now = self.clock.now()
        node_id, action_id = str(uuid.uuid4()), str(uuid.uuid4())
        held = ", ".join(f"{r.name} ({r.type})" for r in stack.resources) or "no resources"
        node_row = NewNode(
            node_id,
            who.project_id,
            name,
            NodeKind.STACK,
            NodeStatus.ACTIVE,
            None,
            None,
            {"type": "stack"},
            Demand(),
            now,
            now,
            status_reason=f"Stack with nothing to place: {held}"[:255],
        )
        extras = repo.NodeExtras(node_id, who.project_id, profile_id, metadata, role)
        inputs = {"node": name, "cluster_name": "", "kind": str(NodeKind.STACK)}
        inputs[SENLIN_ACTION] = "NODE_CREATE"
        action = NewAction(
            action_id, who.project_id, ActionKind.BARRIER, None, node_id, inputs=inputs
        )
        repo.create_standalone(conn, node_row, extras, action, now)
        return node_id, action_id

    def put_extras(self, extras: repo.NodeExtras) -> None:
        with self.db.transaction() as conn:
            repo.put_extras(conn, extras)

    def _node_action(
        self, who: Principal, ref: str, kind: ActionKind, senlin_action: str, **extra: Any
    ) -> tuple[NodeRecord, str]:
        now = self.clock.now()
        with self.db.transaction() as conn:
            node = find_node(conn, who, ref)
            busy = repo.busy_with(conn, node.id)
            if busy is not None:
                raise Conflict(f"The node '{ref}' is busy with action {busy}.")
            inputs: JsonObject = {
                "node": node.name,
                "cluster_name": "",
                "kind": str(node.kind),
                "host": node.host,
                "zone": node.zone,
                "profile": node.profile,
                "provider_id": node.provider_id,
                SENLIN_ACTION: senlin_action,
                **extra,
            }
            action_id = str(uuid.uuid4())
            new = NewAction(
                action_id, node.project_id, kind, node.cluster_id, node.id, inputs=inputs
            )
            repo.create_action(conn, new, now)
        return node, action_id

    def delete(self, who: Principal, ref: str) -> str:
        """A standalone node's NODE_DELETE action id (a member node is the cluster's business)."""
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
        if node.cluster_id is not None:
            raise FeatureNotSupported("A member node is deleted through its cluster.")
        _, action_id = self._node_action(who, node.id, ActionKind.NODE_DELETE, "NODE_DELETE")
        with self.db.transaction() as conn:
            node_repo.update_nodes(
                conn,
                [NodeChange(node.id, self.clock.now(), status=NodeStatus.DELETING)],
            )
        return action_id

    def act(self, who: Principal, ref: str, body: object) -> str:
        """`POST /v1/nodes/{id}/actions`: check or recover."""
        if not isinstance(body, dict) or not body:
            raise BadRequest("No action specified.")
        if len(body) > 1:
            raise BadRequest("Multiple actions specified.")
        name, params = next(iter(body.items()))
        if name not in NODE_ACTIONS:
            raise BadRequest(f"Unrecognized action '{name}' specified")
        if params is not None and not isinstance(params, dict):
            raise BadRequest("The params provided is not a map.")
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
        if name == "recover" and node.status is NodeStatus.ERROR and node.provider_id:
            _, action_id = self._node_action(who, node.id, ActionKind.NODE_REBUILD, "NODE_RECOVER")
            return action_id
        if name == "check":
            _, action_id = self._node_action(who, node.id, ActionKind.BARRIER, "NODE_CHECK")
            return action_id
        # Senlin's recover with `check` finds the node ACTIVE and says so (`reasons.py`).
        check = bool((params or {}).get("check"))
        _, action_id = self._node_action(
            who, node.id, ActionKind.BARRIER, "NODE_RECOVER", check=check
        )
        return action_id

    def operate(self, who: Principal, ref: str, body: object) -> str:
        """`POST /v1/nodes/{id}/ops` (1.4): reboot or rebuild a server node."""
        if not isinstance(body, dict) or not body:
            raise BadRequest("No operation specified.")
        if len(body) > 1:
            raise BadRequest("Multiple operations specified.")
        name, params = next(iter(body.items()))
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
            extras = repo.get_extras(conn, [node.id]).get(node.id)
        profile_type = "os.nova.server-1.0"
        if extras is not None and extras.profile_id is not None:
            profile_type = self._profile_type(who, extras.profile_id) or profile_type
        # Senlin's heat stack profile has no operations (its `/ops` lists none).
        if name not in OPERATIONS or profile_type == HEAT_STACK or node.kind is NodeKind.STACK:
            raise BadRequest(
                f"The requested operation '{name}' is not supported by the profile type "
                f"'{profile_type}'."
            )
        params = _map("params", params)
        allowed = OPERATIONS[name]
        if allowed and "type" in params and str(params["type"]).upper() not in allowed:
            raise BadRequest(
                f"'{params['type']}' must be one of the allowed values: {', '.join(allowed)}."
            )
        kind = ActionKind.NODE_REBOOT if name == "reboot" else ActionKind.NODE_REBUILD
        _, action_id = self._node_action(who, node.id, kind, "NODE_OPERATION", operation=name)
        return action_id

    def _profile_type(self, who: Principal, profile_id: str) -> str | None:
        with self.db.reading() as conn:
            try:
                return self.profiles.row(conn, who, profile_id).stored_type
            except (NotFound, BadRequest):
                return None

    def update(self, who: Principal, ref: str, data: JsonObject) -> tuple[NodeRecord, str]:
        """Name, role, metadata and tainted change in place (NODE_UPDATE); a new profile must
        be of the same type, and is recorded (its servers are not rebuilt)."""
        if not data or all(v is None for v in data.values()):
            raise BadRequest("No property needs an update.")
        now = self.clock.now()
        with self.db.transaction() as conn:
            node = find_node(conn, who, ref)
            extras = repo.get_extras(conn, [node.id]).get(node.id) or repo.NodeExtras(
                node.id, node.project_id
            )
            changed = replace(extras)
            if data.get("profile_id") is not None:
                pref = str(data["profile_id"])
                try:
                    new = self.profiles.row(conn, who, pref)
                except NotFound:
                    raise BadRequest(
                        f"The specified profile '{pref}' could not be found."
                    ) from None
                old_type = (
                    self.profiles.row(conn, who, extras.profile_id).stored_type
                    if extras.profile_id
                    else "os.nova.server-1.0"
                )
                if new.stored_type != old_type:
                    raise BadRequest(
                        "Cannot update a node to a different profile type, operation aborted."
                    )
                changed = replace(changed, profile_id=new.id)
            if data.get("metadata") is not None:
                changed = replace(changed, metadata=_map("metadata", data["metadata"]))
            if data.get("role") is not None:
                changed = replace(changed, role=str(data["role"]))
            if data.get("tainted") is not None:
                changed = replace(changed, tainted=flag("tainted", data["tainted"]))
            new_name = data.get("name")
            if new_name is not None and new_name != node.name:
                if node.cluster_id is not None:
                    raise FeatureNotSupported("A member node keeps the name its cluster gave it.")
                node_repo.update_nodes(conn, [NodeChange(node.id, now, name=_name(new_name))])
            elif changed == extras:
                raise BadRequest("No property needs an update.")
            repo.put_extras(conn, changed)
        return self._node_action(who, node.id, ActionKind.BARRIER, "NODE_UPDATE")
