"""Entry points: a HOT template with its environments and files, to a Shoal cluster.

`read_hot` never raises for bad input: it returns what it found (the cluster if there was no
problem, the problems, the notices, the unsupported items, the outputs, the catalog names the
template asks for). `load_hot` raises `InvalidDocument` with every problem. The API's body
form is Heat's own stack-create body: `template`, `environment` (or Shoal's `environments`, a
list merged in order), `files`, `parameters`, and `stack_name` (or `name`) for the cluster.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from shoal.documents.collect import child
from shoal.documents.dependencies import check_dependencies
from shoal.documents.drafts import build
from shoal.documents.files import read_bytes
from shoal.documents.hot.assemble import assemble
from shoal.documents.hot.context import Context, Wants
from shoal.documents.hot.deployments import is_deployment, map_software
from shoal.documents.hot.environment import Environment, is_file_ref, read_environment
from shoal.documents.hot.files import Files, files_problems
from shoal.documents.hot.functions import MAX_TOTAL_RESOURCES, plain
from shoal.documents.hot.netmap import map_networking
from shoal.documents.hot.outputs import map_outputs
from shoal.documents.hot.report import Report, Unsupported
from shoal.documents.hot.shapes import Shape, SoftwareShape
from shoal.documents.hot.template import Stack
from shoal.documents.hot.workloads import map_workloads, workload_ports
from shoal.documents.membership import check_groupings
from shoal.documents.names import is_name
from shoal.documents.namespace import check_names
from shoal.documents.syntax import parse
from shoal.documents.tree import describe, is_mapping, pairs_of
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument, Problem, pointer

DEFAULT_NAME = "stack"
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+\b")
_BODY_KEYS = {
    "template",
    "environment",
    "environments",
    "files",
    "parameters",
    "stack_name",
    "name",
}


@dataclass(slots=True)
class HotResult:
    spec: ClusterSpec | None
    problems: list[Problem]
    notices: list[Problem]
    unsupported: list[Unsupported]
    outputs: dict[str, object] = field(default_factory=dict)
    wants: Wants = field(default_factory=Wants)
    files_read: list[str] = field(default_factory=list)
    skipped: list[Unsupported] = field(default_factory=list)
    """Outputs not served from the cluster (each with a notice), by reason."""
    shape: Shape | None = None
    """What the top template read (resources, their evaluated properties, nested shapes)."""

    @property
    def first_reason(self) -> str | None:
        """Why the template does not plan, in a few words (unsupported first)."""
        if self.unsupported:
            return self.unsupported[0].reason
        if self.problems:
            return "invalid: " + _QUOTED.sub("…", self.problems[0].message.split(";")[0])[:70]
        return None


def is_hot(data: object) -> bool:
    """A bare HOT template, or Heat's stack-create body with a `template`."""
    if not is_mapping(data):
        return False
    keys = [k for k, _ in pairs_of(data)]
    if "heat_template_version" in keys:
        return True
    return "template" in keys and all(k in _BODY_KEYS for k in keys)


def hot_from_tree(data: object, inventory: Inventory) -> ClusterSpec:
    """The cluster of a parsed HOT template or stack-create body; InvalidDocument otherwise."""
    result = read_body(data, inventory)
    if result.spec is None:
        raise InvalidDocument(result.problems or [Problem("", "the template makes no cluster")])
    return result.spec


def _too_many_resources(data: object) -> list[Problem]:
    """A template (or a body's template) with more resources than all templates together may
    hold, refused before the tree is copied and read (5,000 of them took seconds)."""
    lookup = dict(pairs_of(data)) if is_mapping(data) else {}
    template, where = lookup, "/resources"
    if "heat_template_version" not in lookup and is_mapping(lookup.get("template")):
        template, where = dict(pairs_of(lookup["template"])), "/template/resources"
    resources = template.get("resources")
    n = len(pairs_of(resources)) if is_mapping(resources) else 0
    if n <= MAX_TOTAL_RESOURCES:
        return []
    return [
        Problem(
            where,
            f"{n} resources; a template and its nested templates hold at most "
            f"{MAX_TOTAL_RESOURCES} resources in all (as Heat's max_resources_per_stack)",
        )
    ]


