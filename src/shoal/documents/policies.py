"""Reading policy sections: health, update, deletion and scaling (docs/cluster-format.md).

Each reader takes the mapping that holds the section (the document or a node group) and returns
the policy, or None when the section is absent or broken (its problems are then recorded). An
empty section means the policy with all its defaults. As with grouping rules, a field that does
not fit the rest of the policy (`path` on a tcp check, `min_step` on an exact capacity) is a
mistake, not something to ignore.
"""

from __future__ import annotations

import re
from typing import TypeVar

from shoal.documents.collect import child
from shoal.documents.drafts import IncompleteDraftError
from shoal.documents.fields import Fields, is_placeholder, mapping
from shoal.documents.tree import describe, is_int, is_list, quote
from shoal.model.policies import (
    AdjustmentType,
    CheckKind,
    DeletionPolicy,
    HealthPolicy,
    Recovery,
    ScalingPolicy,
    Threshold,
    UpdatePolicy,
    VictimOrder,
)

_T = TypeVar("_T")

_PERCENT = re.compile(r"\s*(\d+)\s*%\s*")
_DECIMAL_PERCENT = re.compile(r"\s*\d*\.\d+\s*%\s*")
_WHOLE = re.compile(r"\s*\d+\s*")

_HTTP_ONLY = ("path", "expected_codes")
_PROBE_ONLY = ("port",)

HEALTH = HealthPolicy()
UPDATE = UpdatePolicy()
DELETION = DeletionPolicy()
SCALING = ScalingPolicy()


def _need(value: _T | None) -> _T:
    if value is None:
        raise IncompleteDraftError("no problem was reported, yet a policy field is missing")
    return value


def _section(owner: Fields, key: str, what: str) -> Fields | None:
    value = owner.raw(key)
    if value is None:
        return None
    return mapping(value, owner.at(key), owner.out, what)


def read_health(owner: Fields, key: str = "health") -> HealthPolicy | None:
    f = _section(owner, key, "a health policy")
    if f is None:
        return None
    before = len(f.out)
    d = HEALTH
    check = f.choice("check", CheckKind, default=d.check)
    path = _http_path(f, d.path)
    port = f.integer("port", minimum=1, maximum=65535, noun="port", meaning="a port number")
    codes = _status_codes(f, d.expected_codes)
    interval = f.number("interval_s", minimum=0, above=True, default=d.interval_s, unit="seconds")
    # Without a timeout of its own, a check ends by the next one: the default 2 s, or less.
    default_timeout = d.timeout_s if interval is None else min(d.timeout_s, interval)
    timeout = f.number("timeout_s", minimum=0, above=True, default=default_timeout, unit="seconds")
    failures = f.integer("failures", minimum=1, default=d.failures, meaning="a count of checks")
    grace = f.number("grace_s", minimum=0, default=d.grace_s, unit="seconds")
    recovery = f.choice("recovery", Recovery, default=d.recovery)
    max_unhealthy = _threshold(f, "max_unhealthy", d.max_unhealthy)
    f.finish()
    if check is not None:
        _check_probe_fields(f, check)
    if interval is not None and timeout is not None and timeout > interval:
        f.problem(
            "timeout_s",
            f"timeout_s ({timeout:g}) is above interval_s ({interval:g}): a check must end "
            "before the next one starts",
        )
    if len(f.out) != before:
        return None
    return HealthPolicy(
        check=_need(check),
        path=_need(path),
        port=port,
        expected_codes=_need(codes),
        interval_s=_need(interval),
        timeout_s=_need(timeout),
        failures=_need(failures),
        grace_s=_need(grace),
        recovery=_need(recovery),
        max_unhealthy=_need(max_unhealthy),
    )


def _check_probe_fields(f: Fields, check: CheckKind) -> None:
    """`path` and `expected_codes` need an http check; `port` an http or tcp one."""
    for key in _HTTP_ONLY:
        if key in f.values and check is not CheckKind.HTTP:
            f.problem(
                key, f"'{key}' is only for http checks, not for a {check} check (set check: http)"
            )
    for key in _PROBE_ONLY:
        if key in f.values and check is CheckKind.PROVIDER:
            f.problem(
                key,
                f"'{key}' is only for http/tcp checks, not for a provider check "
                "(set check: http or check: tcp)",
            )


def _http_path(f: Fields, default: str) -> str | None:
    path = f.text("path")
    if "path" not in f.values:
        return default
    if path is None:
        return None
    if not path.startswith("/"):
        f.problem("path", f"the path {quote(path)} must start with '/', e.g. /health")
        return None
    if any(c.isspace() for c in path):
        f.problem("path", f"the path {quote(path)} contains a space; write spaces as %20")
        return None
    return path


def _status_codes(f: Fields, default: tuple[int, ...]) -> tuple[int, ...] | None:
    value = f.raw("expected_codes")
    if "expected_codes" not in f.values:
        return default
    if is_int(value):
        f.problem("expected_codes", f"expected a list of status codes, e.g. [{value}]")
        return None
    if not is_list(value):
        f.problem("expected_codes", f"expected a list of status codes, found {describe(value)}")
        return None
    if not value:
        f.problem("expected_codes", "list at least one status code, e.g. [200]")
        return None
    codes: list[int] = []
    broken = False
    for i, code in enumerate(value):
        where = child(f.at("expected_codes"), i)
        if not is_int(code):
            hint = (
                "; write it without quotes"
                if isinstance(code, str) and _WHOLE.fullmatch(code)
                else ""
            )
            f.out.add(
                where, f"expected an HTTP status code (100 to 599), found {describe(code)}{hint}"
            )
            broken = True
        elif not 100 <= code <= 599:
            f.out.add(where, f"{code} is not an HTTP status code; they run from 100 to 599")
            broken = True
        elif code in codes:
            f.out.add(where, f"status code {code} is listed twice")
            broken = True
        else:
            codes.append(code)
    return None if broken else tuple(codes)


