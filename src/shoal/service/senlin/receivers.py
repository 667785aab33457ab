"""Senlin webhook receivers over Shoal's receivers.

`CLUSTER_SCALE_OUT`, `CLUSTER_SCALE_IN` and `CLUSTER_RECOVER` map onto Shoal's receiver
actions; `params` (`count`, or `adjustment_type` and `number`...) override the node group's
scaling policy as natively. Senlin's receivers may share a name and keep their params as given
(numbers as strings): the façade keeps both beside the native row (`store/senlin_receivers`),
and a native name already taken gets a suffix. Shoal keeps only a hash of a receiver's secret,
so the channel's `alarm_url` (which carries it) is shown once, in the answer to the creation.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Sequence

from pydantic import JsonValue

from shoal.service.edits import RECEIVER, spec_group
from shoal.service.errors import Invalid, NotFound
from shoal.service.receivers import ReceiverAction, ReceiverService, parse_receiver
from shoal.service.senlin.bodies import check_name
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported
from shoal.service.senlin.requests import as_map
from shoal.service.senlin.shapes import JsonObject, ReceiverView
from shoal.service.senlin.shortid import by_short_id
from shoal.service.triggers import check_params
from shoal.service.views import iso
from shoal.store import senlin_lists as list_repo
from shoal.store import senlin_receivers as repo
from shoal.store.receivers import ReceiverRecord
from shoal.store.records import Principal
from shoal.store.senlin_conn import Conn
from shoal.store.senlin_lists import ListQuery
from shoal.store.senlin_receivers import SenlinReceiver

ACTIONS = {
    "CLUSTER_SCALE_OUT": "scale_out",
    "CLUSTER_SCALE_IN": "scale_in",
    "CLUSTER_RECOVER": "recover",
}
_SENLIN = {v: k for k, v in ACTIONS.items()}
RESIZE = "CLUSTER_RESIZE"
"""Shoal's receivers have no resize: a CLUSTER_RESIZE webhook scales out by its params (an
`adjustment_type` and `number`), the closest native action."""


def receiver_view(r: ReceiverRecord, alarm_url: str | None = None) -> ReceiverView:
    return {
        "id": r.id,
        "name": r.name,
        "type": "webhook",
        "cluster_id": r.cluster_id,
        "action": _SENLIN.get(str(r.action), str(r.action).upper()),
        "params": r.params or {},
        "actor": {},
        "channel": {"alarm_url": alarm_url} if alarm_url else {},
        "created_at": iso(r.created_at),
        "updated_at": iso(r.triggered_at),
        "project": r.project_id,
        "user": None,
        "domain": None,
    }


def _number(value: JsonValue) -> JsonValue:
    """Senlin takes numbers as strings (`{"count": "2"}`); Shoal's params are typed."""
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                continue
    return value


def native_params(params: JsonObject) -> JsonObject:
    """Senlin's params as Shoal's receivers take them, or Senlin's 400 naming the problem.
    A resize's `min_size` / `max_size` move the group's bounds when the webhook is triggered."""
    out: JsonObject = {}
    for key, value in params.items():
        if key == "strict" and isinstance(value, str):
            value = value.lower() in ("true", "1", "yes", "on")
        numeric = key in ("count", "number", "min_step", "min_size", "max_size")
        out[key] = _number(value) if numeric else value
    try:
        return check_params(out)
    except Invalid as bad:
        detail = bad.details[0] if bad.details else {"path": "/params", "message": str(bad)}
        raise BadRequest(
            f"Invalid receiver params: {detail['path'].removeprefix('/params/')}: "
            f"{detail['message']}."
        ) from None


def _native_name(conn: Conn, project_id: str, name: str, receiver_id: str = "") -> str:
    if not repo.native_name_taken(conn, project_id, name, receiver_id):
        return name
    return f"{name[:54]}-{uuid.uuid4().hex[:8]}"


