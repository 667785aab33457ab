"""Fields shared by both ways of writing a workload (Shoal's own and a Kubernetes manifest):
resource quantities, probes and their bounds.

Every number a document can name is bounded here before anything is built from it (issue 22's
"bad input and limits"): probe periods, timeouts and thresholds, CPU and memory requests.
"""

from __future__ import annotations

import re

from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.tree import describe, is_list
from shoal.model.workloads import Probe, ProbeKind

MAX_CPU_MILLI = 1_024_000
MAX_MEMORY_MB = 16 * 1024 * 1024
MAX_PORT = 65_535
MAX_PROBE_PERIOD_S = 3_600.0
MAX_PROBE_TIMEOUT_S = 600.0
MAX_PROBE_DELAY_S = 3_600.0
MAX_FAILURE_THRESHOLD = 100
MAX_ARGV = 256
"""Items of a command or of its arguments."""
MAX_ARG_BYTES = 4_096

_CPU = re.compile(r"^(\d+(?:\.\d+)?)(m?)$")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_MEMORY_UNITS_MB = {
    None: 1 / (1024 * 1024),
    "Ki": 1 / 1024,
    "Mi": 1.0,
    "Gi": 1024.0,
    "Ti": 1024.0 * 1024,
    "k": 1000 / (1024 * 1024),
    "M": 1_000_000 / (1024 * 1024),
    "G": 1_000_000_000 / (1024 * 1024),
    "T": 1_000_000_000_000 / (1024 * 1024),
}


def cpu_milli(value: object, where: str, out: ProblemList) -> int | None:
    """Cores as a number (0.5) or Kubernetes' text ("500m", "2") -> thousandths of a core."""
    milli: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        milli = float(value) * 1000
    elif isinstance(value, str):
        m = _CPU.match(value.strip())
        if m:
            milli = float(m.group(1)) * (1 if m.group(2) else 1000)
    if milli is None or milli != milli:
        out.add(where, f"expected cores (0.5) or millicores ('500m'), found {describe(value)}")
        return None
    if milli < 0 or milli > MAX_CPU_MILLI:
        out.add(where, f"must be between 0 and {MAX_CPU_MILLI // 1000} cores")
        return None
    return round(milli)


def memory_mb(value: object, where: str, *, bare_unit_mb: bool, out: ProblemList) -> int | None:
    """A memory request in MiB. A bare number is MiB in Shoal's own `memory_mb`, bytes in a
    Kubernetes quantity (`bare_unit_mb=False`), as each format means it."""
    mb: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        mb = float(value) if bare_unit_mb else float(value) / (1024 * 1024)
    elif isinstance(value, str):
        m = _MEMORY.match(value.strip())
        if m and (m.group(2) is not None or not bare_unit_mb):
            mb = float(m.group(1)) * _MEMORY_UNITS_MB[m.group(2)]
    if mb is None:
        out.add(where, f"expected a size such as 256Mi or 1Gi, found {describe(value)}")
        return None
    if mb < 0 or mb > MAX_MEMORY_MB:
        out.add(where, f"must be between 0 and {MAX_MEMORY_MB} MiB")
        return None
    return int(-(-mb // 1))


def port(value: object, where: str, out: ProblemList) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PORT:
        return value
    out.add(where, f"expected a port number 1..{MAX_PORT}, found {describe(value)}")
    return None


def argv(f: Fields, key: str) -> tuple[str, ...]:
    """A command or its arguments: a list of text, bounded in items and bytes."""
    value = f.raw(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not is_list(value):
        f.problem(key, f"expected a list of text, found {describe(value)}")
        return ()
    if len(value) > MAX_ARGV:
        f.problem(key, f"at most {MAX_ARGV} items, found {len(value)}")
        return ()
    items: list[str] = []
    for i, item in enumerate(value):
        where = child(f.at(key), i)
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            f.out.add(where, f"expected text, found {describe(item)}")
        elif len(str(item).encode()) > MAX_ARG_BYTES:
            f.out.add(where, f"at most {MAX_ARG_BYTES} bytes")
        else:
            items.append(str(item))
    return tuple(items)


def native_probe(value: object, where: str, out: ProblemList) -> Probe | None:
    """`{http: /path, port: N}`, `{tcp: N}` or `{exec: [argv]}`, plus the timings."""
    f = mapping(value, where, out, "a probe")
    if f is None:
        return None
    kinds = [k for k in ProbeKind if f.has(str(k))]
    if len(kinds) != 1:
        out.add(where, "give exactly one of http (a path, with port), tcp (a port) or exec")
        _timings(f)
        f.finish()
        return None
    kind = kinds[0]
    probe: Probe | None
    if kind is ProbeKind.HTTP:
        path = f.text("http", empty_ok=False)
        p = port(f.raw("port", required="give the port the HTTP probe asks"), f.at("port"), out)
        probe = None if path is None or p is None else Probe(kind, port=p, path=path)
    elif kind is ProbeKind.TCP:
        p = port(f.raw("tcp"), f.at("tcp"), out)
        probe = None if p is None else Probe(kind, port=p)
    else:
        command = argv(f, "exec")
        if not command:
            f.problem("exec", "give the command to run")
        probe = Probe(kind, command=command) if command else None
    timings = _timings(f)
    f.finish()
    if probe is None or timings is None:
        return None
    period, timeout, threshold, delay = timings
    return Probe(
        probe.kind,
        port=probe.port,
        path=probe.path,
        command=probe.command,
        period_s=period,
        timeout_s=timeout,
        failure_threshold=threshold,
        initial_delay_s=delay,
    )


def _timings(f: Fields) -> tuple[float, float, int, float] | None:
    period = _bounded(f, "period_s", 1.0, MAX_PROBE_PERIOD_S, 10.0)
    timeout = _bounded(f, "timeout_s", 0.1, MAX_PROBE_TIMEOUT_S, 1.0)
    delay = _bounded(f, "initial_delay_s", 0.0, MAX_PROBE_DELAY_S, 0.0)
    threshold = f.integer("failure_threshold", minimum=1, maximum=MAX_FAILURE_THRESHOLD, default=3)
    if period is None or timeout is None or delay is None or threshold is None:
        return None
    if timeout > period:
        f.problem("timeout_s", f"a probe's timeout ({timeout:g} s) exceeds its period")
        return None
    return period, timeout, threshold, delay


def _bounded(f: Fields, key: str, low: float, high: float, default: float) -> float | None:
    value = f.number(key, minimum=low, default=default, unit="seconds")
    if value is not None and value > high:
        f.problem(key, f"must be at most {high:g} seconds, found {value:g}")
        return None
    return value
