"""Senlin profile types and specs, and their translation to Shoal's native profiles.

`os.nova.server-1.0` is Senlin's server profile: `flavor`, `image`, `availability_zone`,
`metadata` and `networks` become a native server profile (flavor and image by name or id, as
the inventory's catalog resolves them); the other Nova properties are accepted and kept, so a
profile shows what it was given, but Shoal does not act on them. `shoal.server-1.0` and
`shoal.volume-1.0` carry Shoal's own profile fields as properties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shoal.model.inventory import Inventory
from shoal.service.errors import Invalid
from shoal.service.profiles import validate_profile
from shoal.service.senlin.errors import InvalidSpec

NOVA_SERVER = "os.nova.server-1.0"
SHOAL_SERVER = "shoal.server-1.0"
SHOAL_VOLUME = "shoal.volume-1.0"

_KEPT = "accepted and shown back; Shoal does not act on it"


def _p(kind: str, description: str, *, required: bool = False, updatable: bool = False) -> Any:
    return {
        "type": kind,
        "description": description,
        "required": required,
        "updatable": updatable,
    }


_NOVA_SCHEMA: dict[str, Any] = {
    "context": _p("Map", "Customized security context for operating servers; " + _KEPT),
    "flavor": _p("String", "ID or name of the flavor", required=True, updatable=True),
    "image": _p("String", "ID or name of the image", required=True, updatable=True),
    "name": _p("String", "Name of the server; " + _KEPT, updatable=True),
    "metadata": _p("Map", "Key-value pairs attached to each server", updatable=True),
    "availability_zone": _p("String", "Zone to place the servers in"),
    "networks": _p("List", "Networks to attach: [{network: name}]", updatable=True),
    "key_name": _p("String", "Name of a key pair; " + _KEPT),
    "security_groups": _p("List", "Security groups; " + _KEPT),
    "user_data": _p("String", "User data; " + _KEPT),
    "admin_pass": _p("String", "Administrator password; " + _KEPT),
    "auto_disk_config": _p("Boolean", "Disk partitioning; " + _KEPT),
    "block_device_mapping": _p("List", "Block devices; " + _KEPT),
    "block_device_mapping_v2": _p("List", "Block devices; " + _KEPT),
    "config_drive": _p("Boolean", "Config drive; " + _KEPT),
    "personality": _p("List", "Injected files; " + _KEPT),
    "scheduler_hints": _p("Map", "Scheduler hints; " + _KEPT),
}

_SHOAL_SERVER_SCHEMA: dict[str, Any] = {
    "flavor": _p("String", "ID or name of the flavor", required=True),
    "image": _p("String", "ID or name of the image", required=True),
    "zone": _p("String", "Zone the servers must be in"),
    "metadata": _p("Map", "Key-value pairs attached to each server"),
    "networks": _p("List", "Network names"),
}

_SHOAL_VOLUME_SCHEMA: dict[str, Any] = {
    "size": _p("Integer", "Size in GiB", required=True),
    "volume_type": _p("String", "Volume type"),
    "zone": _p("String", "Zone the volumes must be in"),
}


@dataclass(frozen=True, slots=True)
class ProfileType:
    name: str
    schema: dict[str, Any]
    since: str

    @property
    def type_name(self) -> str:
        return self.name.rsplit("-", 1)[0]

    @property
    def version(self) -> str:
        return self.name.rsplit("-", 1)[1]

    def support_status(self) -> dict[str, Any]:
        return {self.version: [{"status": "SUPPORTED", "since": self.since}]}


PROFILE_TYPES: dict[str, ProfileType] = {
    t.name: t
    for t in (
        ProfileType(NOVA_SERVER, _NOVA_SCHEMA, "2016.04"),
        ProfileType(SHOAL_SERVER, _SHOAL_SERVER_SCHEMA, "2026.01"),
        ProfileType(SHOAL_VOLUME, _SHOAL_VOLUME_SCHEMA, "2026.01"),
    )
}

# Where a native profile field comes from in a Senlin spec, for problem pointers.
_NOVA_FROM_NATIVE = {"zone": "availability_zone"}


@dataclass(frozen=True, slots=True)
class SenlinSpec:
    """A checked Senlin spec: its profile type, the spec as given, and the native profile."""

    type_name: str
    spec: dict[str, Any]
    native: dict[str, Any]


def type_of(spec: dict[str, Any]) -> str:
    return f"{spec.get('type')}-{spec.get('version')}"


def parse_spec(spec: object, inventory: Inventory) -> SenlinSpec:
    """Check a Senlin profile spec and translate it; 400 (InvalidSpec) naming what is wrong."""
    if not isinstance(spec, dict):
        raise InvalidSpec("The profile spec must be a map with type, version and properties.")
    unknown = sorted(set(spec) - {"type", "version", "properties"})
    if unknown:
        raise InvalidSpec(f"Unrecognizable spec item '{unknown[0]}'.")
    kind, version = spec.get("type"), spec.get("version")
    if not isinstance(kind, str) or not kind:
        raise InvalidSpec("The 'type' key is missing from the provided spec map.")
    if version is None:
        raise InvalidSpec("The 'version' key is missing from the provided spec map.")
    version = str(version)
    name = f"{kind}-{version}"
    ptype = PROFILE_TYPES.get(name)
    if ptype is None:
        raise InvalidSpec(
            f"The specified profile type '{name}' is not supported; "
            f"known types: {', '.join(PROFILE_TYPES)}."
        )
    props = spec.get("properties", {})
    if not isinstance(props, dict):
        raise InvalidSpec("The 'properties' of a profile spec must be a map.")
    for key in props:
        if key not in ptype.schema:
            raise InvalidSpec(f"Unrecognizable spec item '{key}'.")
    for key, rule in ptype.schema.items():
        if rule["required"] and props.get(key) in (None, ""):
            raise InvalidSpec(f"Required spec item '{key}' not provided.")
    native = to_native(name, props)
    try:
        validate_profile("senlin-profile", native, inventory)
    except Invalid as bad:
        details = [
            {"path": _senlin_pointer(name, d.get("path", "")), "message": d.get("message", "")}
            for d in bad.details
        ]
        text = "; ".join(
            f"{d['path']}: {d['message']}" if d["path"] else d["message"] for d in details
        )
        raise InvalidSpec(f"Failed in validating profile spec: {text}", details) from None
    normal = {"type": kind, "version": version, "properties": props}
    return SenlinSpec(name, normal, native)


def to_native(type_name: str, props: dict[str, Any]) -> dict[str, Any]:
    """The native profile a Senlin profile type's properties describe."""
    if type_name == NOVA_SERVER:
        out: dict[str, Any] = {"type": "server"}
        for key in ("flavor", "image"):
            if props.get(key) is not None:
                value = props[key]
                out[key] = str(value) if isinstance(value, int | float) else value
        if props.get("availability_zone"):
            out["zone"] = props["availability_zone"]
        if props.get("metadata"):
            out["metadata"] = props["metadata"]
        networks = props.get("networks")
        if isinstance(networks, list):
            names = [n.get("network") for n in networks if isinstance(n, dict)]
            if any(names):
                out["networks"] = [n for n in names if n]
        elif networks is not None:
            out["networks"] = networks
        return out
    kind = "volume" if type_name == SHOAL_VOLUME else "server"
    return {"type": kind, **props}


def _senlin_pointer(type_name: str, native_path: str) -> str:
    if not native_path:
        return "/spec/properties"
    head, _, rest = native_path.lstrip("/").partition("/")
    if type_name == NOVA_SERVER:
        if head == "networks" and rest:
            index = rest.split("/", 1)[0]
            return f"/spec/properties/networks/{index}/network"
        head = _NOVA_FROM_NATIVE.get(head, head)
    return "/spec/properties/" + head + (f"/{rest}" if rest else "")


def spec_of_native(native: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A native profile shown as a Senlin profile: its type name and spec."""
    kind = native.get("type")
    type_name = SHOAL_VOLUME if kind in ("volume", "block-storage") else SHOAL_SERVER
    ptype = PROFILE_TYPES[type_name]
    props = {k: v for k, v in native.items() if k != "type"}
    return type_name, {"type": ptype.type_name, "version": ptype.version, "properties": props}
