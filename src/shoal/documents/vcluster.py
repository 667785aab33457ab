"""The Nova "vcluster" blueprint's document (seed 002), accepted as its commenter wrote it.

That form repeats the keys "instance" and "grouping" inside one object; the parser keeps every
pair, and here each repeat is one instance or grouping, in order. Lists of instance and
grouping objects are accepted too. Entry i of either is addressed as `/vcluster/instances/i`,
whichever way it was written (docs/vcluster.md). The result is a cluster of standalone
instances and groupings, with no node groups.
"""

from __future__ import annotations

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft, GroupingDraft, InstanceDraft
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import suggest
from shoal.documents.native import label_of
from shoal.documents.profiles import SERVER_TYPES, VOLUME_TYPES, Keys, read_server, read_volume
from shoal.documents.rules import read_rule
from shoal.documents.tree import describe, is_list, is_mapping, pairs_of, quote
from shoal.model.inventory import Inventory

VCLUSTER_KEYS = Keys(
    flavor="flavorRef",
    image="imageRef",
    zone="availability_zone",
    size="size",
    volume_type="volume_type",
    metadata="metadata",
    networks=None,
)


def is_vcluster(data: object) -> bool:
    """True when the document's top-level mapping has a `vcluster` key."""
    return is_mapping(data) and any(k == "vcluster" for k, _ in pairs_of(data))


def read_vcluster(data: object, inventory: Inventory, out: ProblemList) -> ClusterDraft | None:
    top = Fields(data, "", out)
    body = mapping(top.raw("vcluster"), top.at("vcluster"), out, "vcluster")
    top.finish()
    if body is None:
        return None
    draft = ClusterDraft(name=body.name("name", required="name the virtual cluster"))
    for value, path in _entries(body, "instances", "instance", required=True):
        draft.instances.append(_instance(value, path, inventory, out))
    for value, path in _entries(body, "groupings", "grouping", required=False):
        draft.groupings.append(_grouping(value, path, out))
    body.finish()
    return draft


def _entries(f: Fields, key: str, singular: str, *, required: bool) -> list[tuple[object, str]]:
    """The entries of `instances` / `groupings`: repeated keys or a list, with pointers."""
    before = len(f.out)
    raw = f.raw(key, required=f"a vcluster needs at least one {singular}" if required else None)
    where = f.at(key)
    entries: list[tuple[object, str]] = []
    if raw is None:
        return entries
    if is_list(raw):
        for i, item in enumerate(raw):
            inner = pairs_of(item) if is_mapping(item) else []
            if len(inner) == 1 and inner[0][0] == singular:
                item = inner[0][1]  # {"instance": {...}} inside a list: the wrapper is optional
            entries.append((item, child(where, i)))
    elif is_mapping(raw):
        for i, (k, value) in enumerate(pairs_of(raw)):
            if k == singular:
                entries.append((value, child(where, i)))
                continue
            name = f"'{k}'" if isinstance(k, str) else describe(k)
            hint = suggest(k, [singular]) if isinstance(k, str) else ""
            f.out.add(
                child(where, i),
                f'unexpected key {name}{hint}; write each {singular} as "{singular}": {{...}}',
            )
    else:
        f.problem(
            key,
            f'expected "{singular}": {{...}} entries or a list of {singular}s, '
            f"found {describe(raw)}",
        )
        return entries
    if required and not entries and len(f.out) == before:
        f.problem(key, f"a vcluster needs at least one {singular}")
    return entries


def _instance(value: object, path: str, inventory: Inventory, out: ProblemList) -> InstanceDraft:
    f = mapping(value, path, out, "an instance")
    if f is None:
        return InstanceDraft(path, None, depends_on=None)
    draft = InstanceDraft(path, label_of(f), name=f.name("name", required="name the instance"))
    kind = f.text("type", required="say whether the instance is a server or a volume")
    spec = f.raw("spec", required="give the instance's spec")
    if kind is not None and kind not in SERVER_TYPES + VOLUME_TYPES:
        f.problem("type", f"unknown instance type {quote(kind)}; choose server or volume")
        kind = None
    if spec is not None:
        sf = mapping(spec, f.at("spec"), out, "the spec")
        if sf is not None and kind in SERVER_TYPES:
            draft.profile = read_server(sf, inventory, VCLUSTER_KEYS)
            sf.finish()
        elif sf is not None and kind in VOLUME_TYPES:
            draft.profile = read_volume(sf, inventory, VCLUSTER_KEYS)
            sf.finish()
    f.finish()
    return draft


def _grouping(value: object, path: str, out: ProblemList) -> GroupingDraft:
    members_path = child(path, "membersRef")
    f = mapping(value, path, out, "a grouping")
    if f is None:
        return GroupingDraft(path, None, members_path, scope=None)
    draft = GroupingDraft(
        path, label_of(f), members_path, name=f.name("name", required="name the grouping")
    )
    if f.has("membersRef"):
        draft.members = f.names("membersRef", what="instance name")
    else:
        f.problem("membersRef", "'membersRef' is missing: list the names of the members")
    spec = f.raw("spec", required="give the grouping's spec with its rule")
    sf = mapping(spec, f.at("spec"), out, "the spec") if spec is not None else None
    if sf is not None:
        read_rule(sf, draft)
        sf.finish()
    else:
        draft.rule = None
    f.finish()
    return draft
