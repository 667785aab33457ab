"""Running corpora of real Heat templates through the reader and the placement solver.

Shared by the corpus test and `benchmarks/hot_corpus.py`. Each template is read alone (no
environment), with a value made up for every parameter that has no default, on a synthetic
inventory that has the flavors, images and zones the template names. Downloaded corpora
(magnum 20.0.0's wheel, tripleo-heat-templates 18.0.0's sdist) are cached under
~/.cache/shoal-tests and fetched with pip when missing.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from shoal.model.catalogs import synthetic_inventory
from shoal.model.inventory import Flavor, Host, Image, Inventory
from shoal.placement import solve
from shoal.spec.hot import read_hot_files

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
        if (
            "heat_template_version" in text
            and text.lstrip().startswith(("heat_template_version", "#", "{%", "description", "---"))
            or "\nheat_template_version" in text
        ):
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
    text = "x" + "".join(c for c in lname if c.isalnum())[:20]
    for c in decl.get("constraints") or []:
        length = c.get("length") if isinstance(c, dict) else None
        if isinstance(length, dict):
            text = (text * 8)[: max(length.get("min", 1), min(len(text), length.get("max", 64)))]
    return text


def _parameters(path: Path) -> dict[str, object]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
    env_file = path.parent / "_corpus_env.yaml"
    params = _parameters(path)
    env = {"parameters": params} if params else None
    inv = synthetic_inventory(12, 2)
    envs = [env_file] if False else []
    for attempt in range(2):
        result = (
            read_hot_files(path, envs, inv, software=software, name="corpus")
            if env is None
            else _with_env(path, env, inv, software)
        )
        w = result.wants
        if attempt == 0 and (w.flavors or w.images or w.zones):
            inv = inventory_for(w.flavors, w.images, w.zones)
            continue
        break
    parsed = (
        not result.problems
        or all(any(u.path == p.path for u in result.unsupported) for p in result.problems)
        or bool(result.unsupported)
        and len(result.problems) == len(result.unsupported)
    )
    if result.spec is None:
        return Outcome(rel, parsed, False, result.first_reason)
    placed = solve(result.spec, inv)
    if not placed.feasible:
        return Outcome(rel, True, False, "infeasible on the synthetic inventory")
    return Outcome(rel, True, True)


def _with_env(path: Path, env: dict[str, object], inv: Inventory, software: str):  # type: ignore[no-untyped-def]
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(env, f)
        name = f.name
    try:
        return read_hot_files(path, [name], inv, software=software, name="corpus")
    finally:
        Path(name).unlink()


def run_corpus(corpus: str, root: Path, software: str = "refuse") -> Summary:
    summary = Summary(corpus)
    start = time.perf_counter()
    for path in template_files(root):
        summary.outcomes.append(run_one(path, root, software))
    summary.seconds = time.perf_counter() - start
    return summary