class SenlinReceivers:
    def __init__(self, receivers: ReceiverService) -> None:
        self.receivers = receivers

    def create(self, who: Principal, data: JsonObject) -> tuple[ReceiverView, str]:
        """The new receiver (Senlin's view, without its URL) and its secret."""
        kind = data.get("type")
        if kind not in ("webhook", "message"):
            raise BadRequest(f"Value '{kind}' is not acceptable for field 'type'.")
        if kind == "message":
            raise FeatureNotSupported("Receivers of type 'message' are not supported; use webhook.")
        name = check_name("receiver", data.get("name"))
        action = data.get("action")
        if action not in ACTIONS and action != RESIZE:
            raise BadRequest(f"Value '{action}' is not acceptable for field 'action'.")
        cluster = data.get("cluster_id")
        if not cluster:
            raise BadRequest("Cluster identity is required for creating webhook receiver.")
        params = as_map("params", data.get("params"))
        native_action = ACTIONS.get(str(action), "scale_out")
        with self.receivers.db.reading() as conn:
            stored_name = _native_name(conn, who.project_id, name)
        body = {
            "name": stored_name,
            "cluster": cluster,
            "action": native_action,
            "params": native_params(params) if native_action != "recover" else {},
        }
        try:
            native, secret = self.receivers.add(who, parse_receiver(body))
        except NotFound:
            raise BadRequest(f"The specified cluster '{cluster}' could not be found.") from None
        with self.receivers.db.transaction() as conn:
            extras = SenlinReceiver(native.id, RESIZE if action == RESIZE else None, name, params)
            repo.put(conn, extras)
        return self._views([native])[0], secret

    def _views(self, natives: Sequence[ReceiverRecord]) -> list[ReceiverView]:
        with self.receivers.db.reading() as conn:
            senlin = repo.extras_of(conn, [r.id for r in natives])
        out = []
        for r in natives:
            view = receiver_view(r)
            e = senlin.get(r.id)
            if e is not None:
                if e.action is not None:
                    view["action"] = e.action
                if e.name is not None:
                    view["name"] = e.name
                if e.params is not None:
                    view["params"] = e.params
            out.append(view)
        return out

    def update(self, who: Principal, ref: str, data: JsonObject) -> ReceiverView:
        """A new name, action or params (the receiver keeps its id, cluster and secret)."""
        if not data:
            raise BadRequest("No property needs an update.")
        current = self.get(who, ref)
        native = self.receivers.record(who, str(current["id"]))
        name = check_name("receiver", data["name"]) if "name" in data else current["name"]
        action = data.get("action", current["action"])
        if action not in ACTIONS and action != RESIZE:
            raise BadRequest(f"Value '{action}' is not acceptable for field 'action'.")
        params = as_map("params", data["params"]) if "params" in data else current["params"]
        native_action = ACTIONS.get(str(action), "scale_out")
        typed = native_params(params) if native_action != "recover" else {}
        with self.receivers.db.transaction() as conn:
            group = native.nodegroup
            if native_action == ReceiverAction.RECOVER:
                group = None
            elif group is None:
                c = self.receivers.clusters.get(conn, who, native.cluster_id)
                group = spec_group(self.receivers.clusters.spec_of(c.document), None, RECEIVER).name
            project = native.project_id or who.project_id
            stored = native.name
            if name != current["name"]:
                stored = _native_name(conn, project, name, native.id)
            repo.retarget(
                conn,
                native.id,
                name=stored,
                action=native_action,
                nodegroup=group,
                params=typed,
            )
            extras = SenlinReceiver(native.id, RESIZE if action == RESIZE else None, name, params)
            repo.put(conn, extras)
        return self.get(who, native.id)

    def list(self, who: Principal) -> list[ReceiverView]:
        return self._views(self.receivers.records(who))

    def page(self, query: ListQuery) -> builtins.list[ReceiverView]:
        """One page of Senlin's receiver list, filtered, sorted and paged in SQL."""
        with self.receivers.db.reading() as conn:
            try:
                found = list_repo.list_receivers(conn, query)
            except list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{query.marker}' could not be found.") from None
        return self._views(found)

    def _ref(self, who: Principal, ref: str) -> str:
        """The id of the receiver `ref` names: its id, its Senlin name (two receivers of that
        name are Senlin's 400), or a unique short id."""
        listed = self.list(who)
        if any(ref == r["id"] for r in listed):
            return ref
        named = [str(r["id"]) for r in listed if r["name"] == ref]
        if len(named) > 1:
            raise BadRequest(
                f"Multiple results found matching the query criteria '{ref}'. "
                "Please be more specific."
            )
        if named:
            return named[0]
        return by_short_id((str(r["id"]) for r in listed), ref) or ref

    def get(self, who: Principal, ref: str) -> ReceiverView:
        return self._views([self.receivers.record(who, self._ref(who, ref))])[0]

    def delete(self, who: Principal, ref: str) -> None:
        self.receivers.delete(who, self._ref(who, ref))
