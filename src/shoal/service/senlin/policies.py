"""Senlin policy types, their specs, and what each does to a Shoal cluster document.

A Senlin policy attached to a cluster becomes part of the cluster's own document, where
Shoal's engine already acts on it:

| Senlin policy | Shoal document |
|---|---|
| `senlin.policy.deletion` (criteria) | the node group's `deletion.victims` |
| `senlin.policy.scaling` (event, adjustment) | the node group's `scaling` (last attached wins) |
| `senlin.policy.health` (detection, recovery) | the node group's `health` |
| `senlin.policy.zone_placement` (zones) | the node group's `zones` (weights are not used) |
| `senlin.policy.affinity` (servergroup policies) | a grouping over the node group, host scope |
| `senlin.policy.batch` (max_batch_size, pause_time) | the node group's `update` |
| `senlin.policy.loadbalance` (pool, vip, health_monitor) | a `load_balancers` entry (and a net) |
| `senlin.policy.region_placement` (regions) | checked; one region: placement unchanged |

The load balancer's members follow the node group (docs/networks.md). Senlin names an existing
subnet for the pool and the VIP; Shoal gives the balancer a cluster network of its own instead
(its range from the VIP's address, or 10.253.X.0/24), and the subnet's name is not used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict
from urllib.parse import urlsplit

from pydantic import JsonValue

from shoal.service.errors import NotFound
from shoal.service.senlin.errors import InvalidSpec
from shoal.service.senlin.shapes import JsonObject, PropertySchema, SupportStatus

GROUPING_PREFIX = "senlin-"


def _p(
    kind: str, description: str, default: JsonValue = None, required: bool = False
) -> PropertySchema:
    out: PropertySchema = {
        "type": kind,
        "description": description,
        "required": required,
        "updatable": False,
    }
    if default is not None:
        out["default"] = default
    return out


_DELETION = {
    "criteria": _p(
        "String", "OLDEST_FIRST, OLDEST_PROFILE_FIRST, YOUNGEST_FIRST or RANDOM", "RANDOM"
    ),
    "destroy_after_deletion": _p("Boolean", "accepted; Shoal always deletes", True),
    "grace_period": _p("Integer", "accepted; not used", 0),
    "reduce_desired_capacity": _p("Boolean", "accepted; Shoal always reduces it", True),
    "hooks": _p("Map", "accepted; not used"),
}
_SCALING = {
    "event": _p("String", "CLUSTER_SCALE_IN or CLUSTER_SCALE_OUT", required=True),
    "adjustment": _p("Map", "type, number, min_step, best_effort, cooldown"),
}
_HEALTH = {
    "detection": _p("Map", "type (NODE_STATUS_POLLING, NODE_STATUS_POLL_URL...) and options"),
    "recovery": _p("Map", "actions: [{name: RECREATE | REBUILD | REBOOT}]"),
}
_ZONES = {"zones": _p("List", "[{name, weight}]; weights are not used", required=True)}
_AFFINITY = {
    "servergroup": _p("Map", "name, policies: affinity | anti-affinity"),
    "availability_zone": _p("String", "the zone every node must be in"),
    "enable_drs_extension": _p("Boolean", "accepted; not used", False),
}
_LOADBALANCE = {
    "pool": _p("Map", "protocol, protocol_port, subnet (not used), lb_method", required=True),
    "vip": _p("Map", "subnet (not used), address, protocol, protocol_port", required=True),
    "health_monitor": _p("Map", "type, delay, timeout, max_retries, url_path, expected_codes"),
    "lb_status_timeout": _p("Integer", "accepted; not used", 300),
    "loadbalancer": _p("String", "an existing load balancer; not supported"),
}
_REGIONS = {"regions": _p("List", "[{name, weight, cap}]; Shoal runs in one region", required=True)}
_BATCH = {
    "min_in_service": _p("Integer", "accepted; Shoal keeps max_batch_size down at once", 1),
    "max_batch_size": _p("Integer", "nodes replaced at once; -1: one", -1),
    "pause_time": _p("Integer", "seconds between batches", 60),
}


@dataclass(frozen=True, slots=True)
class PolicyType:
    name: str
    schema: dict[str, PropertySchema]

    @property
    def short(self) -> str:
        """`deletion` for `senlin.policy.deletion-1.1`."""
        return self.name.rsplit("-", 1)[0].rsplit(".", 1)[-1]

    def support_status(self) -> dict[str, list[SupportStatus]]:
        version = self.name.rsplit("-", 1)[1]
        return {version: [{"status": "SUPPORTED", "since": "2016.04"}]}


POLICY_TYPES: dict[str, PolicyType] = {
    t.name: t
    for t in (
        PolicyType("senlin.policy.deletion-1.0", _DELETION),
        PolicyType("senlin.policy.deletion-1.1", _DELETION),
        PolicyType("senlin.policy.scaling-1.0", _SCALING),
        PolicyType("senlin.policy.health-1.0", _HEALTH),
        PolicyType("senlin.policy.health-1.1", _HEALTH),
        PolicyType("senlin.policy.zone_placement-1.0", _ZONES),
        PolicyType("senlin.policy.affinity-1.0", _AFFINITY),
        PolicyType("senlin.policy.batch-1.0", _BATCH),
        PolicyType("senlin.policy.loadbalance-1.0", _LOADBALANCE),
        PolicyType("senlin.policy.loadbalance-1.1", _LOADBALANCE),
        PolicyType("senlin.policy.region_placement-1.0", _REGIONS),
    )
}


@dataclass(frozen=True, slots=True)
class CheckedPolicy:
    type_name: str
    spec: JsonObject

    @property
    def short(self) -> str:
        return POLICY_TYPES[self.type_name].short

    @property
    def properties(self) -> JsonObject:
        props = self.spec.get("properties")
        return props if isinstance(props, dict) else {}


def parse_policy_spec(spec: object) -> CheckedPolicy:
    if not isinstance(spec, dict):
        raise InvalidSpec("The policy spec must be a map with type, version and properties.")
    unknown = sorted(set(spec) - {"type", "version", "properties", "description"})
    if unknown:
        raise InvalidSpec(f"Unrecognizable spec item '{unknown[0]}'")
    name = f"{spec.get('type')}-{spec.get('version')}"
    ptype = POLICY_TYPES.get(name)
    if ptype is None:
        raise NotFound(f"The policy_type '{name}' could not be found.")
    props = spec.get("properties") or {}
    if not isinstance(props, dict):
        raise InvalidSpec("The 'properties' of a policy spec must be a map.")
    for key in props:
        if key not in ptype.schema:
            raise InvalidSpec(f"Unrecognizable spec item '{key}'")
    for key, rule in ptype.schema.items():
        if rule["required"] and props.get(key) in (None, "", []):
            raise InvalidSpec(f"Required spec item '{key}' not provided.")
    checked = CheckedPolicy(
        name, {"type": spec["type"], "version": str(spec["version"]), "properties": props}
    )
    effect(checked, "probe", "probe")  # refuses values it cannot translate
    return checked


class ScalingFields(TypedDict):
    """A node group's `scaling` (docs/receivers.md), from a scaling policy."""

    adjustment_type: str
    number: int | float
    cooldown_s: int
    strict: bool
    min_step: NotRequired[int]


