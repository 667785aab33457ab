"""Shoal's reading of a case, in the shape Heat's side prints, and the comparison of the two.

A reading is `{"accepted", "resources": {path: {"type", "properties"}}, "outputs"}`: the
resources that exist after conditions (a nested template's under `RES/`), the properties
Shoal maps, and the outputs that need no run time. Where either side only knows a value at
run time (Shoal's symbolic values, Heat's `get_attr`/`get_resource` before a create) the value
is not compared. Each disagreement is a key `CASE: ASPECT` (`accepted`, `resources`,
`type RES`, `property RES.KEY`, `output NAME`) with both sides' values.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from shoal.documents.hot import HotResult, read_hot
from shoal.documents.hot.environment import is_file_ref
from shoal.documents.hot.files import Files
from shoal.documents.hot.load import client_text
from shoal.documents.hot.shapes import Shape
from shoal.documents.hot.values import Attr, Ref, Unknown
from shoal.documents.syntax import parse
from tests.documents.hot.corpus import inventory_for

RUN_TIME = ("get_attr", "get_resource", "resource_facade", "Fn::GetAtt", "Ref")
MAPPED = {
    "OS::Nova::Server": ("name", "flavor", "image", "metadata", "availability_zone"),
    "OS::Cinder::Volume": ("size", "volume_type", "availability_zone"),
    "OS::Nova::ServerGroup": ("policies",),
    "OS::Heat::ResourceGroup": ("count",),
    "OS::Heat::SoftwareDeployment": ("input_values", "actions"),
    "OS::Heat::StructuredDeployment": ("input_values", "actions"),
    "OS::Heat::SoftwareDeploymentGroup": ("input_values", "actions"),
    "OS::Heat::StructuredDeploymentGroup": ("input_values", "actions"),
    "OS::Heat::SoftwareConfig": ("group", "config"),
    "OS::Heat::Value": ("value",),
}
SYMBOLIC = "<run time>"
DEFAULTS: dict[str, object] = {"metadata": {}, "actions": ["CREATE", "UPDATE"]}


_TREES: dict[tuple[str, str], object] = {}
"""Nested files parsed once for the whole run (TripleO's are read by many templates)."""


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    template: Path
    environments: tuple[Path, ...] = ()
    parameters: dict[str, object] | None = None
    defaults: dict[str, object] | None = None
    stack_name: str = "oracle"

    def heat_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "template": str(self.template),
            "environments": [str(e) for e in self.environments],
            "parameters": self.parameters or {},
            "parameter_defaults": self.defaults or {},
            "stack_name": self.stack_name,
        }


