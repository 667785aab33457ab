"""Which `heat_template_version` names exist, and which intrinsic functions each one offers.

Heat gates its functions by template version: a function named in a template older than the
version that introduced it is an error naming it, as is a CloudFormation function a later
version removed. The tables follow Heat's template classes (engine/hot/template.py).
"""

from __future__ import annotations

from dataclasses import dataclass

_DATES: tuple[tuple[str, str | None], ...] = (
    ("2013-05-23", None),
    ("2014-10-16", None),
    ("2015-04-30", None),
    ("2015-10-15", None),
    ("2016-04-08", None),
    ("2016-10-14", "newton"),
    ("2017-02-24", "ocata"),
    ("2017-09-01", "pike"),
    ("2018-03-02", "queens"),
    ("2018-08-31", "rocky"),
    ("2021-04-16", "wallaby"),
)

_CFN_2013 = frozenset({"Fn::Join", "Fn::Select", "Fn::Split", "Fn::Replace", "Fn::Base64", "Ref"})
_BASE = frozenset(
    {"get_param", "get_resource", "get_attr", "str_replace", "get_file", "resource_facade"}
)

# The functions each version adds to the one before it (Heat's template classes).
_ADDED: dict[str, frozenset[str]] = {
    "2013-05-23": _BASE | _CFN_2013,
    "2014-10-16": frozenset({"list_join"}),
    "2015-04-30": frozenset({"digest", "repeat"}),
    "2015-10-15": frozenset({"str_split"}),
    "2016-04-08": frozenset({"map_merge"}),
    "2016-10-14": frozenset({"equals", "if", "not", "and", "or", "map_replace", "yaql"}),
    "2017-02-24": frozenset({"filter", "str_replace_strict"}),
    "2017-09-01": frozenset(
        {"make_url", "list_concat", "list_concat_unique", "contains", "str_replace_vstrict"}
    ),
    "2018-03-02": frozenset(),
    "2018-08-31": frozenset(),
    "2021-04-16": frozenset(),
}

# CloudFormation functions 2014-10-16 dropped (Fn::Select lived on until 2015-10-15).
_REMOVED: dict[str, frozenset[str]] = {
    "2014-10-16": _CFN_2013 - {"Fn::Select"},
    "2015-10-15": frozenset({"Fn::Select"}),
}

ALL_FUNCTIONS: frozenset[str] = frozenset().union(*_ADDED.values())


@dataclass(frozen=True, slots=True)
class Version:
    """One template version: its date, its release name if any, and its functions."""

    date: str
    alias: str | None
    functions: frozenset[str]
    ordinal: int

    @property
    def label(self) -> str:
        return f"{self.date} ({self.alias})" if self.alias else self.date

    def at_least(self, date: str) -> bool:
        return self.ordinal >= _ORDINAL[date]

    @property
    def has_conditions(self) -> bool:
        return self.at_least("2016-10-14")

    @property
    def condition_functions(self) -> frozenset[str]:
        """The functions a condition may use (Heat's `condition_functions`): any other
        function of the version is "invalid in this context" there."""
        later = {"yaql", "contains"} if self.at_least("2017-09-01") else set()
        return frozenset({"get_param", "equals", "not", "and", "or", *later})

    @property
    def if_without_else(self) -> bool:
        return self.at_least("2021-04-16")


def _build() -> dict[str, Version]:
    out: dict[str, Version] = {}
    functions: set[str] = set()
    for i, (date, alias) in enumerate(_DATES):
        functions |= _ADDED[date]
        functions -= _REMOVED.get(date, frozenset())
        v = Version(date, alias, frozenset(functions), i)
        out[date] = v
        if alias:
            out[alias] = v
    return out


_ORDINAL = {date: i for i, (date, _) in enumerate(_DATES)}
VERSIONS: dict[str, Version] = _build()
KNOWN_NAMES = tuple(d for d, _ in _DATES) + tuple(a for _, a in _DATES if a)


def version_of(value: object) -> Version | None:
    """The version a `heat_template_version` value names (YAML may read a date as a date)."""
    text = value.isoformat() if hasattr(value, "isoformat") else value
    return VERSIONS.get(text) if isinstance(text, str) else None


def introduced_in(function: str) -> str | None:
    """The first version date that offers `function`, or None when no version does."""
    for date, _ in _DATES:
        if function in VERSIONS[date].functions:
            return date
    return None
