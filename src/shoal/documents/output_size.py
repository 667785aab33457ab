"""How long an output's value can grow once the cluster is live, estimated when it is submitted.

An output is evaluated at GET time (planning/outputs.py), against nodes and deployment results
that do not exist yet when the document is read. A text template of 60,000 `A`s whose `A` is
another template of 60,000 `B`s, each `B` a member's address, is a few hundred kilobytes of
document and gigabytes of value. Here each form's size is estimated from the declared counts
(a fact FACT_CHARS long, a deployment output OUTPUT_CHARS), and an output over MAX_OUTPUT_CHARS
is refused at its pointer. The evaluator bounds the real value again when it is read.
"""

from __future__ import annotations

import json

from shoal.documents.drafts import ClusterDraft
from shoal.model.outputs import (
    MAX_OUTPUT_CHARS,
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    NetworkFact,
    OutputValue,
    TextTemplate,
)
from shoal.model.software import (
    LiteralInput,
    MemberFactsInput,
    OutputInput,
    OutputScope,
    SecretInput,
)

FACT_CHARS = 64
OUTPUT_CHARS = 256


def member_counts(cluster: ClusterDraft) -> dict[str, int]:
    """Nodes each member may have: a group's count or its max_size, an instance one."""
    counts: dict[str, int] = {}
    for g in cluster.groups:
        if g.name is not None:
            counts[g.name] = max(g.count or 1, g.max_size or 0, 1)
    for i in cluster.instances:
        if i.name is not None:
            counts[i.name] = 1
    return counts


def estimate(value: OutputValue, counts: dict[str, int]) -> int:
    """About how many characters `value` makes (capped once past the bound)."""
    total_nodes = max(sum(counts.values()), 1)
    return _size(value, counts, total_nodes, 0)


def too_big(value: OutputValue, counts: dict[str, int]) -> str | None:
    size = estimate(value, counts)
    if size <= MAX_OUTPUT_CHARS:
        return None
    return (
        f"this output would make about {size} characters once the cluster is live; an "
        f"output's value is at most {MAX_OUTPUT_CHARS} characters"
    )


_CAP = 1 << 62  # sizes saturate here: nested templates multiply


def _size(v: OutputValue, counts: dict[str, int], nodes: int, depth: int) -> int:
    if depth > 64:
        return _CAP
    match v:
        case LiteralInput(value):
            return len(json.dumps(value))
        case SecretInput():
            return OUTPUT_CHARS
        case MemberFact() | NetworkFact():
            return FACT_CHARS
        case MemberFactsInput(member, _):
            return 2 + counts.get(member.target, 1) * (FACT_CHARS + 1)
        case OutputInput(_, _, scope):
            return OUTPUT_CHARS if scope is OutputScope.NODE else 2 + nodes * (OUTPUT_CHARS + 1)
        case TextTemplate(template, params):
            size = len(template)
            for key, p in params.items():
                if key:
                    n = template.count(key)
                    if n:
                        size += n * max(_size(p, counts, nodes, depth + 1) - len(key), 0)
            return min(size, _CAP)
        case JoinedText(separator, items):
            sizes = [_size(i, counts, nodes, depth + 1) for i in items]
            return min(sum(sizes) + len(separator) * len(items) * nodes, _CAP)
        case ListValue(items):
            return min(2 + sum(_size(i, counts, nodes, depth + 1) + 1 for i in items), _CAP)
        case MapValue(items):
            return min(
                2 + sum(len(k) + 4 + _size(i, counts, nodes, depth + 1) for k, i in items.items()),
                _CAP,
            )
    return OUTPUT_CHARS