def _symbolic(value: object) -> bool:
    if isinstance(value, Ref | Attr | Unknown):
        return True
    if isinstance(value, dict):
        return any(_symbolic(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_symbolic(v) for v in value)
    return False


_NUMBERS = ("count", "size")
_TEXTS = ("flavor", "image", "name", "availability_zone", "volume_type")


def _typed(key: str, value: object) -> object:
    """A property as its schema converts it (Shoal's handlers convert when they map it)."""
    if key in _NUMBERS and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if key in _TEXTS and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _plain(value: object) -> object:
    if _symbolic(value):
        return SYMBOLIC
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def _kind(kind: str) -> str:
    return "nested" if is_file_ref(kind) or kind.endswith((".yaml", ".yml", ".template")) else kind


def _walk(shape: Shape, prefix: str, out: dict[str, object]) -> None:
    for name, props in shape.props.items():
        kind = shape.kinds.get(name, "?")
        entry: dict[str, object] = {"type": _kind(kind)}
        keys = MAPPED.get(kind, ())
        if keys:
            entry["properties"] = {
                k: _typed(k, _plain(props.get(k, DEFAULTS.get(k)))) for k in keys
            }
        out[prefix + name] = entry
    for server in shape.servers:
        # What Shoal made of it, not only what it evaluated: the node's profile.
        entry = out.get(prefix + server.name)
        p = server.profile
        if isinstance(entry, dict) and p is not None and isinstance(entry.get("properties"), dict):
            props = entry["properties"]
            # A flavor or image named by its id is the same one as by its name.
            if props.get("flavor") not in (p.flavor.id, p.flavor.name):
                props["flavor"] = p.flavor.name
            if props.get("image") not in (p.image.id, p.image.name):
                props["image"] = p.image.name
            props["metadata"] = dict(p.metadata)
            if p.zone is not None:
                props["availability_zone"] = p.zone
    for n in shape.nested:
        _walk(n.shape, f"{prefix}{n.name}/", out)


def _run_time(value: object) -> bool:
    if isinstance(value, dict):
        return any(k in RUN_TIME or _run_time(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_run_time(v) for v in value)
    return value == "OS::stack_id"


def _read(case: Case, inv: object) -> HotResult:
    tree = parse(client_text(case.template.read_bytes()), str(case.template))
    envs: list[tuple[object, str, str]] = []
    for i, e in enumerate(case.environments):
        envs.append((parse(e.read_bytes(), str(e)), f"/environments/{i}", str(e)))
    extra = {"parameters": case.parameters or {}, "parameter_defaults": case.defaults or {}}
    envs.append((extra, f"/environments/{len(envs)}", str(case.template)))
    files = Files(disk=True, trees=_TREES)
    files.root = str(case.template.parent)
    return read_hot(
        tree,
        envs,
        files,
        inv,  # type: ignore[arg-type]
        name=case.stack_name,
        scope=str(case.template),
    )


def shoal_reading(case: Case) -> dict[str, object]:
    result = _read(case, inventory_for(set(), set(), set()))
    w = result.wants
    result = _read(case, inventory_for(w.flavors, w.images, w.zones))
    cannot = {(u.path, u.message) for u in result.unsupported}
    wrong = [p for p in result.problems if (p.path, p.message) not in cannot]
    out: dict[str, object] = {"accepted": not wrong}
    if wrong:
        out["error"] = f"{wrong[0].path}: {wrong[0].message}"[:500]
        return out
    if result.unsupported:
        out["unsupported"] = sorted({u.reason for u in result.unsupported})
    found: dict[str, object] = {}
    if result.shape is not None:
        _walk(result.shape, "", found)
    out["resources"] = found
    raw = yaml.safe_load(case.template.read_text()) or {}
    defs = raw.get("outputs") if isinstance(raw, dict) else None
    outputs: dict[str, object] = {}
    evaluated = result.shape.evaluated if result.shape is not None else {}
    for name, d in (defs or {}).items():
        if isinstance(d, dict) and _run_time(d.get("value")):
            continue
        outputs[str(name)] = _plain(evaluated.get(str(name)))
    out["outputs"] = outputs
    return out


def _same(a: object, b: object) -> bool:
    if a == SYMBOLIC or b == SYMBOLIC:
        return True
    if isinstance(a, str) and a.startswith("<error"):
        return True
    return bool(a == b)


def differences(case_id: str, heat: dict[str, object], shoal: dict[str, object]) -> dict[str, str]:
    """`CASE: ASPECT` -> "Heat: ...; Shoal: ..." for each point the two readings disagree on."""
    out: dict[str, str] = {}

    def diff(aspect: str, h: object, s: object) -> None:
        out[f"{case_id}: {aspect}"] = f"Heat: {_short(h)}; Shoal: {_short(s)}"

    if heat.get("accepted") != shoal.get("accepted"):
        diff("accepted", heat.get("error", "accepted"), shoal.get("error", "accepted"))
        return out
    if not heat.get("accepted"):
        return out
    hres = _top_and_nested(heat.get("resources"))
    sres = _top_and_nested(shoal.get("resources"))
    if set(hres) != set(sres) and not shoal.get("unsupported"):
        diff("resources", sorted(set(hres) - set(sres)), sorted(set(sres) - set(hres)))
    for name in sorted(set(hres) & set(sres)):
        h, s = hres[name], sres[name]
        if h.get("type") != s.get("type"):
            diff(f"type {name}", h.get("type"), s.get("type"))
            continue
        hp, sp = h.get("properties") or {}, s.get("properties") or {}
        for key in sorted(set(hp) & set(sp)):
            if not _same(hp[key], sp[key]):
                diff(f"property {name}.{key}", hp[key], sp[key])
    houts = heat.get("outputs") or {}
    souts = shoal.get("outputs") or {}
    assert isinstance(houts, dict) and isinstance(souts, dict)
    for name in sorted(set(houts) & set(souts)):
        where = _first_difference(houts[name], souts[name], "")
        if where is not None:
            at, h, s = where
            diff(f"output {name}{at}", h, s)
    return out


def _first_difference(h: object, s: object, at: str) -> tuple[str, object, object] | None:
    """Where two values first differ (a JSON pointer suffix), symbolic parts matching all."""
    if isinstance(h, dict) and isinstance(s, dict) and set(h) == set(s):
        for k in sorted(h):
            found = _first_difference(h[k], s[k], f"{at}/{k}")
            if found is not None:
                return found
        return None
    if isinstance(h, list) and isinstance(s, list) and len(h) == len(s):
        for i, (a, b) in enumerate(zip(h, s, strict=True)):
            found = _first_difference(a, b, f"{at}/{i}")
            if found is not None:
                return found
        return None
    return None if _same(h, s) else (at, h, s)


def _top_and_nested(value: object) -> dict[str, dict[str, object]]:
    """Resources, a group's generated members (`grp/0/...`) left out: Shoal keeps one member."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, dict[str, object]] = {}
    for name, entry in value.items():
        parts = str(name).split("/")
        if any(p.isdigit() for p in parts[1:]):
            continue
        t = entry.get("type", "") if isinstance(entry, dict) else ""
        out[str(name)] = {**entry, "type": _kind(str(t))} if isinstance(entry, dict) else {}
    return out


def _short(value: object) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:200] + "…"


@dataclass(frozen=True, slots=True)
class Deliberate:
    case: str
    aspect: str
    reason: str

    def covers(self, key: str) -> bool:
        case, _, aspect = key.partition(": ")
        return fnmatch.fnmatchcase(case, self.case) and fnmatch.fnmatchcase(aspect, self.aspect)


_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|(.+)\|\s*$")


def deliberate(doc: Path) -> list[Deliberate]:
    """The rows of docs/hot.md's table of deliberate differences from Heat."""
    text = doc.read_text(encoding="utf-8")
    start = text.index("<!-- heat-oracle-differences -->")
    end = text.index("<!-- /heat-oracle-differences -->")
    rows = []
    for line in text[start:end].splitlines():
        m = _ROW.match(line)
        if m:
            rows.append(Deliberate(m.group(1), m.group(2), m.group(3).strip()))
    return rows
