"""Checks of container configs (`group: docker-compose` and `group: kubelet`) before anything runs.

A compose file or Pod manifest is text to Heat, handed to the node as is. Shoal reads it first
so that what would fail on the node, or would escape it, is a 4xx with JSON pointers into the
config (the config's own pointer, then the path inside the YAML), all at once:

- bad YAML; a compose file that is not heat-agents' format (a mapping of services, each a
  mapping: the hook reads `env_file` from every top-level value) or a manifest whose kind is
  not `Pod`;
- privilege: `privileged`, added capabilities, devices, the host's PID/IPC namespaces, security
  options; a container API socket is root-equivalent, so none of these are let through;
- the network: containers share the node's network (`net: host` / `hostNetwork: true`), so
  placement still shows in the address; published ports and host IPs are refused (bind the
  node's address, `${SHOAL_NODE_ADDRESS}` in a compose file, in the command instead);
- host paths: a compose bind mount must be relative to the project (which is inside the node's
  working directory) or under `${SHOAL_NODE_WORKDIR}`, never absolute or with `..`; a Pod
  manifest's `hostPath` volumes are refused (use `emptyDir`);
- unknown keys of a service, and unknown hook options (heat-agents' docker-compose hook reads
  none; its kubelet hook `images_timeout`, `containers_timeout`, `poll_period`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import yaml

from shoal.documents.collect import child
from shoal.model.software import HookGroup, SoftwareConfig

COMPOSE_KEYS = frozenset(
    {
        "image",
        "command",
        "entrypoint",
        "environment",
        "env_file",
        "restart",
        "net",
        "network_mode",
        "depends_on",
        "links",
        "labels",
        "volumes",
        "working_dir",
        "user",
        "healthcheck",
        "stop_signal",
        "stop_grace_period",
        "container_name",
        "hostname",
        "tmpfs",
        "read_only",
        "init",
        "logging",
    }
)
PRIVILEGED_COMPOSE = (
    "privileged",
    "cap_add",
    "devices",
    "pid",
    "ipc",
    "security_opt",
    "userns_mode",
)
REFUSED_COMPOSE = {
    "ports": "containers share the node's network (net: host); bind ${SHOAL_NODE_ADDRESS} in "
    "the command instead of publishing ports",
    "expose": "containers share the node's network (net: host); nothing to expose",
    "build": "images are not built on nodes: import them (`shoal image import`)",
    "volumes_from": "share a directory under the project instead",
    "extra_hosts": "containers share the node's network and /etc/hosts is the image's",
}
POD_KEYS = frozenset({"apiVersion", "kind", "metadata", "spec"})
POD_SPEC_KEYS = frozenset(
    {
        "containers",
        "initContainers",
        "hostNetwork",
        "restartPolicy",
        "volumes",
        "terminationGracePeriodSeconds",
        "hostname",
        "securityContext",
    }
)
CONTAINER_KEYS = frozenset(
    {
        "name",
        "image",
        "command",
        "args",
        "env",
        "workingDir",
        "ports",
        "volumeMounts",
        "securityContext",
        "imagePullPolicy",
        "resources",
        "livenessProbe",
        "readinessProbe",
        "stdin",
        "tty",
    }
)
HOOK_OPTIONS: Mapping[HookGroup, frozenset[str]] = {
    HookGroup.DOCKER_COMPOSE: frozenset(),
    HookGroup.KUBELET: frozenset({"images_timeout", "containers_timeout", "poll_period"}),
}
WORKDIR_VAR = "${SHOAL_NODE_WORKDIR}"
Add = Callable[[str, str], None]


def check_containers(
    configs: Mapping[str, SoftwareConfig], paths: Mapping[str, str], add: Add
) -> None:
    """Every problem of every container config, with pointers below each config's path, given
    to `add(pointer, message)` (a document's problem list; for a HOT template, Heat that Shoal
    does not run)."""
    out = _Adder(add)
    for name, config in configs.items():
        if config.group not in HOOK_OPTIONS:
            continue
        where = paths.get(name, f"/software/configs/{name}")
        inside = "" if where.startswith("/software/") else "properties"
        body = child(where, inside, "config") if inside else child(where, "config")
        options = child(where, inside, "options") if inside else child(where, "options")
        allowed = HOOK_OPTIONS[config.group]
        for option in config.options:
            if option not in allowed:
                known = ", ".join(sorted(allowed)) or "none"
                out.add(
                    child(options, option),
                    f"unknown {config.group} hook option '{option}' (known: {known})",
                )
        try:
            parsed = yaml.safe_load(config.config)
        except yaml.YAMLError as e:
            out.add(body, f"not valid YAML: {_first_line(e)}")
            continue
        if config.group is HookGroup.DOCKER_COMPOSE:
            _compose(parsed, body, out)
        else:
            _pod(parsed, body, out)


def _compose(doc: object, at: str, out: _Adder) -> None:
    if not isinstance(doc, dict) or not doc:
        out.add(at, "a compose file is a mapping of services (heat-agents' hook format)")
        return
    for service, body in doc.items():
        where = child(at, str(service))
        if not isinstance(body, dict):
            out.add(
                where,
                f"'{service}' is not a service: heat-agents' docker-compose hook reads a "
                "mapping of services at the top level (no 'version'/'services' keys)",
            )
            continue
        if "image" not in body:
            out.add(child(where, "image"), "a service needs an image (no builds on nodes)")
        for key, value in body.items():
            k = str(key)
            if k in PRIVILEGED_COMPOSE:
                if k == "privileged" and value is False:
                    continue
                out.add(child(where, k), f"'{k}' is refused: containers run unprivileged")
            elif k in REFUSED_COMPOSE:
                out.add(child(where, k), f"'{k}' is refused: {REFUSED_COMPOSE[k]}")
            elif k not in COMPOSE_KEYS:
                out.add(child(where, k), f"unknown service key '{k}'")
        for k in ("net", "network_mode"):
            if k in body and body[k] != "host":
                out.add(child(where, k), f"'{k}' must be 'host': containers use the node's address")
        if "net" not in body and "network_mode" not in body:
            out.add(child(where, "net"), "set 'net: host': containers use the node's own address")
        volumes = body.get("volumes", [])
        if not isinstance(volumes, list):
            out.add(child(where, "volumes"), "volumes is a list")
            continue
        for i, v in enumerate(volumes):
            _compose_volume(v, child(where, "volumes", i), out)


def _compose_volume(v: object, where: str, out: _Adder) -> None:
    if not isinstance(v, str):
        out.add(where, "a volume is 'SOURCE:TARGET[:ro]' text")
        return
    parts = v.split(":")
    if len(parts) < 2:
        return  # an anonymous volume inside the container store
    source = parts[0]
    if not source.startswith((".", "/", "~", "$")):
        return  # a named volume, in the node's container store
    inside = source.startswith("./") or source == "." or source.startswith(WORKDIR_VAR)
    if not inside or ".." in source.split("/"):
        out.add(
            where,
            f"host path '{source}' is outside the node's working directory: use a path "
            f"relative to the project (./data) or under {WORKDIR_VAR}",
        )


def _pod(doc: object, at: str, out: _Adder) -> None:
    if not isinstance(doc, dict):
        out.add(at, "a Pod manifest is a mapping (kind: Pod)")
        return
    if doc.get("kind") != "Pod":
        out.add(child(at, "kind"), f"kind must be Pod, not {doc.get('kind')!r}")
    for key in doc:
        if key not in POD_KEYS:
            out.add(child(at, str(key)), f"unknown Pod key '{key}'")
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        out.add(child(at, "metadata", "name"), "a Pod needs metadata.name")
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        out.add(child(at, "spec"), "a Pod needs a spec")
        return
    s = child(at, "spec")
    for key in spec:
        if key not in POD_SPEC_KEYS:
            hint = " (the host's namespaces are refused)" if str(key).startswith("host") else ""
            out.add(child(s, str(key)), f"'{key}' is refused or unknown{hint}")
    if spec.get("hostNetwork") is not True:
        out.add(child(s, "hostNetwork"), "set hostNetwork: true: containers use the node's address")
    _security(spec.get("securityContext"), child(s, "securityContext"), out)
    for i, volume in enumerate(spec.get("volumes") or []):
        if isinstance(volume, dict) and "hostPath" in volume:
            out.add(
                child(s, "volumes", i, "hostPath"),
                "hostPath volumes are refused (outside the node's working directory): use emptyDir",
            )
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        out.add(child(s, "containers"), "a Pod needs at least one container")
        return
    for i, c in enumerate(containers):
        where = child(s, "containers", i)
        if not isinstance(c, dict):
            out.add(where, "a container is a mapping")
            continue
        for key in ("name", "image"):
            if not isinstance(c.get(key), str):
                out.add(child(where, key), f"a container needs a {key}")
        for key in c:
            if key not in CONTAINER_KEYS:
                out.add(child(where, str(key)), f"unknown container key '{key}'")
        _security(c.get("securityContext"), child(where, "securityContext"), out)
        for j, port in enumerate(c.get("ports") or []):
            if isinstance(port, dict):
                for key in ("hostPort", "hostIP"):
                    if key in port:
                        out.add(
                            child(where, "ports", j, key),
                            f"'{key}' is refused: with hostNetwork the container binds the "
                            "node's address itself",
                        )


def _security(ctx: object, where: str, out: _Adder) -> None:
    if not isinstance(ctx, dict):
        return
    if ctx.get("privileged") is True:
        out.add(child(where, "privileged"), "privileged containers are refused")
    if ctx.get("allowPrivilegeEscalation") is True:
        out.add(child(where, "allowPrivilegeEscalation"), "privilege escalation is refused")
    caps = ctx.get("capabilities")
    if isinstance(caps, dict) and caps.get("add"):
        out.add(child(where, "capabilities", "add"), "added capabilities are refused")


class _Adder:
    """`ProblemList.add`'s shape over any `add`."""

    def __init__(self, add: Add) -> None:
        self.add = add


def _first_line(e: yaml.YAMLError) -> str:
    return str(e).splitlines()[0] if str(e) else "unreadable"
