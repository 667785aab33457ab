"""From text to a validated `ClusterSpec` or `Inventory`, raising once with every problem.

The steps: parse (a syntax error stops here, alone); pick the format (a top-level `vcluster`
key means the Nova blueprint's document); read every element into drafts; run the checks
across elements; build the model only when nothing was found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from shoal.documents.collect import ProblemList
from shoal.documents.containers import check_containers
from shoal.documents.dependencies import check_dependencies
from shoal.documents.drafts import ClusterDraft, build
from shoal.documents.environment_native import ENVIRONMENT_PATH, read_environments, unwrap_request
from shoal.documents.files import read_bytes
from shoal.documents.inventory import read_inventory
from shoal.documents.membership import check_groupings
from shoal.documents.namespace import check_names
from shoal.documents.native import read_native
from shoal.documents.net_common import WorkloadPorts
from shoal.documents.networks import read_networking
from shoal.documents.outputs import OutputDraft, build_outputs, check_outputs, read_outputs
from shoal.documents.params_template import Prepared, prepare
from shoal.documents.port_conflicts import check_port_conflicts
from shoal.documents.software import SoftwareDraft, build_software, read_software
from shoal.documents.software_checks import check_software
from shoal.documents.syntax import DEFAULT_SOURCE, parse
from shoal.documents.tree import is_mapping, pairs_of
from shoal.documents.vcluster import is_vcluster, read_vcluster
from shoal.documents.workloads import (
    WorkloadsDraft,
    build_workloads,
    check_workloads,
    read_workloads,
    secrets_used,
)
from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.networks import NetworkSpec
from shoal.model.problems import InvalidDocument, Problem


def load_cluster(
    text: str | bytes,
    inventory: Inventory,
    *,
    source: str = DEFAULT_SOURCE,
    environments: Sequence[object] = (),
) -> ClusterSpec:
    """The cluster a native or vcluster document declares; InvalidDocument with every problem."""
    return cluster_from_tree(parse(text, source), inventory, environments)


def load_cluster_file(path: str | Path, inventory: Inventory) -> ClusterSpec:
    return load_cluster(read_bytes(path), inventory, source=str(path))


def _may_be_hot(data: object) -> bool:
    """A mapping with a key every Heat template or stack-create body has (`is_hot` decides)."""
    return is_mapping(data) and any(
        k in ("heat_template_version", "template") for k, _ in pairs_of(data)
    )


def cluster_from_tree(
    data: object, inventory: Inventory, environments: Sequence[object] = ()
) -> ClusterSpec:
    """The cluster of an already parsed document (mappings as `Pairs` or dicts).

    `environments` (parsed, merged in order) give a native document's parameter values and
    remap its roles (documents/environment_native.py).
    """
    request = unwrap_request(data)
    if request is not None:  # {document, environment}: the API's way to give environments
        document, given, is_list = request
        if not is_list:
            raise InvalidDocument(
                [Problem(ENVIRONMENT_PATH, "expected a list of environment documents")]
            )
        return _prefixed(lambda: cluster_from_tree(document, inventory, [*environments, *given]))
    if _may_be_hot(data):
        # Imported only for a document that may be Heat's: the HOT reader is a third of what
        # `shoal plan` of a native document would import (issue 37; benchmarks/cli.py).
        from shoal.documents.hot import hot_from_tree, is_hot

        if is_hot(data):  # a Heat template, or Heat's stack-create body (documents/hot/)
            return hot_from_tree(data, inventory)
    out = ProblemList()
    software: SoftwareDraft | None = None
    prepared: Prepared | None = None
    outputs: list[OutputDraft] = []
    workloads = WorkloadsDraft()
    networking = NetworkSpec()
    if is_vcluster(data):
        if environments:
            out.add(ENVIRONMENT_PATH, "environments apply to native documents only")
        draft = read_vcluster(data, inventory, out)
    else:
        env = read_environments(environments, out)
        prepared = prepare(data, env, out)
        draft = read_native(prepared.tree, inventory, out)
        software = read_software(prepared.software, "/software", prepared.params, out)
        outputs = read_outputs(prepared.outputs, "/outputs", prepared.params, out)
        workloads = read_workloads(prepared.workloads, "/workloads", prepared.params, out)
        networking = read_networking(
            prepared.tree,
            draft,
            out,
            {w.name: WorkloadPorts.of(w.containers) for w in workloads.workloads},
        )
        _drop_repeats(out, prepared.unresolved)
    if draft is not None:
        check_names(draft, out)
        check_dependencies(draft, out)
        check_groupings(draft, out)
        named = {w.name for w in workloads.workloads}
        if software is not None:
            check_software(software, draft, out, workloads=named, networking=networking)
            check_containers(software.configs, software.config_paths, out.add)
        check_outputs(outputs, draft, software, out, networking, workloads=named)
        if workloads.workloads:
            deployments = {d.name for d in software.deployments} if software else set()
            check_workloads(workloads, _member_labels(draft), deployments, out)
            check_port_conflicts(software, workloads, list(_member_labels(draft)), out)
        elif software is not None:
            check_port_conflicts(software, workloads, [], out)
    if prepared is not None and prepared.origins:
        out.items = [Problem(prepared.relocate(p.path), p.message) for p in out.items]
    out.raise_if_any()
    if draft is None:  # pragma: no cover - a reader returns None only with a problem
        raise InvalidDocument(out.items)
    spec = build(draft)
    if software is not None and (software.configs or software.deployments):
        spec = replace(spec, software=build_software(software))
    if outputs:
        spec = replace(spec, outputs=build_outputs(outputs))
    if workloads.workloads:
        spec = _with_workloads(spec, workloads, software)
    if not networking.empty:
        spec = replace(spec, networking=networking)
    return spec


def _member_labels(draft: ClusterDraft) -> dict[str, dict[str, str]]:
    """Node groups and instances a workload's node selector may name, with their labels."""
    members: dict[str, dict[str, str]] = {}
    for g in draft.groups:
        if g.name is not None:
            members[g.name] = dict(g.labels or {})
    for i in draft.instances:
        if i.name is not None:
            members[i.name] = {}
    return members