def read_body(data: object, inventory: Inventory) -> HotResult:
    early = _too_many_resources(data)
    if early:
        return _failed(early)
    body = plain(data)
    if isinstance(body, dict) and "heat_template_version" in body:
        return read_hot(body, [], Files(), inventory, template_path="")
    assert isinstance(body, dict)
    report = Report()
    template = body.get("template")
    if isinstance(template, str):
        try:
            template = plain(parse(template, "template.yaml"))
        except InvalidDocument as bad:
            return _failed([Problem("/template", p.message) for p in bad.problems])
    envs: list[tuple[object, str]] = []
    raw_envs = body.get("environments")
    if raw_envs is not None and not isinstance(raw_envs, list):
        report.problem("/environments", "'environments' is a list of environments")
        raw_envs = []
    if body.get("environment") is not None:
        envs.append((body["environment"], "/environment"))
    envs += [(e, child("/environments", i)) for i, e in enumerate(raw_envs or [])]
    files = body.get("files") or {}
    if not isinstance(files, dict):
        return _failed([Problem("/files", "'files' maps file names to their text")])
    too_many = files_problems({str(k): v if isinstance(v, str) else "" for k, v in files.items()})
    if too_many:
        return _failed(too_many)
    if not all(isinstance(v, str) for v in files.values()):
        return _failed([Problem("/files", "'files' maps file names to their text")])
    params = body.get("parameters")
    if params is not None:
        envs.append(({"parameters": params}, ""))
    name = body.get("stack_name", body.get("name"))
    parsed: list[tuple[object, str]] = []
    for env, where in envs:
        if isinstance(env, str):
            try:
                env = plain(parse(env, "environment.yaml"))
            except InvalidDocument as bad:
                return _failed([Problem(where, p.message) for p in bad.problems])
        parsed.append((env, where))
    return read_hot(
        template,
        [(e, w, "") for e, w in parsed],
        Files({str(k): str(v) for k, v in files.items()}),
        inventory,
        name=name if isinstance(name, str) else None,
        template_path="/template",
    )


def _failed(problems: list[Problem]) -> HotResult:
    return HotResult(None, problems, [], [])


def read_hot(
    template: object,
    environments: list[tuple[object, str, str]],
    files: Files,
    inventory: Inventory,
    *,
    name: str | None = None,
    template_path: str = "",
    scope: str = "template.yaml",
    software: str = "refuse",
) -> HotResult:
    """Read a template; `environments` are (parsed env, pointer, file it came from) in order.

    `software="ignore"` leaves software deployments out with a notice instead of mapping them
    (the corpus run uses it to count what would plan without them).
    """
    report = Report()
    env = Environment()
    for data, where, source in environments:
        read_environment(plain(data), where, source or scope, env, report)
    cluster = name or DEFAULT_NAME
    ctx = Context(env, files, inventory, report, stack_name=cluster)
    stack = Stack(
        ctx,
        template,
        scope=scope,
        path=template_path,
        given={},
        given_path=lambda n: "",
        top=True,
    )
    shape = stack.read()
    if not is_name(cluster):
        report.problem("/stack_name", f"{describe(cluster)} is not a valid cluster name")
    draft, placed = assemble(shape, cluster, report)
    # First: deployments' inputs and outputs may take a port's or balancer's address.
    networking = map_networking(
        shape,
        placed,
        draft,
        report,
        {s.name: (stack.properties_of(s.name) or {}).get("networks") for s in shape.servers},
        workload_ports(shape),
    )
    mapped = None
    if software == "ignore":
        _ignored(shape, report)
    else:
        mapped = map_software(shape, placed, draft, report, networking)
    workloads = map_workloads(shape, draft, mapped, report)
    outputs = map_outputs(shape, placed, draft, mapped, report, networking)
    spec = None
    if not report.out.items:
        check_names(draft, report.out)
        check_dependencies(draft, report.out)
        check_groupings(draft, report.out)
    if not report.out.items:
        spec = build(draft)
        if mapped is not None:
            spec = replace(spec, software=mapped)
        if outputs:
            spec = replace(spec, outputs=outputs)
        if workloads:
            spec = replace(spec, workloads=workloads)
        if networking is not None and not networking.empty:
            spec = replace(spec, networking=networking)
    return HotResult(
        spec,
        list(report.out.items),
        list(report.notices),
        list(report.unsupported),
        shape.outputs,
        ctx.wants,
        list(files.read_names),
        list(report.skipped),
        shape,
    )


