"""What a Senlin cluster keeps beyond Shoal's model, stored in the document's `metadata`.

The document's metadata is a map of text to text. A Senlin user's metadata made only of text
is stored as it is (so the native API shows it too); anything else is stored as one JSON value
under `senlin.metadata`. The profile id, timeout and config live under `senlin.` keys, which
the Senlin views strip.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shoal.service.senlin.shapes import JsonObject

PREFIX = "senlin."
PROFILE_ID = "senlin.profile_id"
TIMEOUT = "senlin.timeout"
CONFIG = "senlin.config"
METADATA = "senlin.metadata"
POLICIES = "senlin.policies"
NAME = "senlin.name"

DEFAULT_TIMEOUT = 3600


@dataclass(frozen=True, slots=True)
class PolicyBinding:
    """A policy attached to a cluster, in attachment order (stored as JSON in the metadata)."""

    policy_id: str
    enabled: bool = True
    priority: int | None = None
    """Kept from an imported Senlin binding; Shoal applies bindings in order."""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"policy_id": self.policy_id, "enabled": self.enabled}
        if self.priority is not None:
            out["priority"] = self.priority
        return out

    @staticmethod
    def from_json(value: object) -> PolicyBinding | None:
        """A stored binding; None for an entry that names no policy."""
        if not isinstance(value, dict) or not isinstance(value.get("policy_id"), str):
            return None
        priority = value.get("priority")
        return PolicyBinding(
            value["policy_id"],
            bool(value.get("enabled", True)),
            priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        )


@dataclass(frozen=True, slots=True)
class SenlinMeta:
    """A cluster's Senlin-only fields."""

    metadata: JsonObject = field(default_factory=dict)
    profile_id: str | None = None
    timeout: int = DEFAULT_TIMEOUT
    config: JsonObject = field(default_factory=dict)
    policies: tuple[PolicyBinding, ...] = ()
    """Attached policies, in attachment order."""
    name: str | None = None
    """The name Senlin clients gave, when another cluster of the project already had it (Shoal's
    cluster names are unique; Senlin's may repeat)."""


def encode(m: SenlinMeta) -> dict[str, str]:
    """The document metadata holding `m`."""
    user = m.metadata
    text = {k: v for k, v in user.items() if isinstance(v, str)}
    plain = len(text) == len(user) and not any(k.startswith(PREFIX) for k in user)
    out: dict[str, str] = text if plain else {}
    if not plain:
        out[METADATA] = json.dumps(user, sort_keys=True)
    if m.profile_id is not None:
        out[PROFILE_ID] = m.profile_id
    if m.timeout != DEFAULT_TIMEOUT:
        out[TIMEOUT] = str(m.timeout)
    if m.config:
        out[CONFIG] = json.dumps(m.config, sort_keys=True)
    if m.policies:
        out[POLICIES] = json.dumps([b.to_json() for b in m.policies], sort_keys=True)
    if m.name is not None:
        out[NAME] = m.name
    return out


def decode(doc_metadata: Mapping[str, object] | None) -> SenlinMeta:
    """The Senlin fields a document's metadata holds (defaults for a native cluster)."""
    raw = dict(doc_metadata or {})
    if METADATA in raw:
        user = _json(raw[METADATA], {})
    else:
        user = {k: v for k, v in raw.items() if not k.startswith(PREFIX)}
    timeout, profile_id, name = raw.get(TIMEOUT), raw.get(PROFILE_ID), raw.get(NAME)
    return SenlinMeta(
        metadata=user if isinstance(user, dict) else {},
        profile_id=profile_id if isinstance(profile_id, str) else None,
        timeout=int(timeout) if isinstance(timeout, str) and timeout.isdigit() else DEFAULT_TIMEOUT,
        config=_json(raw.get(CONFIG), {}),
        policies=tuple(
            b for b in map(PolicyBinding.from_json, _json(raw.get(POLICIES), [])) if b is not None
        ),
        name=name if isinstance(name, str) else None,
    )


def _json(text: object, default: Any) -> Any:
    if not isinstance(text, str):
        return default
    try:
        value = json.loads(text)
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default
