"""Whole-cluster placement: a pure function from (inventory, existing placement, cluster) to a
placement or an explained infeasible verdict. See `solver.solve` for the pipeline."""

from shoal.placement.result import (
    Assignment,
    PlacementResult,
    PlacementStatus,
    RuleCheck,
    SoftViolation,
)
from shoal.placement.solver import configure, solve
from shoal.placement.verify import Verification, verify_placement

__all__ = [
    "Assignment",
    "PlacementResult",
    "PlacementStatus",
    "RuleCheck",
    "SoftViolation",
    "Verification",
    "configure",
    "solve",
    "verify_placement",
]
