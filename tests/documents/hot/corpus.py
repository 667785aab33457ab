"""Running corpora of real Heat templates through the reader and the placement solver.

Shared by the corpus test and `benchmarks/hot_corpus.py`. Each template is read alone (no
environment), with a value made up for every parameter that has no default, on a synthetic
inventory that has the flavors, images and zones the template names. Downloaded corpora
(magnum 20.0.0's wheel, tripleo-heat-templates 18.0.0's sdist) are cached under
~/.cache/shoal-tests and fetched with pip when missing.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from shoal.documents.hot import HotResult, read_hot
from shoal.documents.hot.files import Files
from shoal.documents.syntax import parse
from shoal.model import InvalidDocument
from shoal.model.catalogs import synthetic_inventory
from shoal.model.inventory import Flavor, Host, Image, Inventory
from shoal.placement import solve

DATA = Path(__file__).resolve().parents[2] / "data" / "hot"
HEAT_TEMPLATES = DATA / "heat-templates" / "hot"
CACHE = Path.home() / ".cache" / "shoal-tests"
DOWNLOADS = {
    "magnum": ("magnum==20.0.0", "magnum-20.0.0-py3-none-any.whl", "--only-binary"),
    "tripleo": (
        "tripleo-heat-templates==18.0.0",
        "tripleo-heat-templates-18.0.0.tar.gz",
        "--no-binary",
    ),
}


@dataclass(slots=True)
class Outcome:
    path: str
    parsed: bool
    planned: bool
    reason: str | None = None
    nodes: int = 0
    deployments: int = 0
    """Software deployments of the planned cluster (mapped from Heat's)."""
    outputs: int = 0
    """Outputs of the planned cluster (served from it)."""
    skipped: list[str] = field(default_factory=list)
    """Why each of its other outputs is not served."""


@dataclass(slots=True)
class Summary:
    corpus: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> dict[str, object]:
        reasons = Counter(o.reason or "?" for o in self.outcomes if not o.planned)
        return {
            "corpus": self.corpus,
            "templates": len(self.outcomes),
            "parsed": sum(o.parsed for o in self.outcomes),
            "planned": sum(o.planned for o in self.outcomes),
            "planned_with_nodes": sum(o.planned and o.nodes > 0 for o in self.outcomes),
            "planned_with_deployments": sum(o.planned and o.deployments > 0 for o in self.outcomes),
            "outputs_served": sum(o.outputs for o in self.outcomes if o.planned),
            "outputs_not_served": dict(
                Counter(r for o in self.outcomes if o.planned for r in o.skipped).most_common()
            ),
            "seconds": round(self.seconds, 2),
            "unsupported": dict(reasons.most_common()),
        }


def fetch(corpus: str) -> Path:
    """The corpus's extracted directory, downloading it with pip into the cache if needed."""
    spec, filename, binary = DOWNLOADS[corpus]
    target = CACHE / corpus
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / filename
    if not archive.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                binary,
                ":all:",
                spec,
                "-d",
                str(CACHE),
            ],
            check=True,
            capture_output=True,
        )
    tmp = CACHE / f"{corpus}.partial"
    if filename.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, filter="data")
    tmp.rename(target)
    return target