class HealthFields(TypedDict):
    """A node group's `health`, from a health policy."""

    interval_s: int
    check: NotRequired[str]
    path: NotRequired[str]
    port: NotRequired[int]
    recovery: NotRequired[str]


class UpdateFields(TypedDict):
    max_unavailable: int
    pause_s: int


class GroupFields(TypedDict, total=False):
    """The node group fields a policy writes (and clears when it is detached)."""

    deletion: dict[str, str]
    scaling: ScalingFields
    health: HealthFields
    zones: list[str]
    update: UpdateFields


class Grouping(TypedDict):
    """A document grouping (an affinity policy's server group)."""

    name: str
    members: list[str]
    rule: str
    scope: str


class Network(TypedDict):
    name: str
    cidr: str


@dataclass(frozen=True, slots=True)
class Effect:
    """What a policy writes: node group fields, groupings, and entries (each with a `name`)
    of the document's top-level lists `networks` and `load_balancers` (a load balancer)."""

    group: GroupFields
    groupings: list[Grouping]
    networks: list[Network] = field(default_factory=list)
    load_balancers: list[JsonObject] = field(default_factory=list)
    """A native load balancer entry (`documents/` reads it: listeners, pools, health)."""

    def sections(self) -> tuple[tuple[str, list[Network] | list[JsonObject]], ...]:
        """The top-level lists written, by document key (only those the policy writes)."""
        both = (("networks", self.networks), ("load_balancers", self.load_balancers))
        return tuple((key, entries) for key, entries in both if entries)


