"""Fixtures for the spec tests: the default inventory and "load, expecting problems"."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster
from shoal.model import InvalidDocument, Inventory, Problem
from shoal.model.catalogs import default_inventory
from tests.documents.support import ProblemsOf


@pytest.fixture
def inventory() -> Inventory:
    return default_inventory()


@pytest.fixture
def problems_of(inventory: Inventory) -> ProblemsOf:
    """Load a cluster document that must be invalid; return its problems."""

    def load(text: str) -> list[Problem]:
        with pytest.raises(InvalidDocument) as caught:
            load_cluster(text, inventory)
        return caught.value.problems

    return load
