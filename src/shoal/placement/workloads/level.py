"""The second level joined to the first: a placed cluster's servers carry its workloads'
replicas, or the whole answer becomes a refusal with the second level's reasons."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

from shoal.model.cluster import ClusterSpec
from shoal.placement.result import PlacementResult
from shoal.placement.workloads.problem import WorkloadRefusal
from shoal.placement.workloads.servers import node_slots, replica_rows
from shoal.placement.workloads.solve import place_workloads


def second_level(
    spec: ClusterSpec, result: PlacementResult, running: Mapping[str, str], limit_s: float
) -> PlacementResult:
    started = time.process_time()
    slots = node_slots(spec, result.assignments)
    answer = place_workloads(spec.workloads, slots, running, exact_time_limit_s=limit_s)
    stats = {
        **result.stats,
        "replicas": sum(w.replicas for w in spec.workloads),
        "replica_cpu_s": round(time.process_time() - started, 6),
    }
    if isinstance(answer, WorkloadRefusal):
        return replace(
            result,
            feasible=False,
            assignments=(),
            undecided=answer.undecided,
            reasons=answer.reasons,
            solver="workloads",
            stats=stats,
        )
    stats["replica_method"] = answer.method
    return replace(result, replicas=replica_rows(answer, slots), stats=stats)
