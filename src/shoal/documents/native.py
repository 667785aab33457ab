"""The native cluster format (docs/cluster-format.md): a parsed tree to a `ClusterDraft`.

Each instance, node group and grouping is read on its own, so a broken one never hides the
problems of the others. Checks that need only one element (count within min and max, a
profile's zone within the group's zones) happen here; checks across elements live in
`namespace`, `membership` and `dependencies`.
"""

from __future__ import annotations

from shoal.documents import catalog
from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft, GroupDraft, GroupingDraft, InstanceDraft, PartDraft
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.networks import NETWORK_KEYS
from shoal.documents.params import DISABLED
from shoal.documents.policies import read_deletion, read_health, read_scaling, read_update
from shoal.documents.profiles import ProfileTable, read_zone
from shoal.documents.rules import read_rule
from shoal.documents.tree import describe, is_mapping, quote
from shoal.model.enums import Objective
from shoal.model.inventory import Inventory
from shoal.model.policies import StrayHandling

_DEPENDENCY = "node group or instance name"
_GROUP_ONLY = ("update", "scaling")
_NOT_PER_INSTANCE = ("health", "deletion", "update", "scaling")


MAX_REPLICAS = 1_000_000
"""The most replicas a node group may declare whatever the settings and inventory say: a
document's sanity bound, checked while reading, before anything is built per node."""


def read_native(data: object, inventory: Inventory, out: ProblemList) -> ClusterDraft | None:
    if not is_mapping(data):
        out.add(
            "",
            "the document must be a mapping of fields (name, node_groups, ...) or a vcluster "
            f"object, found {describe(data)}",
        )
        return None
    f = Fields(data, "", out)
    draft = ClusterDraft(name=f.name("name", required="give the cluster a name"))
    draft.objective = f.choice("objective", Objective, default=Objective.SPREAD)
    draft.metadata = f.text_map("metadata")
    draft.health = read_health(f)
    draft.deletion = read_deletion(f)
    draft.strays = f.choice("strays", StrayHandling, default=StrayHandling.REPORT)
    for key in _GROUP_ONLY:
        f.misplaced(
            key,
            f"'{key}' is set per node group, not for the whole cluster; "
            "move it into the node groups it is for",
        )
    profiles = ProfileTable()
    profiles.read(f.raw("profiles"), f.at("profiles"), inventory, out)
    for value, path in f.items("instances", what="instances"):
        if value is DISABLED:  # switched off by its condition (documents/params_template.py)
            continue
        draft.instances.append(_instance(value, path, inventory, profiles, out))
    for value, path in f.items("node_groups", what="node groups"):
        if value is DISABLED:
            continue
        draft.groups.append(_group(value, path, inventory, profiles, out))
    for value, path in f.items("groupings", what="groupings"):
        if value is DISABLED:
            continue
        draft.groupings.append(_grouping(value, path, out))
    for key in NETWORK_KEYS:  # read after the members they name (documents/networks.py)
        f.raw(key)
    f.finish()
    return draft


def label_of(f: Fields) -> str | None:
    value = f.values.get("name")
    return value if isinstance(value, str) else None


def _instance(
    value: object, path: str, inventory: Inventory, profiles: ProfileTable, out: ProblemList
) -> InstanceDraft:
    f = mapping(value, path, out, "an instance")
    if f is None:
        return InstanceDraft(path, None, depends_on=None)
    draft = InstanceDraft(path, label_of(f), name=f.name("name", required="name the instance"))
    raw = f.raw("profile", required="give the instance a profile (a name or a mapping)")
    if raw is not None:
        draft.profile = profiles.resolve(raw, f.at("profile"), inventory, out)
    draft.zone = read_zone(f, "zone", inventory)
    draft.depends_on = f.names("depends_on", what=_DEPENDENCY)
    for key in _NOT_PER_INSTANCE:
        f.misplaced(key, _not_per_instance(key))
    f.finish()
    pinned = draft.profile.zone if draft.profile is not None else None
    if draft.zone is not None and pinned is not None and pinned != draft.zone:
        f.problem(
            "zone",
            f"the instance is in zone {draft.zone} but its profile pins zone {pinned}; "
            "drop one of the two",
        )
    return draft


def _not_per_instance(key: str) -> str:
    if key == "health":
        return (
            "an instance follows the cluster's health policy and cannot have its own; "
            "set 'health' at the top of the document, or make it a node group of count 1"
        )
    return f"'{key}' is a node-group policy; an instance has none"


