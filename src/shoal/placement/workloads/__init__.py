"""The second level of placement (issue 22): every replica of every workload onto the
cluster's own servers at once, under every hard rule, or a refusal in the user's names.

The servers are the "hosts" here (`problem.NodeSlot`: capacity from the flavor minus what
already runs), and each carries the physical host and zone the first level placed it on, so a
workload spread over zones needs servers in those zones. `solve.place_workloads` wires the
stages: checks per workload -> greedy -> exact CP-SAT model when greedy fails -> `verify`.
"""

from shoal.placement.workloads.problem import (
    NodeSlot,
    WorkloadPlacement,
    WorkloadRefusal,
)
from shoal.placement.workloads.rejection import WorkloadRejection, WorkloadRejectionKind
from shoal.placement.workloads.solve import place_workloads
from shoal.placement.workloads.verify import violations

__all__ = [
    "NodeSlot",
    "WorkloadPlacement",
    "WorkloadRefusal",
    "WorkloadRejection",
    "WorkloadRejectionKind",
    "place_workloads",
    "violations",
]