def effect(p: CheckedPolicy, group: str, policy_id: str) -> Effect:
    props = p.properties
    kind = p.short
    if kind == "deletion":
        criteria = str(props.get("criteria", "RANDOM")).lower()
        if criteria not in ("oldest_first", "youngest_first", "oldest_profile_first", "random"):
            raise InvalidSpec(f"Invalid value '{props.get('criteria')}' for 'criteria'.")
        return Effect({"deletion": {"victims": criteria}}, [])
    if kind == "scaling":
        return Effect({"scaling": _scaling(props)}, [])
    if kind == "health":
        return Effect({"health": _health(props)}, [])
    if kind == "zone_placement":
        zones = props.get("zones")
        names = (
            [z.get("name") for z in zones if isinstance(z, dict)] if isinstance(zones, list) else []
        )
        if not names or not all(isinstance(n, str) and n for n in names):
            raise InvalidSpec("'zones' must be a list of {name, weight}.")
        return Effect({"zones": [str(n) for n in names]}, [])
    if kind == "affinity":
        sg = props.get("servergroup") or {}
        rule = sg.get("policies", "anti-affinity") if isinstance(sg, dict) else None
        if isinstance(rule, list):
            rule = rule[0] if rule else "anti-affinity"
        if rule not in ("affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity"):
            raise InvalidSpec(f"Invalid value '{rule}' for 'servergroup.policies'.")
        grouping: Grouping = {
            "name": f"{GROUPING_PREFIX}{policy_id[:8]}",
            "members": [group],
            "rule": rule,
            "scope": "host",
        }
        fields: GroupFields = {}
        if props.get("availability_zone"):
            fields["zones"] = [str(props["availability_zone"])]
        return Effect(fields, [grouping])
    if kind == "loadbalance":
        return _loadbalance(props, group, policy_id)
    if kind == "region_placement":
        regions = props.get("regions")
        names = (
            [r.get("name") for r in regions if isinstance(r, dict)]
            if isinstance(regions, list)
            else []
        )
        if not names or not all(isinstance(n, str) and n for n in names):
            raise InvalidSpec("'regions' must be a list of {name, weight, cap}.")
        return Effect({}, [])
    # batch
    size = _int(props.get("max_batch_size", -1), "max_batch_size", minimum=-1)
    pause = _int(props.get("pause_time", 60), "pause_time", minimum=0)
    return Effect({"update": {"max_unavailable": size if size > 0 else 1, "pause_s": pause}}, [])


_LB_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "UDP")
_LB_METHODS = ("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP")


def _loadbalance(props: JsonObject, group: str, policy_id: str) -> Effect:
    if props.get("loadbalancer"):
        raise InvalidSpec("An existing 'loadbalancer' is not supported; Shoal makes its own.")
    pool, vip = props.get("pool") or {}, props.get("vip") or {}
    if not isinstance(pool, dict) or not isinstance(vip, dict):
        raise InvalidSpec("'pool' and 'vip' must be maps.")
    for where, m in (("pool", pool), ("vip", vip)):
        if str(m.get("protocol", "HTTP")) not in _LB_PROTOCOLS:
            raise InvalidSpec(f"Invalid value '{m.get('protocol')}' for '{where}.protocol'.")
    method = str(pool.get("lb_method", "ROUND_ROBIN"))
    if method not in _LB_METHODS:
        raise InvalidSpec(f"Invalid value '{method}' for 'pool.lb_method'.")
    member_port = _int(pool.get("protocol_port", 80), "pool.protocol_port", minimum=1)
    listen = _int(vip.get("protocol_port", 80), "vip.protocol_port", minimum=1)
    if member_port > 65535 or listen > 65535:
        raise InvalidSpec("Ports are 1 to 65535.")
    tag = policy_id[:8]
    address = vip.get("address")
    if address:
        octets = str(address).split(".")
        if len(octets) != 4:
            raise InvalidSpec(f"Invalid value '{address}' for 'vip.address'.")
        cidr = ".".join(octets[:3]) + ".0/24"
    else:
        cidr = f"10.253.{int(tag, 16) % 250 + 1 if _hex(tag) else 1}.0/24"
    network = f"{GROUPING_PREFIX}lb-{tag}"
    pool_entry: JsonObject = {
        "name": "members",
        "members": group,
        "port": member_port,
        "protocol": str(pool.get("protocol", "HTTP")),
        "algorithm": method,
    }
    entry: JsonObject = {
        "name": f"{GROUPING_PREFIX}{tag}",
        "network": network,
        "listeners": [
            {"port": listen, "protocol": str(vip.get("protocol", "HTTP")), "pool": "members"}
        ],
        "pools": [pool_entry],
    }
    if address:
        entry["vip"] = str(address)
    monitor = props.get("health_monitor")
    if isinstance(monitor, dict) and monitor:
        health = {
            k: monitor[k]
            for k in ("type", "delay", "timeout", "max_retries", "url_path", "expected_codes")
            if monitor.get(k) is not None
        }
        pool_entry["health"] = health
    return Effect({}, [], [{"name": network, "cidr": cidr}], [entry])