def _group(
    value: object, path: str, inventory: Inventory, profiles: ProfileTable, out: ProblemList
) -> GroupDraft:
    f = mapping(value, path, out, "a node group")
    if f is None:
        return GroupDraft(path, None, min_size=None, zones=None, labels=None, depends_on=None)
    draft = GroupDraft(path, label_of(f), name=f.name("name", required="name the node group"))
    draft.parts = _parts(f, inventory, profiles)
    draft.count = f.integer(
        "count", minimum=0, maximum=MAX_REPLICAS, required="give the number of replicas"
    )
    draft.min_size = f.integer("min", minimum=0, maximum=MAX_REPLICAS, default=0)
    draft.max_size = f.integer("max", minimum=0, maximum=MAX_REPLICAS)
    draft.zones = _zones(f, inventory)
    draft.labels = f.text_map("labels")
    draft.role = f.text("role", empty_ok=False)
    draft.depends_on = f.names("depends_on", what=_DEPENDENCY)
    draft.health = read_health(f)
    draft.update = read_update(f)
    draft.deletion = read_deletion(f)
    draft.scaling = read_scaling(f)
    f.finish()
    _check_size(f, draft)
    _check_zones(f, draft)
    return draft


def _parts(f: Fields, inventory: Inventory, profiles: ProfileTable) -> list[PartDraft] | None:
    has_profile, has_unit = f.has("profile"), f.has("unit")
    if has_profile and has_unit:
        f.out.add(
            f.path,
            "give either 'profile' (one profile) or 'unit' (several parts on one host), not both",
        )
        return None
    if has_profile:
        where = f.at("profile")
        return [PartDraft(None, profiles.resolve(f.raw("profile"), where, inventory, f.out), where)]
    if not has_unit:
        f.problem("profile", "'profile' is missing: give the group a profile, or a 'unit' of parts")
        return None
    unit = mapping(f.raw("unit"), f.at("unit"), f.out, "a unit")
    if unit is None:
        return None
    if not unit.entries():
        f.problem("unit", "a unit needs at least one part (part name: profile)")
        return None
    parts: list[PartDraft] = []
    names_ok = True
    for part, body in unit.entries():
        where = unit.at(part)
        if not is_name(part):
            f.out.add(where, f"{quote(part)} is not a valid part name: {NAME_RULE}")
            names_ok = False
        parts.append(PartDraft(part, profiles.resolve(body, where, inventory, f.out), where))
    return parts if names_ok else None


def _zones(f: Fields, inventory: Inventory) -> tuple[str, ...] | None:
    items = f.names("zones", what="zone")
    if items is None:
        return None
    zones: list[str] = []
    for zone, where in items:
        if zone in zones:
            f.out.add(where, f"zone {zone} is listed twice")
        elif catalog.zone(zone, inventory, where, f.out):
            zones.append(zone)
    return tuple(zones) if len(zones) == len(items) else None


def _check_size(f: Fields, g: GroupDraft) -> None:
    if g.min_size is not None and g.max_size is not None and g.min_size > g.max_size:
        f.problem("min", f"min ({g.min_size}) is above max ({g.max_size})")
        return
    if g.count is None:
        return
    if g.min_size is not None and g.count < g.min_size:
        f.problem("count", f"count ({g.count}) is below min ({g.min_size})")
    if g.max_size is not None and g.count > g.max_size:
        f.problem("count", f"count ({g.count}) is above max ({g.max_size})")


def _check_zones(f: Fields, g: GroupDraft) -> None:
    """Profiles that pin a zone must agree with the group's zones and with each other."""
    if g.parts is None or g.zones is None:
        return
    pinned = [(p, p.profile.zone) for p in g.parts if p.profile is not None and p.profile.zone]
    for part, zone in pinned:
        if g.zones and zone not in g.zones:
            f.out.add(
                part.path,
                f"{_profile_words(part)} pins zone {zone}, which is not one of this group's "
                f"zones ({', '.join(g.zones)})",
            )
    if len({zone for _, zone in pinned}) > 1:
        detail = ", ".join(f"{p.part} in {zone}" for p, zone in pinned)
        f.problem(
            "unit",
            f"the parts of a unit share a host, but their profiles pin different zones: {detail}",
        )


def _profile_words(part: PartDraft) -> str:
    name = part.profile.name if part.profile is not None else None
    return f"profile '{name}'" if name else "the profile"


def _grouping(value: object, path: str, out: ProblemList) -> GroupingDraft:
    members_path = child(path, "members")
    f = mapping(value, path, out, "a grouping")
    if f is None:
        return GroupingDraft(path, None, members_path, scope=None)
    draft = GroupingDraft(
        path, label_of(f), members_path, name=f.name("name", required="name the grouping")
    )
    if f.has("members"):
        draft.members = f.names("members", what="member")
    else:
        f.problem("members", "'members' is missing: list instances, node groups or group/part")
    read_rule(f, draft)
    f.finish()
    return draft
