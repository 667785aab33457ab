"""The inventory format: a good file loads with the default catalog; each mistake is named."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster, load_inventory
from shoal.model import InvalidDocument, Problem
from shoal.model.catalogs import CLASSIC_FLAVORS, DEFAULT_IMAGES

GOOD = """\
zones: [az1, az2]
hosts:
  - {name: h1, zone: az1, vcpus: 16, ram_mb: 32768, disk_gb: 500, volume_gb: 1000,
     labels: {ssd: "true"}}
  - {name: h2, zone: az2, vcpus: 8, ram_mb: 16384, disk_gb: 250}
"""


def test_good_inventory_uses_default_catalog() -> None:
    inv = load_inventory(GOOD)
    assert [h.name for h in inv.hosts] == ["h1", "h2"]
    assert inv.hosts[0].labels == {"ssd": "true"}
    assert inv.hosts[1].volume_gb == 0
    assert inv.zones == ("az1", "az2")
    assert inv.flavors == CLASSIC_FLAVORS and inv.images == DEFAULT_IMAGES


def test_own_catalog_and_json() -> None:
    inv = load_inventory(
        '{"hosts": [{"name": "h", "zone": "z", "vcpus": 2, "ram_mb": 2048, "disk_gb": 10}],'
        ' "flavors": [{"id": 7, "name": "small", "vcpus": 1, "ram_mb": 512, "disk_gb": 1}],'
        ' "images": [{"name": "Ubuntu 24.04", "min_disk_gb": 5}]}'
    )
    assert inv.flavor("7") == inv.flavor("small") and inv.flavors[0].id == "7"
    assert inv.images[0].id == "Ubuntu 24.04"
    spec = load_cluster(
        "name: c\ninstances:\n  - {name: a, profile: {type: server, flavor: small, "
        "image: Ubuntu 24.04}}\n",
        inv,
    )
    assert spec.instances[0].profile.zone is None


HOST = "{name: h1, zone: az1, vcpus: 1, ram_mb: 1, disk_gb: 1}"

CASES: list[tuple[str, str, str, str]] = [
    ("no-hosts", "zones: [az1]\n", "/hosts", "'hosts' is missing"),
    ("empty-hosts", "hosts: []\n", "/hosts", "at least one host"),
    ("hosts-mapping", "hosts: {h1: {}}\n", "/hosts", "expected a list of hosts"),
    ("host-name-twice", f"hosts: [{HOST}, {HOST}]\n", "/hosts/1/name", "already used by the host"),
    (
        "negative-capacity",
        "hosts: [{name: h, zone: a, vcpus: -1, ram_mb: 1, disk_gb: 1}]\n",
        "/hosts/0/vcpus",
        "must be at least 0",
    ),
    (
        "capacity-text",
        "hosts: [{name: h, zone: a, vcpus: 1, ram_mb: 32GB, disk_gb: 1}]\n",
        "/hosts/0/ram_mb",
        "expected a whole number",
    ),
    (
        "missing-capacity",
        "hosts: [{name: h, zone: a, vcpus: 1, ram_mb: 1}]\n",
        "/hosts/0/disk_gb",
        "'disk_gb' is missing",
    ),
    (
        "zone-not-listed",
        f"zones: [az2]\nhosts: [{HOST}]\n",
        "/hosts/0/zone",
        "not one of the listed zones",
    ),
    ("zone-twice", f"zones: [az1, az1]\nhosts: [{HOST}]\n", "/zones/1", "listed twice"),
    (
        "unknown-host-field",
        "hosts: [{name: h, zone: a, vcpus: 1, ram_mb: 1, disk_gb: 1, ram: 4}]\n",
        "/hosts/0/ram",
        "unknown field 'ram'",
    ),
    (
        "label-not-text",
        "hosts: [{name: h, zone: a, vcpus: 1, ram_mb: 1, disk_gb: 1, labels: {ssd: true}}]\n",
        "/hosts/0/labels/ssd",
        "write it in quotes",
    ),
    (
        "flavor-id-twice",
        f"hosts: [{HOST}]\nflavors:\n"
        "  - {id: 1, name: a, vcpus: 1, ram_mb: 1, disk_gb: 1}\n"
        "  - {id: 1, name: b, vcpus: 1, ram_mb: 1, disk_gb: 1}\n",
        "/flavors/1/id",
        "flavor id '1' is already used",
    ),
    (
        "flavor-zero-vcpus",
        f"hosts: [{HOST}]\nflavors:\n  - {{id: 1, name: a, vcpus: 0, ram_mb: 1, disk_gb: 1}}\n",
        "/flavors/0/vcpus",
        "must be at least 1",
    ),
    ("empty-flavors", f"hosts: [{HOST}]\nflavors: []\n", "/flavors", "leave 'flavors' out"),
    (
        "image-name-missing",
        f"hosts: [{HOST}]\nimages: [{{id: abc}}]\n",
        "/images/0/name",
        "'name' is missing",
    ),
    ("top-level-list", "- " + HOST + "\n", "", "an inventory must be a mapping"),
]


@pytest.mark.parametrize(
    ("text", "path", "phrase"),
    [pytest.param(text, path, phrase, id=case) for case, text, path, phrase in CASES],
)
def test_inventory_mistakes(text: str, path: str, phrase: str) -> None:
    problems = problems_of(text)
    assert [p.path for p in problems] == [path], problems
    assert phrase in problems[0].message


def test_inventory_problems_all_at_once() -> None:
    text = (
        "zones: [az1]\nhosts:\n"
        "  - {name: h1, zone: az9, vcpus: 1, ram_mb: 1, disk_gb: 1}\n"
        "  - {name: h2, zone: az1, vcpus: x, ram_mb: 1, disk_gb: 1}\n"
        "flavors: [{id: 1, name: a, vcpus: 1, ram_mb: 1}]\n"
        "extra: 1\n"
    )
    assert [p.path for p in problems_of(text)] == [
        "/hosts/0/zone",
        "/hosts/1/vcpus",
        "/flavors/0/disk_gb",
        "/extra",
    ]


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        load_inventory(text)
    return caught.value.problems
