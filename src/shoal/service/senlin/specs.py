"""Senlin profile types and specs, and their translation to Shoal's native profiles.

`os.nova.server-1.0` is Senlin's server profile: `flavor`, `image`, `availability_zone`,
`metadata` and `networks` (names, and their ports' security groups) become a native server
profile (flavor and image by name or id, as the inventory's catalog resolves them); a network
entry's `port`, `fixed_ip` or floating IP, which a native profile cannot express, is refused
naming it, never dropped. The other Nova properties are accepted and kept, so a profile shows
what it was given, but Shoal does not act on them. `shoal.server-1.0` and `shoal.volume-1.0`
carry Shoal's own profile fields as properties. `os.heat.stack-1.0` is read by the HOT reader
(`service/senlin/stacks.py`), which needs the inventory, so it is not translated here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import JsonValue

from shoal.model.inventory import Inventory
from shoal.service.errors import Invalid, NotFound
from shoal.service.profiles import validate_profile
from shoal.service.senlin.errors import InvalidSpec
from shoal.service.senlin.shapes import JsonObject, OperationSchema, PropertySchema, SupportStatus

NOVA_SERVER = "os.nova.server-1.0"
HEAT_STACK = "os.heat.stack-1.0"
DOCKER = "container.dockerinc.docker-1.0"
SHOAL_SERVER = "shoal.server-1.0"
SHOAL_VOLUME = "shoal.volume-1.0"

_KEPT = "accepted and shown back; Shoal does not act on it"


def _p(
    kind: str, description: str, *, required: bool = False, updatable: bool = False
) -> PropertySchema:
    return {
        "type": kind,
        "description": description,
        "required": required,
        "updatable": updatable,
    }


_NOVA_SCHEMA: dict[str, PropertySchema] = {
    "context": _p("Map", "Customized security context for operating servers; " + _KEPT),
    "flavor": _p("String", "ID or name of the flavor", required=True, updatable=True),
    # Not required, as in Senlin: a block-device mapping may boot the server from an image.
    "image": _p("String", "ID or name of the image", updatable=True),
    "name": _p("String", "Name of the server; " + _KEPT, updatable=True),
    "metadata": _p("Map", "Key-value pairs attached to each server", updatable=True),
    "availability_zone": _p("String", "Zone to place the servers in"),
    "networks": _p(
        "List",
        "Networks to attach: [{network: name, security_groups: [...], floating_network: "
        "name}]; a port, fixed_ip or existing floating_ip is refused (Shoal's server profile, "
        "shared by every member, cannot express it)",
        updatable=True,
    ),
    "key_name": _p("String", "Name of a key pair; " + _KEPT),
    "security_groups": _p("List", "Security groups (by name) of the servers' ports (openstack)"),
    "user_data": _p("String", "User data; " + _KEPT),
    "admin_pass": _p("String", "Administrator password; " + _KEPT),
    "auto_disk_config": _p("Boolean", "Disk partitioning; " + _KEPT),
    "block_device_mapping": _p("List", "Block devices; " + _KEPT),
    "block_device_mapping_v2": _p("List", "Block devices; " + _KEPT),
    "config_drive": _p("Boolean", "Config drive; " + _KEPT),
    "personality": _p("List", "Injected files; " + _KEPT),
    "scheduler_hints": _p("Map", "Scheduler hints; " + _KEPT),
}

_NOT_BUILT = "stored and shown back; Shoal does not build nodes of this type yet"

_HEAT_SCHEMA: dict[str, PropertySchema] = {
    "context": _p("Map", "A dictionary for specifying the customized context; " + _KEPT),
    "template": _p(
        "Map",
        "Heat stack template (a map, or its text), read by Shoal's HOT reader; a node is the "
        "template's one server, or nothing to place when it makes no server or volume",
        updatable=True,
    ),
    "template_url": _p(
        "String", "Heat stack template url; not fetched by Shoal (use template)", updatable=True
    ),
    "parameters": _p("Map", "Parameters to be passed to Heat for stack operations"),
    "files": _p("Map", "Contents of files referenced by the template, if any"),
    "timeout": _p("Integer", "A integer that specifies the number of minutes; " + _KEPT),
    "disable_rollback": _p("Boolean", "A boolean specifying whether a stack rollback; " + _KEPT),
    "environment": _p("Map", "A map that specifies the environment used for stack operations"),
}

_DOCKER_SCHEMA: dict[str, PropertySchema] = {
    "context": _p("Map", "Customized security context for operating containers"),
    "image": _p("String", "The image used to create a container", required=True),
    "name": _p("String", "The name of the container", updatable=True),
    "command": _p("String", "The command to run when container is started"),
    "port": _p("Integer", "The port number used to connect to docker daemon"),
    "host_node": _p("String", "The node on which container will be launched"),
    "host_cluster": _p("String", "The cluster on which container will be launched"),
}

_SHOAL_SERVER_SCHEMA: dict[str, PropertySchema] = {
    "flavor": _p("String", "ID or name of the flavor", required=True),
    "image": _p("String", "ID or name of the image", required=True),
    "zone": _p("String", "Zone the servers must be in"),
    "metadata": _p("Map", "Key-value pairs attached to each server"),
    "networks": _p("List", "Network names"),
}

_SHOAL_VOLUME_SCHEMA: dict[str, PropertySchema] = {
    "size": _p("Integer", "Size in GiB", required=True),
    "volume_type": _p("String", "Volume type"),
    "zone": _p("String", "Zone the volumes must be in"),
}


@dataclass(frozen=True, slots=True)
class ProfileType:
    name: str
    schema: dict[str, PropertySchema]
    since: str
    listed: bool = True
    """Shown in `GET /v1/profile-types` (Shoal's own types are found by name only)."""
    builds: bool = True
    """Its properties translate to one native profile by themselves (`to_native`). Heat
    stacks are read with the inventory by `stacks.py`; containers are stored only."""

    @property
    def type_name(self) -> str:
        return self.name.rsplit("-", 1)[0]

    @property
    def version(self) -> str:
        return self.name.rsplit("-", 1)[1]

    def support_status(self) -> dict[str, list[SupportStatus]]:
        return {self.version: [{"status": "SUPPORTED", "since": self.since}]}


PROFILE_TYPES: dict[str, ProfileType] = {
    t.name: t
    for t in (
        ProfileType(NOVA_SERVER, _NOVA_SCHEMA, "2016.04"),
        ProfileType(HEAT_STACK, _HEAT_SCHEMA, "2016.04", builds=False),
        ProfileType(DOCKER, _DOCKER_SCHEMA, "2017.02", builds=False),
        ProfileType(SHOAL_SERVER, _SHOAL_SERVER_SCHEMA, "2026.01", listed=False),
        ProfileType(SHOAL_VOLUME, _SHOAL_VOLUME_SCHEMA, "2026.01", listed=False),
    )
}

# Where a native profile field comes from in a Senlin spec, for problem pointers.
_NOVA_FROM_NATIVE = {"zone": "availability_zone"}


@dataclass(frozen=True, slots=True)
class SenlinSpec:
    """A checked Senlin spec: its profile type, the spec as given, and the native profile."""

    type_name: str
    spec: JsonObject
    native: JsonObject


def type_of(spec: JsonObject) -> str:
    return f"{spec.get('type')}-{spec.get('version')}"


def parse_spec(spec: object, inventory: Inventory | None = None) -> SenlinSpec:
    """Check a Senlin profile spec: 404 for an unknown type, 400 (InvalidSpec) naming what is
    wrong. Like Senlin, flavors and images are not looked up here unless `inventory` is given;
    a cluster built from the profile checks them against the provider's catalog."""
    if not isinstance(spec, dict):
        raise InvalidSpec("The profile spec must be a map with type, version and properties.")
    unknown = sorted(set(spec) - {"type", "version", "properties", "description"})
    if unknown:
        raise InvalidSpec(f"Unrecognizable spec item '{unknown[0]}'")
    kind, version = spec.get("type"), spec.get("version")
    if not isinstance(kind, str) or not kind:
        raise InvalidSpec("The 'type' key is missing from the provided spec map.")
    if version is None:
        raise InvalidSpec("The 'version' key is missing from the provided spec map.")
    version = str(version)
    name = f"{kind}-{version}"
    ptype = PROFILE_TYPES.get(name)
    if ptype is None:
        raise NotFound(f"The profile_type '{name}' could not be found.")
    props = spec.get("properties", {})
    if not isinstance(props, dict):
        raise InvalidSpec("The 'properties' of a profile spec must be a map.")
    for key in props:
        if key not in ptype.schema:
            raise InvalidSpec(f"Unrecognizable spec item '{key}'")
    for key, rule in ptype.schema.items():
        if rule["required"] and props.get(key) in (None, ""):
            raise InvalidSpec(f"Required spec item '{key}' not provided")
    if name == NOVA_SERVER and props.get("image") in (None, "") and _boot_image(props) is None:
        raise InvalidSpec("Required spec item 'image' not provided")
    normal: JsonObject = {"type": kind, "version": version, "properties": props}
    if not ptype.builds:
        return SenlinSpec(name, normal, {})
    native = to_native(name, props)
    if inventory is not None:
        check_native(name, native, inventory)
    return SenlinSpec(name, normal, native)


def check_native(name: str, native: JsonObject, inventory: Inventory) -> None:
    """The native profile against the provider's catalog (flavor, image, zone)."""
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


def to_native(type_name: str, props: JsonObject) -> JsonObject:
    """The native profile a Senlin profile type's properties describe."""
    ptype = PROFILE_TYPES.get(type_name)
    if ptype is not None and not ptype.builds:
        raise InvalidSpec(f"Profiles of type '{type_name}' are {_NOT_BUILT}.")
    if type_name == NOVA_SERVER:
        out: JsonObject = {"type": "server"}
        for key in ("flavor", "image"):
            if props.get(key) is not None:
                value = props[key]
                out[key] = str(value) if isinstance(value, int | float) else value
        if "image" not in out and (boot := _boot_image(props)) is not None:
            out["image"] = boot
        if props.get("availability_zone"):
            out["zone"] = props["availability_zone"]
        metadata = props.get("metadata")
        if isinstance(metadata, dict) and metadata:
            # Nova's metadata is text; Senlin passed other JSON values on as their text.
            out["metadata"] = {
                str(k): v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()
            }
        networks = props.get("networks")
        groups = props.get("security_groups")
        if isinstance(networks, list):
            names, port_groups, floating = _networks(networks, groups)
            if names:
                out["networks"] = names
            if floating:
                out["floating_networks"] = floating  # issue 26: one floating IP per member
            groups = port_groups if port_groups is not None else groups
        elif networks is not None:
            out["networks"] = networks
        if isinstance(groups, list) and groups:
            out["security_groups"] = groups  # issue 26: the openstack provider boots with them
        return out
    kind = "volume" if type_name == SHOAL_VOLUME else "server"
    return {"type": kind, **props}


_NET_KEYS = ("network", "port", "fixed_ip", "security_groups", "floating_network", "floating_ip")
"""Senlin's keys of an `os.nova.server` `networks` entry."""

_NOT_EXPRESSED = {
    "port": "Shoal makes the servers' ports itself and does not attach an existing port",
    "fixed_ip": (
        "a fixed IP is one server's, and a Senlin cluster's members share the profile (a "
        "native document gives an instance's port a fixed_ip, docs/networks.md)"
    ),
    "floating_ip": (
        "Shoal does not associate an existing floating IP with a member (a native "
        "document's floating_ips name the nodes, docs/networks.md)"
    ),
}
"""The `networks` properties Shoal's server profile cannot express (a profile holds network
names and one list of security groups): refused, naming the property, never dropped."""


def _networks(
    entries: list[JsonValue], groups: JsonValue
) -> tuple[list[JsonValue], list[JsonValue] | None, dict[str, JsonValue]]:
    """The network names of Senlin's `networks` entries, the security groups their ports take
    when the entries give them (one list for every port: the native profile's), and the
    floating networks per network (`floating_network`: every member gets its own floating IP
    on its port of that network, as Senlin makes one per server). Senlin's
    own checks first, in its words; then what the native profile cannot express, each named
    with its pointer, all at once (InvalidSpec)."""
    problems: list[dict[str, str]] = []

    def bad(index: int, key: str, message: str) -> None:
        problems.append({"path": f"/spec/properties/networks/{index}/{key}", "message": message})

    names: list[JsonValue] = []
    floating: dict[str, JsonValue] = {}
    given: list[tuple[int, list[JsonValue]]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue  # as before: Senlin's schema would refuse it; nothing to attach
        for key in entry:
            if key not in _NET_KEYS:
                bad(i, str(key), f"Unrecognizable spec item '{key}'")
        net, port = entry.get("network"), entry.get("port")
        if port is None and net is None:
            bad(i, "network", "One of 'port' and 'network' must be provided")
        if entry.get("fixed_ip") and port is not None:
            bad(
                i,
                "fixed_ip",
                "The 'port' property and the 'fixed_ip' property cannot be specified at the "
                "same time",
            )
        if entry.get("floating_ip") and not entry.get("floating_network"):
            bad(i, "floating_ip", "Must specify a network to create floating IP")
        for key, why in _NOT_EXPRESSED.items():
            if entry.get(key) not in (None, ""):
                bad(i, key, f"The '{key}' property of networks is not supported: {why}.")
        if net:
            names.append(net)
            if entry.get("floating_network") not in (None, ""):
                if str(net) in floating and floating[str(net)] != entry["floating_network"]:
                    bad(
                        i,
                        "floating_network",
                        f"The network {net} is given twice with different floating networks.",
                    )
                floating[str(net)] = entry["floating_network"]
        sgs = entry.get("security_groups")
        if isinstance(sgs, list) and sgs:
            given.append((i, sgs))
    ports = given[0][1] if given else None
    if given:
        # One list for every port: the entries (and the profile's own list) must agree.
        everyone = len(given) == len(names) and all(g == ports for _, g in given)
        if not everyone or (isinstance(groups, list) and groups and groups != ports):
            for i, _ in given:
                bad(
                    i,
                    "security_groups",
                    "The 'security_groups' property of networks is not supported when the "
                    "networks' ports (or the profile's security_groups) differ: Shoal gives "
                    "every port of a server the same security groups.",
                )
    if problems:
        text = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
        raise InvalidSpec(f"Failed in validating profile spec: {text}", problems)
    return names, ports, floating


def _boot_image(props: JsonObject) -> str | None:
    """The image a `block_device_mapping_v2` boots from (`boot_index` 0, `source_type`
    image), which Senlin passes to Nova in place of `image`; Shoal boots the same image."""
    bdm = props.get("block_device_mapping_v2")
    if not isinstance(bdm, list):
        return None
    for bd in bdm:
        if (
            isinstance(bd, dict)
            and str(bd.get("boot_index")) == "0"
            and bd.get("source_type") == "image"
            and isinstance(bd.get("uuid"), str)
            and bd["uuid"]
        ):
            return str(bd["uuid"])
    return None


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


NATIVE_VOLUME_KINDS = ("volume", "block-storage")
"""Native profile kinds shown as `shoal.volume-1.0`; every other kind is a server."""


def spec_of_native(native: JsonObject) -> tuple[str, JsonObject]:
    """A native profile shown as a Senlin profile: its type name and spec."""
    kind = native.get("type")
    type_name = SHOAL_VOLUME if kind in NATIVE_VOLUME_KINDS else SHOAL_SERVER
    ptype = PROFILE_TYPES[type_name]
    props = {k: v for k, v in native.items() if k != "type"}
    return type_name, {"type": ptype.type_name, "version": ptype.version, "properties": props}


def _op(description: str, **params: str) -> OperationSchema:
    return {
        "description": description,
        "parameters": {
            k: {"type": "String", "description": v, "required": False} for k, v in params.items()
        },
    }


_REFUSED = " (listed as Senlin lists it; Shoal's providers cannot do it and refuse it)"

NOVA_OPERATIONS: dict[str, OperationSchema] = {
    "reboot": _op("Reboot the nova server.", type="Type of reboot which can be 'SOFT' or 'HARD'."),
    "rebuild": _op("Rebuild the server using current image and admin password."),
    "change_password": _op(
        "Change the administrator password." + _REFUSED,
        admin_pass="New password for the administrator.",
    ),
    "pause": _op("Pause the server from running." + _REFUSED),
    "unpause": _op("Unpause the server to running state." + _REFUSED),
    "suspend": _op("Suspend the running of the server." + _REFUSED),
    "resume": _op("Resume the running of the server." + _REFUSED),
    "lock": _op("Lock the server." + _REFUSED),
    "unlock": _op("Unlock the server." + _REFUSED),
    "start": _op("Start the server." + _REFUSED),
    "stop": _op("Stop the server." + _REFUSED),
    "rescue": _op("Rescue the server." + _REFUSED, image="The image to use."),
    "unrescue": _op("Unrescue the server." + _REFUSED),
    "evacuate": _op("Evacuate the server to a different host." + _REFUSED, host="Target host."),
}
"""The operations of `os.nova.server-1.0`, as Senlin described them; Shoal does reboot and
rebuild (`POST /v1/nodes/{id}/ops`)."""
