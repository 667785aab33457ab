"""Senlin request bodies checked the way Senlin's request objects checked them.

Senlin validated each body against a JSON schema built from its versioned request objects, so
its clients see jsonschema's sentences ("'name' is a required property", "Additional
properties are not allowed ('x' was unexpected)"). These checks run before any lookup, so a bad
body sent to a cluster that does not exist is still a 400 about the body, as in Senlin.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.shapes import JsonObject

BOOL_WORDS = ("0", "1", "f", "false", "n", "no", "off", "on", "t", "true", "y", "yes")


def missing_key(body: object, key: str) -> JsonObject:
    """`body[key]` of a create request; Senlin's words when the envelope is missing."""
    if not isinstance(body, dict) or key not in body:
        raise BadRequest(f"Request body missing '{key}' key.")
    inner = body[key]
    if not isinstance(inner, dict):
        raise BadRequest("The data provided is not a map")
    return inner


def malformed(body: object, key: str) -> JsonObject:
    """`body[key]` of an update request; Senlin's words when the envelope is missing."""
    if not isinstance(body, dict) or not isinstance(body.get(key), dict):
        raise BadRequest(f"Malformed request data, missing '{key}' key in request body.")
    inner: JsonObject = body[key]
    return inner


def check_fields(
    data: Mapping[str, object], required: Sequence[str] = (), optional: Sequence[str] = ()
) -> None:
    """Required fields present, nothing beyond required + optional."""
    for name in required:
        if name not in data:
            raise BadRequest(f"'{name}' is a required property")
    extra = [k for k in data if k not in required and k not in optional]
    if extra:
        said = ", ".join(f"'{k}'" for k in extra)
        verb = "was" if len(extra) == 1 else "were"
        raise BadRequest(f"Additional properties are not allowed ({said} {verb} unexpected)")


def flag(name: str, value: object) -> bool:
    """A boolean field, as oslo's FlexibleBoolean read one."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in BOOL_WORDS:
        return text in ("1", "on", "t", "true", "y", "yes")
    words = ", ".join(f"'{w}'" for w in BOOL_WORDS)
    raise BadRequest(f"Unrecognized value '{value}', acceptable values are: {words}")


def integer(name: str, value: object, *, minimum: int | None = None) -> int:
    """An integer field (text digits accepted), as oslo's NonNegativeInteger & co. read one."""
    result: int | None = None
    if isinstance(value, bool):
        result = None
    elif isinstance(value, int):
        result = value
    elif isinstance(value, str):
        try:
            result = int(value.strip())
        except ValueError:
            result = None
    if result is None:
        raise BadRequest(f"The value for {name} must be an integer: '{value}'.")
    if minimum is not None and result < minimum:
        raise BadRequest(f"Value must be >= {minimum} for field '{name}'.")
    return result


def node_list(data: Mapping[str, object], name: str = "nodes") -> list[str]:
    """A non-empty list of distinct node references."""
    value = data.get(name, [])
    if not isinstance(value, list):
        raise BadRequest(f"Items for '{name}' must be unique")
    if not value:
        raise BadRequest(f"Value for '{name}' must have at least 1 item(s).")
    refs = [str(v) for v in value]
    if len(set(refs)) != len(refs):
        raise BadRequest(f"Items for '{name}' must be unique")
    return refs


@dataclass(frozen=True, slots=True)
class BodySchema:
    """One Senlin request body: its envelope key, required and optional fields."""

    key: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    update: bool = False


CLUSTER_CREATE = BodySchema(
    "cluster",
    ("name", "profile_id"),
    ("min_size", "max_size", "desired_capacity", "metadata", "timeout", "config"),
)
CLUSTER_UPDATE = BodySchema(
    "cluster", (), ("name", "profile_id", "metadata", "timeout", "config", "profile_only"), True
)
PROFILE_CREATE = BodySchema("profile", ("name", "spec"), ("metadata",))
PROFILE_VALIDATE = BodySchema("profile", ("spec",))
PROFILE_UPDATE = BodySchema("profile", (), ("name", "metadata"), True)
POLICY_CREATE = BodySchema("policy", ("name", "spec"))
POLICY_VALIDATE = BodySchema("policy", ("spec",))
POLICY_UPDATE = BodySchema("policy", ("name",), (), True)
NODE_CREATE = BodySchema("node", ("name", "profile_id"), ("cluster_id", "role", "metadata"))
NODE_UPDATE = BodySchema("node", (), ("name", "profile_id", "role", "metadata", "tainted"), True)
RECEIVER_CREATE = BodySchema(
    "receiver", ("name", "type"), ("cluster_id", "action", "actor", "params")
)
ACTION_UPDATE = BodySchema("action", ("status",), (), True)
RECEIVER_UPDATE = BodySchema("receiver", (), ("name", "action", "params"), True)


def request_body(body: object, schema: BodySchema) -> JsonObject:
    """The checked inner body of a request (`{"cluster": {...}}` -> `{...}`)."""
    inner = malformed(body, schema.key) if schema.update else missing_key(body, schema.key)
    check_fields(inner, schema.required, schema.optional)
    return inner


MAX_DEPTH = 32
"""How deeply a request body may nest (metadata, user_data, specs): Shoal stores and serialises
these values, so a 10,000-deep body must be refused before it is parsed."""
MAX_NAME = 255


def check_depth(raw: bytes, limit: int = MAX_DEPTH) -> None:
    """400 if the JSON text nests deeper than `limit`; one pass over the bytes, strings
    skipped, so nothing deep is ever built."""
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                raise BadRequest(f"The request body nests deeper than {limit} levels.")
        elif byte in (0x5D, 0x7D):
            depth -= 1


def check_name(kind: str, value: object) -> str:
    """A Senlin object's name: text of 1 to 255 characters, without control or format
    characters (NUL, bidi overrides) and without '/' (no '../' path tricks)."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"The {kind} name must be a non-empty string.")
    if len(value) > MAX_NAME:
        raise BadRequest(f"The {kind} name is longer than {MAX_NAME} characters.")
    bad = [c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Cs") or c == "/"]
    if bad:
        raise BadRequest(f"The {kind} name holds a character that is not allowed: {bad[0]!a}.")
    return value
