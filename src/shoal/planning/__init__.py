"""Planning: the pure difference between a declared cluster and what exists, as typed steps.

Planning never talks to a provider or a database; the engine runs what it returns.
"""

from shoal.planning.plan import Plan, Step, StepKind, make_plan
from shoal.planning.repairs import Retired, add_repairs
from shoal.planning.replicas import ObservedNode, choose_replicas
from shoal.planning.victims import victim_order

__all__ = [
    "ObservedNode",
    "Plan",
    "Retired",
    "Step",
    "StepKind",
    "add_repairs",
    "choose_replicas",
    "make_plan",
    "victim_order",
]
