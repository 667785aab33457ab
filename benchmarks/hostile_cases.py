"""The hostile-input corpus (issue 29): documents written to break a `shoal server`.

One definition shared by the suite (`tests/hostile/`, which asserts each answer is a 4xx and
the server's memory stays put) and the benchmark (`benchmarks/hostile.py`, which also prints
the time of each answer). Each case is one request, plus, for an output that would only expand
when read, the `GET` of the cluster it created. Cases with `asserted=False` belong to another
part of the issue; the benchmark runs them, the suite does not assert them.

Signal cases (`signal_cases`) go to the signal URL of a live deployment run (the benchmark makes
one on the server under test and reads its URL as the node's agents do): each hostile body must
be refused with a 4xx and leave the run as it was; the last, racing well-formed signals, must
end the run exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.tiny", "image": "cirros"}}
JSON = "application/json"
YAML = "application/yaml"


@dataclass(frozen=True)
class Case:
    """One hostile request: where it goes and what it carries."""

    name: str
    path: str
    body: bytes
    content_type: str = JSON
    method: str = "POST"
    follow: str | None = None
    """A path to GET after a 2xx (an output evaluated when the cluster is read)."""
    asserted: bool = True
    """False: the benchmark runs it, the suite does not assert it (another helper's part)."""
    refused: bool = True
    """True: the answer must be a 4xx; False: any answer but a 5xx (e.g. 3,000 keys is fine)."""
    headers: dict[str, str] = field(default_factory=dict)


def laughs(levels: int = 9, width: int = 9) -> str:
    """A YAML "billion laughs": `width ** levels` strings from a few hundred bytes."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines)


def _indent(text: str, by: int) -> str:
    pad = " " * by
    return "\n".join(pad + line for line in text.splitlines())


def _hot_with_bomb() -> str:
    return (
        "heat_template_version: 2016-10-14\n"
        "parameters:\n"
        "  bombs:\n"
        "    type: json\n"
        "    default:\n" + _indent(laughs(), 6) + "\n"
        "resources:\n"
        "  web:\n"
        "    type: OS::Nova::Server\n"
        "    properties:\n"
        "      flavor: m1.tiny\n"
        "      image: cirros\n"
        "      metadata: {get_param: bombs}\n"
    )


def _native_with_bomb(name: str) -> str:
    return (
        f"name: {name}\n"
        "profiles:\n"
        "  p: {type: server, flavor: m1.tiny, image: cirros}\n"
        "node_groups:\n"
        "  - name: web\n"
        "    profile: p\n"
        "    count: 1\n"
        "    labels:\n" + _indent(laughs(), 6) + "\n"
    )


def _hot(resources: Mapping[str, object], **extra: object) -> dict[str, object]:
    return {"heat_template_version": "2018-08-31", "resources": resources, **extra}


def _stack(name: str, template: object, **extra: object) -> bytes:
    return json.dumps({"stack_name": name, "template": template, **extra}).encode()


def _with_metadata(value: object) -> dict[str, object]:
    props = {"flavor": "m1.tiny", "image": "cirros", "metadata": value}
    return _hot({"web": {"type": "OS::Nova::Server", "properties": props}})


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_stack(depth: int) -> bytes:
    """A stack-create body whose server metadata nests `depth` lists deep."""
    marker = "__DEEP__"
    body = _stack("deep", _with_metadata(marker)).decode()
    return body.replace(json.dumps(marker), _deep(depth)).encode()


def _senlin_profile(name: str, template: object) -> bytes:
    spec = {"type": "os.heat.stack", "version": "1.0", "properties": {"template": template}}
    return json.dumps({"profile": {"name": name, "spec": spec}}).encode()


REDOS = "(a+)+$"
REDOS_VALUE = "a" * 40 + "!"


def _redos_hot() -> dict[str, object]:
    param = {
        "type": "string",
        "default": REDOS_VALUE,
        "constraints": [{"allowed_pattern": REDOS}],
    }
    return _hot({"web": SERVER}, parameters={"p": param})


def _fanout(levels: int = 5, width: int = 50) -> bytes:
    """Nested templates, each with `width` resources of the next: `width ** levels` servers."""
    files: dict[str, str] = {}
    for level in range(1, levels + 1):
        inner = f"level{level + 1}.yaml" if level < levels else None
        resources = {f"r{i}": {"type": inner} if inner else SERVER for i in range(width)}
        files[f"level{level}.yaml"] = json.dumps(_hot(resources))
    top = _hot({"top": {"type": "level1.yaml"}})
    return _stack("fanout", top, files=files)


def _groups(n: int = 5000) -> bytes:
    group = {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 1, "resource_def": SERVER},
    }
    return _stack("groups", _hot({f"g{i}": group for i in range(n)}))


def _str_replace(chars: int, keys: int) -> bytes:
    params = {f"k{i}": "v" * 8 for i in range(keys)}
    value = {"str_replace": {"template": "k1" * (chars // 2), "params": params}}
    return _stack(f"sr{keys}", _with_metadata({"m": value}))


def _list_join_repeat() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": list(range(300)), "<%b%>": list(range(300))},
            "template": "<%a%>-<%b%>-" + "x" * 10_000,
        }
    }
    return _stack("lj", _with_metadata({"m": {"list_join": [",", rep]}}))


def _big_repeat() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": list(range(46)), "<%b%>": list(range(46)), "<%c%>": [1, 2]},
            "template": {"k<%a%>": "<%b%><%c%>" + "y" * 20_000},
        }
    }
    return _stack("rep", _with_metadata({"m": rep}))


def _map_merge() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": list(range(300)), "<%b%>": list(range(300))},
            "template": {"<%a%>-<%b%>": "z" * 5_000},
        }
    }
    merged = {"map_merge": [{"list_concat": [rep, rep]}]}
    return _stack("mm", _with_metadata({"m": merged}))


def _select_index() -> bytes:
    template = _with_metadata({"m": {"Fn::Select": ["9" * 5000, ["a", "b"]]}})
    template["heat_template_version"] = "2014-10-16"  # Fn::Select is gone from 2016-10-14
    return _stack("sel", template)


def _get_param_index() -> bytes:
    params = {"p": {"type": "comma_delimited_list", "default": "a,b"}}
    template = _with_metadata({"m": {"get_param": ["p", "9" * 5000]}})
    template["parameters"] = params
    return _stack("gp", template)


def _digest_shake() -> bytes:
    return _stack("dg", _with_metadata({"m": {"digest": ["shake_128", "x"]}}))


def _repeat_count() -> bytes:
    """Three lists of 1,000: a billion combinations from a small body."""
    each = list(range(1000))
    rep = {"repeat": {"for_each": {"<%a%>": each, "<%b%>": each, "<%c%>": each}, "template": "x"}}
    return _stack("rc", _with_metadata({"m": {"list_join": [",", rep]}}))


def _native_output(name: str) -> str:
    """An output whose text template would expand at GET time to gigabytes."""
    inner = "B" * 60_000
    outer = "A" * 60_000
    return (
        f"name: {name}\n"
        "profiles:\n"
        "  p: {type: server, flavor: m1.tiny, image: cirros}\n"
        "node_groups:\n"
        "  - {name: app, profile: p, count: 2}\n"
        "outputs:\n"
        "  boom:\n"
        "    value:\n"
        f"      template: {outer}\n"
        "      params:\n"
        "        A:\n"
        f"          template: {inner}\n"
        "          params: {B: {members: app}}\n"
    )


def _hot_output() -> bytes:
    inner = {
        "str_replace": {
            "template": "B" * 60_000,
            "params": {"B": {"get_attr": ["web", "first_address"]}},
        }
    }
    outer = {"str_replace": {"template": "A" * 60_000, "params": {"A": inner}}}
    template = _hot({"web": SERVER}, outputs={"boom": {"value": outer}})
    return _stack("hotout", template)


def cases() -> list[Case]:
    """Every case, in the order the benchmark prints them."""
    bomb = laughs()
    return [
        Case("yaml_alias_hot", "/v1/clusters", _hot_with_bomb().encode(), YAML),
        Case("yaml_alias_native", "/v1/clusters", _native_with_bomb("nb").encode(), YAML),
        Case(
            "yaml_alias_stack_body",
            "/v1/clusters",
            _stack("sb", _hot_with_bomb()),
        ),
        Case(
            "yaml_alias_environment",
            "/v1/clusters",
            _stack(
                "env", _hot({"web": SERVER}), environment="parameter_defaults:\n" + _indent(bomb, 2)
            ),
        ),
        Case(
            "yaml_alias_files",
            "/v1/clusters",
            _stack(
                "files",
                _hot({"n": {"type": "nested.yaml"}}),
                files={"nested.yaml": _hot_with_bomb()},
            ),
        ),
        Case("yaml_alias_plan_preview", "/ui/api/plan", _native_with_bomb("pp").encode(), YAML),
        Case(
            "yaml_alias_senlin_profile",
            "/clustering/v1/profiles",
            _senlin_profile("bomb", _hot_with_bomb()),
        ),
        Case(
            "yaml_recursive_alias",
            "/v1/clusters",
            (
                b"heat_template_version: 2016-10-14\nresources:\n  web:\n"
                b"    type: OS::Nova::Server\n    properties:\n"
                b"      flavor: m1.tiny\n      image: cirros\n      metadata: &r {a: *r}\n"
            ),
            YAML,
        ),
        Case("json_deep_900", "/v1/clusters", _deep_stack(900)),
        Case(
            "json_deep_900_native",
            "/v1/clusters",
            ('{"name": "deepn", "labels": ' + _deep(900) + "}").encode(),
        ),
        Case("str_replace_50k_x_50k", "/v1/clusters", _str_replace(50_000, 50_000)),
        Case("str_replace_3000_keys", "/v1/clusters", _str_replace(3_000, 3_000), refused=False),
        Case("list_join_over_repeat", "/v1/clusters", _list_join_repeat()),
        Case("repeat_big", "/v1/clusters", _big_repeat()),
        Case("map_merge_repeat", "/v1/clusters", _map_merge()),
        Case("repeat_count_list_join", "/v1/clusters", _repeat_count()),
        Case("redos_hot", "/v1/clusters", _stack("redos", _redos_hot())),
        Case(
            "redos_native",
            "/v1/clusters",
            (
                "name: redosn\nparameters:\n  p:\n    type: string\n"
                f"    default: '{REDOS_VALUE}'\n"
                f"    constraints: {{allowed_pattern: '{REDOS}'}}\n"
                "profiles:\n  p: {type: server, flavor: m1.tiny, image: cirros}\n"
                "node_groups:\n  - {name: web, profile: p, count: 1}\n"
            ).encode(),
            YAML,
        ),
        Case(
            "redos_senlin_profile",
            "/clustering/v1/profiles",
            _senlin_profile("redos", _redos_hot()),
        ),
        Case("select_5000_digit_index", "/v1/clusters", _select_index()),
        Case("get_param_5000_digit_index", "/v1/clusters", _get_param_index()),
        Case("digest_shake", "/v1/clusters", _digest_shake()),
        Case("files_fanout_50_pow_5", "/v1/clusters", _fanout()),
        Case("resource_groups_5000", "/v1/clusters", _groups()),
        Case(
            "output_expands_native",
            "/v1/clusters",
            _native_output("outn").encode(),
            YAML,
            follow="/v1/clusters/outn",
        ),
        Case("output_expands_hot", "/v1/clusters", _hot_output(), follow="/v1/clusters/hotout"),
    ]


@dataclass(frozen=True)
class SignalCase:
    """Hostile bodies POSTed to a live run's signal URL, `copies` at once."""

    name: str
    bodies: tuple[bytes, ...]
    copies: int = 1
    """How many requests race (the bodies taken round-robin)."""
    wrong_token: bool = False
    """Sent with the run's token altered (a peer guessing another run's URL): 404."""
    ends_run: bool = False
    """Well-formed: the run ends, once, however many race (otherwise it must stay unchanged)."""


def _deep_object(depth: int) -> bytes:
    return ('{"out": ' + '{"a": ' * depth + "1" + "}" * depth + "}").encode()


def _signal(**fields: object) -> bytes:
    return json.dumps({"deploy_stdout": "", "deploy_stderr": "", **fields}).encode()


def signal_cases() -> list[SignalCase]:
    """Every signal case, in order: the run must be unchanged by all but the last."""
    deep = _deep(500_000).encode()
    huge_code = _signal(deploy_status_code=10**29)
    nan = b'{"deploy_status_code": NaN}'
    hostile = (
        deep,
        huge_code,
        nan,
        _deep_object(100_000),
        b'{"out": Infinity}',
        _signal(deploy_status_code="9" * 5000),
        b'{"deploy_status_code": ' + b"9" * 100_000 + b"}",
        b'{"deploy_stdout": ' + b"[" * 40 + b"]" * 40 + b"}",
        b"\xff\xfe{}",
    )
    racing_ok = tuple(
        _signal(deploy_status_code=i % 3, deploy_stdout=f"racer {i}") for i in range(120)
    )
    return [
        SignalCase("signal_body_deep_500k", (deep,)),
        SignalCase("signal_object_deep_100k", (_deep_object(100_000),)),
        SignalCase("signal_status_code_1e29", (huge_code,)),
        SignalCase("signal_status_code_nan", (nan,)),
        SignalCase("signal_status_code_100k_digits", (hostile[6],)),
        SignalCase("signal_status_code_5000_digit_text", (hostile[5],)),
        SignalCase("signal_output_infinity", (hostile[4],)),
        SignalCase("signal_output_int_1e30", (_signal(out=10**30),)),
        SignalCase("signal_stdout_not_text", (hostile[7],)),
        SignalCase("signal_not_utf8", (hostile[8],)),
        SignalCase("signal_not_object", (b"[1, 2, 3]",)),
        SignalCase("signal_outputs_1000", (_signal(**{f"o{i}": i for i in range(1000)}),)),
        SignalCase("signal_body_1mb_plus", (_signal(deploy_stdout="x" * 1_100_000),)),
        SignalCase("signal_body_64mb", (b"[" * (64 << 20),)),
        SignalCase("signal_wrong_token", (_signal(deploy_status_code=0),), wrong_token=True),
        SignalCase("signal_racing_hostile_120", hostile, copies=120),
        SignalCase("signal_racing_120", racing_ok, copies=120, ends_run=True),
    ]
