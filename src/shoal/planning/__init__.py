"""Planning: the pure difference between a declared cluster and what exists, as typed steps.

Planning never talks to a provider or a database; the engine runs what it returns.
"""

from shoal.planning.plan import Plan, Step, StepKind, make_plan
from shoal.planning.replicas import ObservedNode, choose_replicas

__all__ = ["ObservedNode", "Plan", "Step", "StepKind", "choose_replicas", "make_plan"]
