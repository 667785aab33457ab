"""Paths and types shared by the spec tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shoal.model import Problem

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLES = ROOT / "examples"

ProblemsOf = Callable[[str], list[Problem]]