def template_files(root: Path) -> list[Path]:
    """The HOT templates under `root` (files with heat_template_version), j2 sources included."""
    out = []
    for path in sorted(root.rglob("*.yaml")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if re.search(r"(?m)^heat_template_version\s*:", text):
            out.append(path)
    return out


def _made_up(name: str, decl: object) -> object:
    """A value for a parameter without a default, shaped by its type and constraints."""
    if not isinstance(decl, dict):
        return "x"
    kind = decl.get("type", "string")
    for c in decl.get("constraints") or []:
        if (
            isinstance(c, dict)
            and isinstance(c.get("allowed_values"), list)
            and c["allowed_values"]
        ):
            value = c["allowed_values"][0]
            return [value] if kind == "comma_delimited_list" else value
        if isinstance(c, dict) and isinstance(c.get("range"), dict) and kind == "number":
            return c["range"].get("min", 1)
    lname = name.lower()
    if kind == "number":
        return 0 if "index" in lname else 1
    if kind == "boolean":
        return False
    if kind == "json":
        return {}
    if kind == "comma_delimited_list":
        return ["1"]
    if "flavor" in lname or "instance_type" in lname:
        return "m1.medium"
    if "image" in lname:
        return "cirros"
    if "zone" in lname or lname.endswith("_az"):
        return "az1"
    if "cidr" in lname:
        return "10.0.0.0/24"
    if "gateway" in lname:  # a subnet's gateway, inside the made-up cidr above
        return "10.0.0.1"
    for text in ("x" + "".join(c for c in lname if c.isalnum())[:20], "abcd1234", "Abcd1234", "a"):
        if _fits(text, decl.get("constraints") or []):
            return text
    return "x"


def _fits(text: str, constraints: list[object]) -> bool:
    for c in constraints:
        if not isinstance(c, dict):
            continue
        length = c.get("length")
        if isinstance(length, dict) and not length.get("min", 0) <= len(text) <= length.get(
            "max", 10**6
        ):
            return False
        pattern = c.get("allowed_pattern")
        if isinstance(pattern, str):
            m = re.match(pattern, text)
            if m is None or m.end() != len(text):
                return False
    return True


_TREES: dict[tuple[str, str], object] = {}
"""Nested files parsed once for a whole corpus run (they are read by many templates)."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=4096)
def _parameters(path: Path) -> dict[str, object]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return {}
    params = data.get("parameters") if isinstance(data, dict) else None
    if not isinstance(params, dict):
        return {}
    return {
        str(k): _made_up(str(k), v)
        for k, v in params.items()
        if not (isinstance(v, dict) and v.get("default") is not None)
    }


def inventory_for(flavors: set[str], images: set[str], zones: set[str]) -> Inventory:
    base = synthetic_inventory(12, 2)
    extra_flavors = tuple(
        Flavor(f"f-{i}", name, vcpus=2, ram_mb=4096, disk_gb=40)
        for i, name in enumerate(sorted(flavors))
        if base.flavor(name) is None
    )
    extra_images = tuple(
        Image(f"i-{i}", name) for i, name in enumerate(sorted(images)) if base.image(name) is None
    )
    hosts = list(base.hosts)
    for zone in sorted(zones - set(base.zones)):
        hosts += [Host(f"{zone}-h{i}", zone, 64, 262144, 4000, 8000) for i in range(6)]
    return Inventory(tuple(hosts), base.flavors + extra_flavors, base.images + extra_images)


def run_one(path: Path, root: Path, software: str = "refuse") -> Outcome:
    rel = str(path.relative_to(root))
    if ".j2." in path.name:
        return Outcome(rel, False, False, "jinja2 source (rendered by tripleo tools, not Heat)")
    try:
        tree = parse(path.read_bytes(), str(path))
    except InvalidDocument as bad:
        return Outcome(rel, False, False, "not YAML: " + bad.problems[0].message[:40])
    inv = synthetic_inventory(12, 2)
    defaults: dict[str, object] = {}
    result = _read(tree, path, _parameters(path), defaults, inv, software)
    w = result.wants
    nested = {k: v for f in result.files_read for k, v in _parameters(Path(f)).items()}
    if w.flavors or w.images or w.zones or nested:
        # Again, as a user would: an inventory with what it names, values for nested templates.
        inv = inventory_for(w.flavors, w.images, w.zones)
        result = _read(tree, path, _parameters(path), nested, inv, software)
    parsed = len(result.problems) == len(result.unsupported)  # nothing wrong but those
    if result.spec is None:
        return Outcome(rel, parsed, False, result.first_reason)
    placed = solve(result.spec, inv)
    if not placed.feasible:
        return Outcome(rel, True, False, "infeasible on the synthetic inventory")
    deployments = len(result.spec.software.deployments)
    return Outcome(
        rel,
        True,
        True,
        nodes=len(placed.assignments),
        deployments=deployments,
        outputs=len(result.spec.outputs),
        skipped=[s.reason for s in result.skipped],
    )


def _read(
    tree: object,
    path: Path,
    params: dict[str, object],
    defaults: dict[str, object],
    inv: Inventory,
    software: str,
) -> HotResult:
    env = {"parameters": params, "parameter_defaults": defaults}
    return read_hot(
        tree,
        [(env, "/environments/0", str(path))],
        Files(disk=True, trees=_TREES),
        inv,
        name="corpus",
        scope=str(path),
        software=software,
    )


def run_corpus(corpus: str, root: Path, software: str = "refuse") -> Summary:
    summary = Summary(corpus)
    start = time.perf_counter()
    for path in template_files(root):
        summary.outcomes.append(run_one(path, root, software))
    summary.seconds = time.perf_counter() - start
    return summary
