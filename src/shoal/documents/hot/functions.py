"""Heat's intrinsic functions, evaluated without a cloud, as Heat documents them.

A mapping with one key that names a function is a call. The function must exist in the
template's version (`versions.py`), its arguments must have the documented shape, and a bad
call is one problem at its pointer; the evaluation then carries on with a broken value so
every other problem is still found. Values only a cloud knows (a resource's id, an attribute)
stay symbolic (`values.py`); `yaql` is not evaluated (no yaql engine here) and is reported as
unsupported. The evaluator is `evaluator.py`; the functions, by kind, `fn_lookup.py`,
`fn_text.py`, `fn_logic.py` and `fn_data.py`. Import from here: this module fills the table.
"""

from __future__ import annotations

from shoal.documents.hot import fn_data, fn_logic, fn_lookup, fn_text
from shoal.documents.hot.evaluator import (
    BROKEN,
    HANDLERS,
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STEPS,
    MAX_TOTAL_RESOURCES,
    Budget,
    Evaluator,
    Scope,
    call_of,
    plain,
)
from shoal.documents.hot.fn_lookup import NOWHERE, step_into
from shoal.documents.hot.fn_text import replace_all

for _module in (fn_lookup, fn_text, fn_logic, fn_data):
    HANDLERS.update(_module.FUNCTIONS)

SUPPORTED = frozenset(HANDLERS) - {"Fn::Split", "Fn::Replace", "Fn::Base64", "Ref"}

__all__ = [
    "BROKEN",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_STEPS",
    "MAX_TOTAL_RESOURCES",
    "NOWHERE",
    "SUPPORTED",
    "Budget",
    "Evaluator",
    "Scope",
    "call_of",
    "plain",
    "replace_all",
    "step_into",
]
