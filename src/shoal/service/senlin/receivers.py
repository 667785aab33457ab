"""Senlin webhook receivers over Shoal's receivers.

`CLUSTER_SCALE_OUT`, `CLUSTER_SCALE_IN` and `CLUSTER_RECOVER` map onto Shoal's receiver
actions; `params` (`count`, or `adjustment_type` and `number`...) override the node group's
scaling policy as natively. Shoal keeps only a hash of a receiver's secret, so the channel's
`alarm_url` (which carries it) is shown once, in the answer to the creation.
"""

from __future__ import annotations

from typing import Any

from shoal.service.errors import Conflict, NotFound
from shoal.service.receivers import ReceiverService
from shoal.service.senlin.bodies import check_name
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported
from shoal.service.senlin.requests import as_map
from shoal.service.senlin.shortid import by_short_id
from shoal.store import senlin_receivers as repo
from shoal.store.records import Principal

ACTIONS = {
    "CLUSTER_SCALE_OUT": "scale_out",
    "CLUSTER_SCALE_IN": "scale_in",
    "CLUSTER_RECOVER": "recover",
}
_SENLIN = {v: k for k, v in ACTIONS.items()}
RESIZE = "CLUSTER_RESIZE"
"""Shoal's receivers have no resize: a CLUSTER_RESIZE webhook scales out by its params (an
`adjustment_type` and `number`), the closest native action."""


def receiver_view(native: dict[str, Any], alarm_url: str | None = None) -> dict[str, Any]:
    return {
        "id": native["id"],
        "name": native["name"],
        "type": "webhook",
        "cluster_id": native["cluster_id"],
        "action": _SENLIN.get(str(native["action"]), str(native["action"]).upper()),
        "params": native.get("params") or {},
        "actor": {},
        "channel": {"alarm_url": alarm_url} if alarm_url else {},
        "created_at": native.get("created_at"),
        "updated_at": native.get("triggered_at"),
        "project": native.get("project"),
        "user": None,
        "domain": None,
    }


def secret_of(native: dict[str, Any]) -> str:
    url = str(native.get("webhook_url", ""))
    return url.partition("token=")[2]


class SenlinReceivers:
    def __init__(self, receivers: ReceiverService) -> None:
        self.receivers = receivers

    def create(self, who: Principal, data: dict[str, Any]) -> tuple[dict[str, Any], str]:
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
        body = {
            "name": name,
            "cluster": cluster,
            "action": ACTIONS.get(str(action), "scale_out"),
            "params": as_map("params", data.get("params")),
        }
        try:
            native = self.receivers.create(who, body)
        except NotFound:
            raise BadRequest(f"The specified cluster '{cluster}' could not be found.") from None
        if action == RESIZE:
            with self.receivers.db.transaction() as conn:
                repo.set_action(conn, native["id"], RESIZE)
        return self._views([native])[0], secret_of(native)

    def _views(self, natives: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with self.receivers.db.reading() as conn:
            senlin = repo.actions_of(conn, [str(r["id"]) for r in natives])
        out = []
        for r in natives:
            view = receiver_view(r)
            if r["id"] in senlin:
                view["action"] = senlin[r["id"]]
            out.append(view)
        return out

    def update(self, who: Principal, ref: str, data: dict[str, Any]) -> dict[str, Any]:
        """A new name (Shoal's receivers keep their action and params: a new one is a new
        receiver, so a change of either is refused)."""
        if not data:
            raise BadRequest("No property needs an update.")
        native = self.receivers.get(who, self._ref(who, ref))
        if set(data) - {"name"}:
            raise FeatureNotSupported(
                "Only a receiver's name can be changed here; create a new receiver for "
                "another action or params."
            )
        name = check_name("receiver", data["name"])
        with self.receivers.db.transaction() as conn:
            taken = [r for r in self.receivers.list(who) if r["name"] == name]
            if taken and taken[0]["id"] != native["id"]:
                raise Conflict(f"A receiver named '{name}' already exists.")
            repo.rename(conn, str(native["id"]), name)
        return self.get(who, str(native["id"]))

    def list(self, who: Principal) -> list[dict[str, Any]]:
        return self._views(self.receivers.list(who))

    def _ref(self, who: Principal, ref: str) -> str:
        """`ref` itself if it is a receiver's id or name, else the id it is a short id of."""
        listed = self.receivers.list(who)
        if any(ref in (r["id"], r["name"]) for r in listed):
            return ref
        return by_short_id((str(r["id"]) for r in listed), ref) or ref

    def get(self, who: Principal, ref: str) -> dict[str, Any]:
        return self._views([self.receivers.get(who, self._ref(who, ref))])[0]

    def delete(self, who: Principal, ref: str) -> None:
        self.receivers.delete(who, self._ref(who, ref))
