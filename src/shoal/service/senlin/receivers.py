"""Senlin webhook receivers over Shoal's receivers.

`CLUSTER_SCALE_OUT`, `CLUSTER_SCALE_IN` and `CLUSTER_RECOVER` map onto Shoal's receiver
actions; `params` (`count`, or `adjustment_type` and `number`...) override the node group's
scaling policy as natively. Shoal keeps only a hash of a receiver's secret, so the channel's
`alarm_url` (which carries it) is shown once, in the answer to the creation.
"""

from __future__ import annotations

from typing import Any

from shoal.service.receivers import ReceiverService
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported
from shoal.service.senlin.requests import as_map
from shoal.service.senlin.shortid import by_short_id
from shoal.store.records import Principal

ACTIONS = {
    "CLUSTER_SCALE_OUT": "scale_out",
    "CLUSTER_SCALE_IN": "scale_in",
    "CLUSTER_RECOVER": "recover",
}
_SENLIN = {v: k for k, v in ACTIONS.items()}


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
        kind = data.get("type", "webhook")
        if kind != "webhook":
            raise FeatureNotSupported(f"Receivers of type '{kind}' are not supported; use webhook.")
        for key in ("name", "cluster_id", "action"):
            if not data.get(key):
                raise BadRequest(f"Receiver '{key}' is required.")
        action = data["action"]
        if action not in ACTIONS:
            raise BadRequest(
                f"Action '{action}' is not supported by webhooks here; one of " + ", ".join(ACTIONS)
            )
        body = {
            "name": data["name"],
            "cluster": data["cluster_id"],
            "action": ACTIONS[action],
            "params": as_map("params", data.get("params")),
        }
        native = self.receivers.create(who, body)
        return native, secret_of(native)

    def list(self, who: Principal) -> list[dict[str, Any]]:
        return [receiver_view(r) for r in self.receivers.list(who)]

    def _ref(self, who: Principal, ref: str) -> str:
        """`ref` itself if it is a receiver's id or name, else the id it is a short id of."""
        listed = self.receivers.list(who)
        if any(ref in (r["id"], r["name"]) for r in listed):
            return ref
        return by_short_id((str(r["id"]) for r in listed), ref) or ref

    def get(self, who: Principal, ref: str) -> dict[str, Any]:
        return receiver_view(self.receivers.get(who, self._ref(who, ref)))

    def delete(self, who: Principal, ref: str) -> None:
        self.receivers.delete(who, self._ref(who, ref))
