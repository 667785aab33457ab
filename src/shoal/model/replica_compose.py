"""A workload's replica as a docker-compose config that a node's own agents run (issue 22, point 6).

On a provider without a replica runtime of its own (`openstack`, or `local` with
`replicas = "agents"`), a replica reaches its server the way a `group: docker-compose`
deployment does: as one entry of the server's metadata, which heat-config hands to heat-agents'
`docker-compose` hook unchanged. This module is the pure part both sides share: the engine
renders and stores the config (never a secret in it), the API serves it with the secrets filled
in (the one place they appear, as the deployments' secret inputs do).

Why one compose project per replica, not one per server: the hook runs `docker-compose up -d`,
which never removes a service that left the file (no `--remove-orphans`), while heat-config's
`50-heat-config-docker-compose` kills every project no longer in the metadata. So a replica
scaled in or moved away is a project that disappears, and the node stops it.

The config is compose file version 1 (the hook's format: services at the top level), so the
network is `net: host` (version 2's `network_mode`). Each container of the template is one
service: Kubernetes' `command` is compose's `entrypoint`, `args` its `command`, `$(VAR)` in
them expanded from the container's env as the local runtime does, every `$` doubled (compose
interpolates the file with the hook's environment otherwise). The env holds the document's
values and `SHOAL_NODE_ADDRESS`, `SHOAL_NODE_NAME`, `SHOAL_REPLICA`; secrets go through an
`env_file` the hook writes from the `env_files` input, one file name per delivery (the hook
opens it without truncating), single-quoted for the dotenv reader compose uses.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shoal.model.software import Json
from shoal.model.workload_rollouts import ContainerRun, ReplicaTemplate
from shoal.model.workloads import RestartPolicy

PROJECT_PREFIX = "shoal-replica-"
"""Every replica project's name starts so, and ends with a digest of the replica's name: a
document's deployment (the same namespace on the node) is not refused that prefix, but would
have to carry that digest to collide."""

REPLICA_LABEL = "shoal.replica"
GENERATION_LABEL = "shoal.generation"
REVISION_LABEL = "shoal.revision"
DELIVERY_LABEL = "shoal.delivery"
ENV_FILES_INPUT = "env_files"
"""The hook's input naming the env files it writes (a Python literal list of
`{"file_name", "content"}`)."""

_NAME_OK = re.compile(r"[^-_a-z0-9]")
_SERVICE_OK = re.compile(r"[^a-zA-Z0-9_.-]")
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")

_RESTART = {
    RestartPolicy.ALWAYS: "always",
    RestartPolicy.ON_FAILURE: "on-failure",
    RestartPolicy.NEVER: "no",
}


class UncarriableSecret(ValueError):
    """A secret value the compose env file cannot carry as written (`${` is interpolated by
    the dotenv reader compose uses, with no escape). Names the variable, never the value."""


@dataclass(frozen=True, slots=True)
class ComposeReplica:
    """One delivery of a replica to its server, as stored: no secret value in it."""

    project: str
    config: dict[str, Json]
    secret_env: tuple[tuple[str, str], ...]
    """(service, variable) of every env variable whose value is a secret, served in the
    service's env file only (`secret_files`)."""


def project_name(replica: str) -> str:
    """The compose project (and heat-config deployment name) of a replica: readable, in the
    characters docker-compose keeps, and unique (a digest of the exact name)."""
    digest = hashlib.sha256(replica.encode()).hexdigest()[:8]
    return f"{PROJECT_PREFIX}{_NAME_OK.sub('', replica.lower())[:40]}-{digest}"


def service_name(container: str) -> str:
    return _SERVICE_OK.sub("_", container)[:60] or "c"


def env_file_name(service: str, delivery: str) -> str:
    # In a subdirectory: the hook makes the file's directory first, and "" is no directory.
    # Named by the delivery: the hook writes without truncating, so a name is never reused.
    return f"env/{service}-{delivery[:12]}.env"


def _dollars(text: str) -> str:
    return text.replace("$", "$$")


def _expand(text: str, env: Mapping[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), text)


def render(
    replica: str,
    key: str,
    template: ReplicaTemplate,
    *,
    generation: int,
    delivery: str,
    node_name: str,
    node_address: str,
    restart: RestartPolicy,
) -> ComposeReplica:
    """The compose config of `replica` (its key `key`) at `generation` on its server, for the
    delivery (run) `delivery`. Each delivery changes a label, so compose recreates every
    container of it (a liveness restart, a rollout's batch, a start after a failed run).
    Raises `UncarriableSecret` for a secret holding `${`."""
    services: dict[str, Json] = {}
    hidden: list[tuple[str, str]] = []
    for c in template.containers:
        name = service_name(c.name)
        services[name] = _service(
            c, replica, key, template.revision, (generation, delivery), node_name, node_address
        )
        svc = services[name]
        assert isinstance(svc, dict)
        svc["restart"] = _RESTART[restart]
        for var, value in c.secret_env:
            if "${" in value:
                raise UncarriableSecret(
                    f"the secret in env {var} of container {c.name} holds '${{', which the "
                    "node's compose env file would interpolate"
                )
            hidden.append((name, var))
        if c.secret_env:
            svc = services[name]
            assert isinstance(svc, dict)
            svc["env_file"] = [env_file_name(name, delivery)]
    return ComposeReplica(project_name(replica), services, tuple(hidden))


def _service(
    c: ContainerRun,
    replica: str,
    key: str,
    revision: str,
    run: tuple[int, str],
    node_name: str,
    node_address: str,
) -> dict[str, Json]:
    env = {
        "SHOAL_NODE_ADDRESS": node_address,
        "SHOAL_NODE_NAME": node_name,
        "SHOAL_REPLICA": replica,
        **dict(c.env),
    }
    service: dict[str, Json] = {
        "image": c.image,
        "net": "host",
        "labels": {
            REPLICA_LABEL: key,
            GENERATION_LABEL: str(run[0]),
            DELIVERY_LABEL: run[1],
            REVISION_LABEL: revision,
        },
        "environment": {k: _dollars(v) for k, v in env.items()},
    }
    if c.command:
        service["entrypoint"] = [_dollars(_expand(x, env)) for x in c.command]
    if c.args:
        service["command"] = [_dollars(_expand(x, env)) for x in c.args]
    if c.cpu_milli:
        service["cpu_quota"] = c.cpu_milli * 100  # of the default 100,000 µs period
    if c.memory_mb:
        service["mem_limit"] = f"{c.memory_mb}m"
    return service


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def secret_files(
    secret_env: Sequence[tuple[str, str]],
    value_of: Mapping[tuple[str, str], str],
    delivery: str,
) -> str:
    """The `env_files` input the hook reads (a Python literal, which JSON of text is): each
    service's env file with its secrets' values. Served to the node only, never stored."""
    by_service: dict[str, list[str]] = {}
    for service, var in secret_env:
        value = value_of.get((service, var), "")
        by_service.setdefault(service, []).append(f"{var}={_quoted(value)}\n")
    files = [
        {"file_name": env_file_name(s, delivery), "content": "".join(lines)}
        for s, lines in sorted(by_service.items())
    ]
    return json.dumps(files)


def digest_of(compose: ComposeReplica) -> str:
    """What a delivery ran, for comparison (the secrets' names, not their values)."""
    text = json.dumps([compose.config, compose.secret_env], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