def _ignored(shape: Shape, report: Report) -> None:
    found: list[SoftwareShape] = []

    def walk(s: Shape) -> None:
        found.extend(x for x in s.software if is_deployment(x.kind))
        for n in s.nested:
            walk(n.shape)
        for g in s.groups:
            walk(g.member)

    walk(shape)
    if found:
        report.notice(
            found[0].path,
            f"{len(found)} software deployment(s) were read and checked and left out: "
            "Shoal creates the servers without running them",
        )


def load_hot(
    template: str | bytes | object,
    environments: list[str | bytes | object] | None = None,
    files: dict[str, str] | None = None,
    inventory: Inventory | None = None,
    *,
    name: str | None = None,
) -> ClusterSpec:
    """The cluster of a template (text or parsed) and its environments; InvalidDocument."""
    tree = parse(template, "template.yaml") if isinstance(template, str | bytes) else template
    envs = [
        (
            parse(e, "environment.yaml") if isinstance(e, str | bytes) else e,
            pointer("environments", i),
            "",
        )
        for i, e in enumerate(environments or [])
    ]
    result = read_hot(tree, envs, Files(files), inventory or default_inventory(), name=name)
    if result.spec is None:
        raise InvalidDocument(result.problems)
    return result.spec


def read_hot_files(
    template: str | Path,
    environments: list[str | Path],
    inventory: Inventory,
    *,
    name: str | None = None,
    software: str = "refuse",
) -> HotResult:
    """Read a template file and environment files from disk, nested files beside them."""
    path = Path(template).resolve()
    tree = parse(client_text(read_bytes(path)), str(path))
    files = Files(disk=True)
    files.root = str(path.parent)
    envs = []
    for i, e in enumerate(environments):
        ep = Path(e).resolve()
        envs.append((parse(read_bytes(ep), str(ep)), pointer("environments", i), str(ep)))
    return read_hot(
        tree,
        envs,
        files,
        inventory,
        name=name or default_name(path),
        scope=str(path),
        software=software,
    )


def client_text(data: bytes) -> bytes:
    """A top template's text as the Heat client parses it: stripped first (heatclient's
    template_format.parse), so a last block scalar has no final newline."""
    return data.strip()


def default_name(path: Path) -> str:
    """A cluster name from a template file's name: `wordpress.yaml` -> `wordpress`."""
    stem = "".join(c if c.isalnum() or c in "_.-" else "-" for c in path.stem).strip("-._")
    return stem[:63] or DEFAULT_NAME


def bundle(
    template: str | Path,
    environments: list[str | Path],
    inventory: Inventory,
    name: str | None = None,
) -> bytes:
    """The JSON stack-create body for a template and environments on disk, files included.

    Files are keyed relative to the template's directory and registry entries rewritten to
    those keys, as the Heat client does, so the server resolves them without a disk.
    """
    tpath = Path(template).resolve()
    base = tpath.parent
    result = read_hot_files(tpath, environments, inventory, name=name)
    files: dict[str, str] = {}
    for key in result.files_read:
        files[os.path.relpath(key, base)] = read_bytes(key).decode("utf-8")
    envs = []
    for e in environments:
        ep = Path(e).resolve()
        data = plain(parse(read_bytes(ep), str(ep)))
        if isinstance(data, dict) and isinstance(data.get("resource_registry"), dict):
            data["resource_registry"] = _rebase(data["resource_registry"], ep.parent, base)
        envs.append(data)
    body = {
        "stack_name": name or default_name(tpath),
        "template": plain(parse(client_text(read_bytes(tpath)), str(tpath))),
        "environments": envs,
        "files": files,
    }
    return json.dumps(body, default=str).encode()


def _rebase(registry: dict[object, object], env_dir: Path, base: Path) -> dict[object, object]:
    out: dict[object, object] = {}
    for k, v in registry.items():
        if isinstance(v, dict):
            out[k] = _rebase(v, env_dir, base)
        elif isinstance(v, str) and is_file_ref(v) and not v.startswith(("http:", "https:")):
            target = v.removeprefix("file://")
            out[k] = os.path.relpath(os.path.normpath(env_dir / target), base)
        else:
            out[k] = v
    return out
