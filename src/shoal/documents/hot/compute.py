"""Nova servers, Cinder volumes and attachments, and Nova server groups, as Shoal nodes.

A server's flavor and image resolve against the inventory's catalog like a native profile's;
its `scheduler_hints: {group: ...}` names the server group it joins (a placement rule, not an
API call, in Shoal). A volume attachment ties a volume to a server: in Shoal's model the two
become one unit, so they share a host and are created and attached together.
"""

from __future__ import annotations

import json

from shoal.documents import catalog
from shoal.documents.collect import child
from shoal.documents.hot.context import Resource, StackView, check_props, concrete_text
from shoal.documents.hot.shapes import AttachmentShape, ServerGroupShape, ServerShape, VolumeShape
from shoal.documents.hot.values import Ref, first_symbolic, is_symbolic
from shoal.documents.tree import describe
from shoal.model.enums import Rule
from shoal.model.profile import ServerProfile, VolumeProfile

SERVER_PROPS = frozenset(
    {
        "admin_pass", "availability_zone", "block_device_mapping", "block_device_mapping_v2",
        "config_drive", "deployment_swift_data", "diskConfig", "flavor", "flavor_update_policy",
        "image", "image_update_policy", "key_name", "metadata", "name", "networks",
        "personality", "reservation_id", "scheduler_hints", "security_groups",
        "software_config_transport", "tags", "user_data", "user_data_format",
        "user_data_update_policy",
    }
)  # fmt: skip
VOLUME_PROPS = frozenset(
    {
        "availability_zone", "backup_id", "description", "image", "imageRef", "metadata",
        "multiattach", "name", "read_only", "scheduler_hints", "size", "snapshot_id",
        "source_volid", "volume_type",
    }
)  # fmt: skip
ATTACH_PROPS = frozenset({"instance_uuid", "mountpoint", "volume_id"})
GROUP_PROPS = frozenset({"name", "policies", "rules"})
_USER_DATA_FORMATS = ("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG")
_RULES = {r.value: r for r in Rule if r is not Rule.SPREAD}