def _threshold(f: Fields, key: str, default: Threshold) -> Threshold | None:
    """A count of nodes (a whole number >= 0) or a percentage text such as "40%"."""
    value = f.raw(key)
    if key not in f.values:
        return default
    wanted = 'a number of nodes (0 or more) or a percentage of the group such as "40%"'
    if is_int(value):
        if value < 0:
            f.problem(key, f"must be at least 0, found {describe(value)}")
            return None
        return Threshold(value)
    if isinstance(value, str):
        percent = _PERCENT.fullmatch(value)
        if percent:
            number = int(percent.group(1))
            if number > 100:
                f.problem(key, f"a percentage is at most 100%, found {quote(value)}")
                return None
            return Threshold(number, percent=True)
        if _DECIMAL_PERCENT.fullmatch(value):
            f.problem(key, f'give a whole percentage, such as "40%", found {quote(value)}')
            return None
        if _WHOLE.fullmatch(value):
            f.problem(
                key,
                f"expected {wanted}, found {describe(value)}; write a number of nodes without "
                "quotes, or add '%' for a percentage",
            )
            return None
        if is_placeholder(value):
            f.problem(key, f"{quote(value)} is a placeholder; give {wanted}")
            return None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        f.problem(
            key, f"expected {wanted}, found {describe(value)}; write it without the decimal point"
        )
        return None
    if isinstance(value, float) and 0 <= value <= 1:
        f.problem(
            key,
            f"expected {wanted}, found {describe(value)}; write a fraction as a percentage, "
            f'e.g. "{value * 100:g}%"',
        )
        return None
    f.problem(key, f"expected {wanted}, found {describe(value)}")
    return None


def read_update(owner: Fields, key: str = "update") -> UpdatePolicy | None:
    f = _section(owner, key, "an update policy")
    if f is None:
        return None
    before = len(f.out)
    d = UPDATE
    unavailable = f.integer("max_unavailable", minimum=0, default=d.max_unavailable)
    surge = f.integer("max_surge", minimum=0, default=d.max_surge)
    pause = f.number("pause_s", minimum=0, default=d.pause_s, unit="seconds")
    gate = f.flag("health_gate", default=d.health_gate)
    gate_timeout = f.number(
        "gate_timeout_s", minimum=0, above=True, default=d.gate_timeout_s, unit="seconds"
    )
    failure_threshold = f.integer(
        "failure_threshold", minimum=1, default=d.failure_threshold, meaning="a count of nodes"
    )
    f.finish()
    if unavailable == 0 and surge == 0:
        f.problem(
            "max_unavailable",
            "max_unavailable and max_surge are both 0, so no node could ever be replaced; "
            "allow at least one of them",
        )
    if gate is False and "gate_timeout_s" in f.values:
        f.problem("gate_timeout_s", "'gate_timeout_s' only applies when health_gate is true")
    if len(f.out) != before:
        return None
    return UpdatePolicy(
        max_unavailable=_need(unavailable),
        max_surge=_need(surge),
        pause_s=_need(pause),
        health_gate=_need(gate),
        gate_timeout_s=_need(gate_timeout),
        failure_threshold=_need(failure_threshold),
    )


def read_deletion(owner: Fields, key: str = "deletion") -> DeletionPolicy | None:
    f = _section(owner, key, "a deletion policy")
    if f is None:
        return None
    before = len(f.out)
    victims = f.choice("victims", VictimOrder, default=DELETION.victims)
    balance = f.flag("balance_zones", default=DELETION.balance_zones)
    f.finish()
    if len(f.out) != before:
        return None
    return DeletionPolicy(victims=_need(victims), balance_zones=_need(balance))


def read_scaling(owner: Fields, key: str = "scaling") -> ScalingPolicy | None:
    f = _section(owner, key, "a scaling policy")
    if f is None:
        return None
    before = len(f.out)
    d = SCALING
    kind = f.choice("adjustment_type", AdjustmentType, default=d.adjustment_type)
    exact = kind is AdjustmentType.EXACT_CAPACITY
    number = f.number("number", minimum=0, above=not exact, default=d.number)
    min_step = f.integer("min_step", minimum=1, default=d.min_step, meaning="a count of nodes")
    cooldown = f.number("cooldown_s", minimum=0, default=d.cooldown_s, unit="seconds")
    strict = f.flag("strict", default=d.strict)
    f.finish()
    by_count = kind is not None and kind is not AdjustmentType.CHANGE_IN_PERCENTAGE
    if number is not None and by_count:
        if not float(number).is_integer():
            what = "the target count" if exact else "the number of nodes to add or remove"
            f.problem(
                "number",
                f"for {kind}, number is {what}: a whole number, found {number:g}",
            )
        else:
            number = int(number)
    if "min_step" in f.values and by_count:
        f.problem("min_step", f"'min_step' only applies to CHANGE_IN_PERCENTAGE, not to {kind}")
    if len(f.out) != before:
        return None
    return ScalingPolicy(
        adjustment_type=_need(kind),
        number=_need(number),
        min_step=_need(min_step),
        cooldown_s=_need(cooldown),
        strict=_need(strict),
    )