def _with_workloads(
    spec: ClusterSpec, draft: WorkloadsDraft, software: SoftwareDraft | None
) -> ClusterSpec:
    """The workloads, and the secrets their env uses kept with the software's (the stored
    document writes them once, as hidden parameters)."""
    built = build_workloads(draft)
    used = secrets_used(built)
    if used and software is not None:
        secrets = {**spec.software.secrets, **{k: software.secrets[k] for k in used}}
        generated = {k: v for k, v in software.generated.items() if k in secrets}
        spec = replace(spec, software=replace(spec.software, secrets=secrets, generated=generated))
    return replace(spec, workloads=built)


def _prefixed(load: Callable[[], ClusterSpec]) -> ClusterSpec:
    """Problems of a wrapped document point into the request: /document/..."""
    try:
        return load()
    except InvalidDocument as bad:
        raise InvalidDocument(
            [
                p
                if p.path.startswith(ENVIRONMENT_PATH)
                else Problem("/document" + p.path, p.message)
                for p in bad.problems
            ]
        ) from None


def _drop_repeats(out: ProblemList, unresolved: frozenset[str]) -> None:
    if unresolved:
        out.items = [p for p in out.items if p.path not in unresolved]


def load_inventory(text: str | bytes, *, source: str = DEFAULT_SOURCE) -> Inventory:
    """The inventory a document declares; InvalidDocument with every problem."""
    return inventory_from_tree(parse(text, source))


def load_inventory_file(path: str | Path) -> Inventory:
    return load_inventory(read_bytes(path), source=str(path))


def inventory_from_tree(data: object) -> Inventory:
    out = ProblemList()
    inventory = read_inventory(data, out)
    out.raise_if_any()
    if inventory is None:  # pragma: no cover - None comes only with a problem
        raise InvalidDocument(out.items)
    return inventory
