"""Reading a grouping's rule and its parameters, shared by the native and vcluster formats.

A parameter that does not belong to the rule (`max_skew` on anti-affinity, `max_per_domain` on
spread) is a mistake, not something to ignore: the user meant something the rule cannot do.
"""

from __future__ import annotations

from shoal.documents.drafts import GroupingDraft
from shoal.documents.fields import Fields
from shoal.model.enums import Rule, Scope

_PER_DOMAIN_RULES = (Rule.ANTI_AFFINITY, Rule.SOFT_ANTI_AFFINITY)


def read_rule(f: Fields, draft: GroupingDraft) -> None:
    """Fill the draft's rule, scope, max_per_domain and max_skew from `f`."""
    draft.rule = f.choice(
        "rule",
        Rule,
        required="say which rule: affinity, anti-affinity, soft-affinity, "
        "soft-anti-affinity or spread",
    )
    draft.scope = f.choice("scope", Scope, default=Scope.HOST)
    draft.max_per_domain = f.integer("max_per_domain", minimum=1)
    draft.max_skew = f.integer("max_skew", minimum=1)
    rule = draft.rule
    if rule is None:
        return
    if f.has("max_per_domain") and rule not in _PER_DOMAIN_RULES:
        f.problem(
            "max_per_domain",
            f"max_per_domain only applies to anti-affinity and soft-anti-affinity, not to {rule}",
        )
        draft.max_per_domain = None
    if f.has("max_skew") and rule is not Rule.SPREAD:
        f.problem("max_skew", f"max_skew only applies to spread, not to {rule}")
        draft.max_skew = None