def _hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdef" for c in text.lower())


def _int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidSpec(f"Invalid value '{value}' for '{name}'.")
    return value


def _scaling(props: JsonObject) -> ScalingFields:
    if props.get("event") not in ("CLUSTER_SCALE_IN", "CLUSTER_SCALE_OUT"):
        raise InvalidSpec(f"Invalid value '{props.get('event')}' for 'event'.")
    adj = props.get("adjustment") or {}
    if not isinstance(adj, dict):
        raise InvalidSpec("'adjustment' must be a map.")
    kind = adj.get("type", "CHANGE_IN_CAPACITY")
    if kind not in ("EXACT_CAPACITY", "CHANGE_IN_CAPACITY", "CHANGE_IN_PERCENTAGE"):
        raise InvalidSpec(f"Invalid value '{kind}' for 'adjustment.type'.")
    number = adj.get("number", 1)
    if isinstance(number, bool) or not isinstance(number, int | float) or number <= 0:
        raise InvalidSpec(f"Invalid value '{number}' for 'adjustment.number'.")
    out: ScalingFields = {
        "adjustment_type": str(kind),
        "number": number,
        "cooldown_s": _int(adj.get("cooldown", 0), "adjustment.cooldown", minimum=0),
        "strict": not bool(adj.get("best_effort", False)),
    }
    if kind == "CHANGE_IN_PERCENTAGE":
        out["min_step"] = _int(adj.get("min_step", 1), "adjustment.min_step", minimum=1)
    return out


_RECOVERY = {"RECREATE": "replace", "REBUILD": "rebuild", "REBOOT": "reboot"}


def _health(props: JsonObject) -> HealthFields:
    detection = props.get("detection") or {}
    if not isinstance(detection, dict):
        raise InvalidSpec("'detection' must be a map.")
    modes = detection.get("detection_modes")  # health-1.1
    mode = modes[0] if isinstance(modes, list) and modes else detection
    if not isinstance(mode, dict):
        raise InvalidSpec("'detection' must name a type.")
    options = mode.get("options")
    if not isinstance(options, dict):
        options = {}
    interval = detection.get("interval", options.get("interval", 60))
    out: HealthFields = {"interval_s": _int(interval, "detection.interval", minimum=1)}
    kind = mode.get("type", "NODE_STATUS_POLLING")
    if kind == "NODE_STATUS_POLL_URL":
        url = urlsplit(str(options.get("poll_url", "")))
        out["check"] = "http"
        out["path"] = url.path or "/"
        if url.port:
            out["port"] = url.port
    elif kind not in ("NODE_STATUS_POLLING", "HYPERVISOR_STATUS_POLLING", "LIFECYCLE_EVENTS"):
        raise InvalidSpec(f"Invalid value '{kind}' for 'detection.type'.")
    recovery = props.get("recovery") or {}
    actions = recovery.get("actions") if isinstance(recovery, dict) else None
    name = "RECREATE"
    if isinstance(actions, list) and actions and isinstance(actions[0], dict):
        name = str(actions[0].get("name", "RECREATE")).upper()
    if name not in _RECOVERY:
        raise InvalidSpec(f"Invalid value '{name}' for 'recovery.actions'.")
    out["recovery"] = _RECOVERY[name]
    return out


def scaling_event(p: CheckedPolicy) -> str | None:
    event = p.properties.get("event")
    return str(event) if p.short == "scaling" and event else None