def server(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report, ctx = stack.ctx.report, stack.ctx
    check_props(res, props, report, SERVER_PROPS, ("flavor",))
    where = child(res.path, "properties")
    flavor_ref = concrete_text(props.get("flavor"), child(where, "flavor"), report, "flavor")
    image_ref = concrete_text(props.get("image"), child(where, "image"), report, "image")
    if image_ref is None and props.get("image") is None:
        if props.get("block_device_mapping") or props.get("block_device_mapping_v2"):
            report.cannot(
                "boot from volume",
                where,
                "a server booted from a volume (block_device_mapping without an image) is "
                "not supported; give it an image",
            )
        else:
            report.problem(where, "OS::Nova::Server needs an image (or a boot volume)")
    zone = concrete_text(
        props.get("availability_zone"),
        child(where, "availability_zone"),
        report,
        "zone",
        empty_ok=True,
    )
    zone = zone or None  # an empty zone is no zone, as in Nova
    before = len(report.out)
    flavor = image = None
    if flavor_ref is not None:
        ctx.wants.flavors.add(flavor_ref)
        flavor = catalog.flavor(flavor_ref, ctx.inventory, child(where, "flavor"), report.out)
    if image_ref is not None:
        ctx.wants.images.add(image_ref)
        image = catalog.image(image_ref, ctx.inventory, child(where, "image"), report.out)
    if zone is not None:
        ctx.wants.zones.add(zone)
        if not catalog.zone(zone, ctx.inventory, child(where, "availability_zone"), report.out):
            zone = None
    metadata = _metadata(stack, props.get("metadata"), child(where, "metadata"))
    networks = _networks(stack, props.get("networks"), child(where, "networks"))
    group = _group_hint(stack, props.get("scheduler_hints"), child(where, "scheduler_hints"))
    user_data = props.get("user_data")
    fmt = props.get("user_data_format")
    if fmt is not None and not is_symbolic(fmt) and fmt not in _USER_DATA_FORMATS:
        report.problem(
            child(where, "user_data_format"),
            f"user_data_format is one of {', '.join(_USER_DATA_FORMATS)}, found {describe(fmt)}",
        )
    profile = None
    if flavor is not None and image is not None and len(report.out) == before:
        profile = ServerProfile(
            flavor=flavor, image=image, zone=zone, metadata=metadata, networks=networks
        )
    stack.shape.servers.append(
        ServerShape(
            res.name,
            res.path,
            profile,
            group=group,
            user_data=user_data if isinstance(user_data, str) else None,
        )
    )


def _metadata(stack: StackView, value: object, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        if not is_symbolic(value):
            stack.ctx.report.problem(path, f"metadata must be a mapping, found {describe(value)}")
        return {}
    out: dict[str, str] = {}
    for k, v in value.items():
        if first_symbolic(v) is not None:  # a '<' in literal text is just text
            stack.ctx.report.notice(
                child(path, str(k)), "a metadata value known only at run time is left out"
            )
        elif isinstance(v, str):
            out[str(k)] = v
        else:
            out[str(k)] = json.dumps(v, default=str)
    return out


def _networks(stack: StackView, value: object, path: str) -> tuple[str, ...]:
    if value is None or is_symbolic(value):
        return ()
    if not isinstance(value, list):
        stack.ctx.report.problem(path, f"networks must be a list, found {describe(value)}")
        return ()
    names: list[str] = []
    for i, item in enumerate(value):
        net = item.get("network") if isinstance(item, dict) else None
        if isinstance(net, str) and net:
            names.append(net)
        elif isinstance(item, dict) and item.get("port") is not None:
            continue  # the port resource itself is reported if its type is unsupported
        elif isinstance(item, dict) and ("uuid" in item or "subnet" in item or "network" in item):
            stack.ctx.report.notice(
                child(path, i), "a network known only by id or at run time is left out"
            )
        else:
            stack.ctx.report.problem(
                child(path, i), "a network entry is a mapping with 'network' or 'port'"
            )
    return tuple(names)


def _group_hint(stack: StackView, value: object, path: str) -> Ref | None:
    if not isinstance(value, dict):
        return None
    group = value.get("group")
    if isinstance(group, Ref):
        return group
    if group is not None:
        stack.ctx.report.notice(
            child(path, "group"),
            "a server group given by id is not one of this template's; ignored",
        )
    return None


def volume(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report, ctx = stack.ctx.report, stack.ctx
    check_props(res, props, report, VOLUME_PROPS)
    where = child(res.path, "properties")
    for source in ("image", "imageRef", "snapshot_id", "source_volid", "backup_id"):
        if props.get(source) is not None:
            report.notice(
                child(where, source),
                f"the volume's {source} is not copied by Shoal: the volume is created empty",
            )
    size = props.get("size")
    profile = None
    if size is None:
        report.problem(where, "Shoal needs the volume's size (in GiB)")
    elif is_symbolic(size):
        concrete_text(size, child(where, "size"), report, "volume size")
    elif isinstance(size, str) and size.isdigit():
        size = int(size)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 1:
        vtype = props.get("volume_type")
        zone = props.get("availability_zone") or None  # an empty zone is no zone
        ok = True
        if isinstance(zone, str):
            ctx.wants.zones.add(zone)
            ok = catalog.zone(zone, ctx.inventory, child(where, "availability_zone"), report.out)
        profile = VolumeProfile(
            size_gb=size,
            volume_type=vtype if isinstance(vtype, str) else "",
            zone=zone if isinstance(zone, str) and ok else None,
        )
    elif size is not None and not is_symbolic(size):
        report.problem(
            child(where, "size"), f"size is a whole number of GiB >= 1, found {describe(size)}"
        )
    stack.shape.volumes.append(VolumeShape(res.name, res.path, profile))


def attachment(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    if not check_props(res, props, report, ATTACH_PROPS, ("instance_uuid", "volume_id")):
        return
    where = child(res.path, "properties")
    ends: list[str] = []
    for key, kind in (("instance_uuid", "OS::Nova::Server"), ("volume_id", "OS::Cinder::Volume")):
        ref = props[key]
        if not isinstance(ref, Ref) or ref.scope != stack.name:
            report.cannot(
                "attachment of an outside volume or server",
                child(where, key),
                f"'{key}' must be {{get_resource: ...}} of an {kind} of this template",
            )
            return
        if stack.type_of(ref.name) != kind:
            report.problem(child(where, key), f"'{ref.name}' is not an {kind}")
            return
        ends.append(ref.name)
    stack.shape.attachments.append(AttachmentShape(res.path, ends[0], ends[1]))


def server_group(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, GROUP_PROPS)
    where = child(res.path, "properties")
    policies = props.get("policies", ["anti-affinity"])
    rule = None
    if not isinstance(policies, list) or len(policies) != 1:
        report.problem(child(where, "policies"), "policies is a list of exactly one policy")
    elif policies[0] not in _RULES:
        report.problem(
            child(where, "policies", 0),
            f"unknown policy {describe(policies[0])}; choose affinity, anti-affinity, "
            "soft-affinity or soft-anti-affinity",
        )
    else:
        rule = _RULES[str(policies[0])]
    per_host = None
    rules = props.get("rules")
    if isinstance(rules, dict) and rules.get("max_server_per_host") is not None:
        value = rules["max_server_per_host"]
        if isinstance(value, int) and value >= 1 and rule is Rule.ANTI_AFFINITY:
            per_host = value
        else:
            report.problem(
                child(where, "rules", "max_server_per_host"),
                "max_server_per_host is a whole number >= 1, with the anti-affinity policy",
            )
    stack.shape.server_groups.append(ServerGroupShape(res.name, res.path, rule, per_host))
