"""File loaders: an unreadable path is a problem like any other, never an OSError."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.documents import load_cluster_file, load_inventory_file
from shoal.model import InvalidDocument, Inventory


def test_missing_file(tmp_path: Path, inventory: Inventory) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster_file(tmp_path / "nope.yaml", inventory)
    (problem,) = caught.value.problems
    assert problem.path == "" and "no such file" in problem.message
    assert "nope.yaml" in problem.message


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_inventory_file(tmp_path)
    assert "is a directory" in caught.value.problems[0].message


def test_inventory_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("hosts:\n  - {name: h, zone: z, vcpus: 1, ram_mb: 1, disk_gb: 1}\n")
    assert load_inventory_file(path).zones == ("z",)


def test_syntax_error_names_the_file(tmp_path: Path, inventory: Inventory) -> None:
    path = tmp_path / "shop.json"
    path.write_text('{"name": x}')
    with pytest.raises(InvalidDocument) as caught:
        load_cluster_file(path, inventory)
    assert caught.value.problems[0].message.startswith(f"{path}: line 1, column 10")
