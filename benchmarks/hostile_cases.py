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


def _texts(n: int) -> list[str]:
    """`repeat` replaces its placeholders in text, so its items are text (Heat's str.replace)."""
    return [str(i) for i in range(n)]


def _list_join_repeat() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": _texts(300), "<%b%>": _texts(300)},
            "template": "<%a%>-<%b%>-" + "x" * 10_000,
        }
    }
    return _stack("lj", _with_metadata({"m": {"list_join": [",", rep]}}))


def _big_repeat() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": _texts(46), "<%b%>": _texts(46), "<%c%>": ["1", "2"]},
            "template": {"k<%a%>": "<%b%><%c%>" + "y" * 20_000},
        }
    }
    return _stack("rep", _with_metadata({"m": rep}))


def _map_merge() -> bytes:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": _texts(300), "<%b%>": _texts(300)},
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
    each = _texts(1000)
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


def _value(value: object) -> dict[str, object]:
    return {"type": "OS::Heat::Value", "properties": {"value": value}}


def _attr(name: str) -> dict[str, object]:
    return {"get_attr": [name, "value"]}


def _doubling(how: str, n: int = 30) -> bytes:
    """Issue 39's bomb: `n` chained OS::Heat::Values, each doubling the previous one (`how`),
    then a `str_replace` of the last into a server's metadata: a few KB, 2**n once expanded."""
    grow = {
        "list": lambda p: [_attr(p), _attr(p)],
        "text": lambda p: {"list_join": ["", [_attr(p), _attr(p)]]},
        "map": lambda p: {"a": _attr(p), "b": _attr(p)},
        "list_concat": lambda p: {"list_concat": [[_attr(p)], [_attr(p)]]},
        "map_merge": lambda p: {"map_merge": [{"a": _attr(p)}, {"b": _attr(p)}]},
        "map_replace": lambda p: {"map_replace": [{"a": _attr(p), "b": _attr(p)}, {}]},
        "repeat": lambda p: {"repeat": {"for_each": {"%i%": ["1", "2"]}, "template": _attr(p)}},
        "if": lambda p: [{"if": [True, _attr(p), None]}, {"if": [False, None, _attr(p)]}],
        "yaql": lambda p: {"yaql": {"expression": "$.data.v + $.data.v", "data": {"v": _attr(p)}}},
        "replace": lambda p: {"str_replace": {"template": "AA", "params": {"A": _attr(p)}}},
    }[how]
    resources: dict[str, object] = {"v0": _value("abcdefgh")}
    for i in range(1, n + 1):
        resources[f"v{i}"] = _value(grow(f"v{i - 1}"))
    last = {"str_replace": {"template": "<%v%>", "params": {"<%v%>": _attr(f"v{n}")}}}
    resources["web"] = _with_metadata({"m": last})["resources"]["web"]  # type: ignore[index]
    return _stack(f"dbl-{how.replace('_', '-')}", _hot(resources))


def _doubling_output(n: int = 30) -> bytes:
    """The doubling chain read only by an output (no resource uses it)."""
    resources: dict[str, object] = {"v0": _value("abcdefgh")}
    for i in range(1, n + 1):
        resources[f"v{i}"] = _value([_attr(f"v{i - 1}"), _attr(f"v{i - 1}")])
    outputs = {"o": {"value": {"list_join": [",", [_attr(f"v{n}")]]}}}
    return _stack("dbl-out", _hot(resources, outputs=outputs))


def _value_deep(n: int = 1000) -> bytes:
    """Each Value wraps the previous one in a list: a value 1,000 levels deep from a template
    three levels deep (written last-first, so each get_attr finds the other not yet read)."""
    resources: dict[str, object] = {"v0": _value("x")}
    for i in range(1, n):
        resources[f"v{i}"] = _value([_attr(f"v{i - 1}")])
    return _stack("vdeep", _hot(dict(reversed(list(resources.items())))))


def _value_chain(n: int = 999) -> bytes:
    """A chain of `n` Values, each the previous one, written last-first: fine (bounded by the
    thousand resources), and must not exhaust the stack."""
    resources: dict[str, object] = {"v0": _value("x")}
    for i in range(1, n):
        resources[f"v{i}"] = _value(_attr(f"v{i - 1}"))
    resources = dict(reversed(list(resources.items())))
    return _stack("vchain", _hot(resources, outputs={"o": {"value": _attr(f"v{n - 1}")}}))


def _conditions(conditions: dict[str, object], used: str | None, name: str = "conds") -> bytes:
    web: dict[str, object] = {**SERVER, **({"condition": used} if used else {})}
    return _stack(name, _hot({"web": web}, conditions=conditions))


def _condition_chain(n: int = 500) -> bytes:
    """c0 is not c1, c1 not c2, ...: each condition names the next, so they nest `n` deep."""
    conditions: dict[str, object] = {f"c{i}": {"not": f"c{i + 1}"} for i in range(n)}
    conditions[f"c{n}"] = True
    return _conditions(conditions, "c0", "cchain")


def _param_fanout(items: int = 20_000, uses: int = 200) -> bytes:
    """A json parameter of 20,000 items, used 200 times: four million items handed out."""
    params = {"big": {"type": "json", "default": list(range(items))}}
    template = _with_metadata({"m": [{"get_param": "big"}] * uses})
    template["parameters"] = params
    return _stack("pfan", template)


def _file_fanout(chars: int = 1_000_000, uses: int = 40) -> bytes:
    """A 1 MB file given once and read 40 times by get_file (40 MB of text)."""
    template = _with_metadata({"m": {"list_join": ["", [{"get_file": "big.txt"}] * uses]}})
    return _stack("ffan", template, files={"big.txt": "x" * chars})


def _files(n: int) -> bytes:
    files = {f"f{i}.yaml": "" for i in range(n)}
    return _stack(f"files{n}", _hot({"web": SERVER}), files=files)


def _str_split_million() -> bytes:
    """str_split of a 1 MB text of commas: a million items from one call."""
    split = {"str_split": [",", {"get_file": "commas.txt"}]}
    return _stack("split", _with_metadata({"m": split}), files={"commas.txt": "," * 1_000_000})


def _unique_quadratic() -> bytes:
    """list_concat_unique of 60,000 distinct items: 3.6e9 comparisons done naively."""
    rep = {"repeat": {"for_each": {"%i%": [str(i) for i in range(60_000)]}, "template": "%i%"}}
    return _stack("uniq", _with_metadata({"m": {"list_concat_unique": [rep]}}))


def _nested_output_fanout(levels: int = 6, width: int = 20) -> bytes:
    """Nested templates whose output names the inner one's output `width` times: `width **
    levels` parts in the top output once followed (TripleO-style output following)."""
    files: dict[str, str] = {}
    inner_server = {"s": SERVER}
    files["l0.yaml"] = json.dumps(
        _hot(inner_server, outputs={"o": {"value": {"get_attr": ["s", "first_address"]}}})
    )
    for level in range(1, levels + 1):
        out = [{"get_attr": ["in", "o"]}] * width
        files[f"l{level}.yaml"] = json.dumps(
            _hot({"in": {"type": f"l{level - 1}.yaml"}}, outputs={"o": {"value": out}})
        )
    top = _hot(
        {"top": {"type": f"l{levels}.yaml"}}, outputs={"o": {"value": {"get_attr": ["top", "o"]}}}
    )
    return _stack("nofan", top, files=files)


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
        # issue 39: budgets that follow values as they are passed on
        Case("value_doubling_30_str_replace", "/v1/clusters", _doubling("list")),
        *[
            Case(f"value_doubling_30_{how}", "/v1/clusters", _doubling(how))
            for how in (
                "text",
                "map",
                "list_concat",
                "map_merge",
                "map_replace",
                "repeat",
                "if",
                "yaql",
                "replace",
            )
        ],
        Case("value_doubling_30_output", "/v1/clusters", _doubling_output()),
        Case("value_nested_1000_deep", "/v1/clusters", _value_deep()),
        Case("value_chain_999_last_first", "/v1/clusters", _value_chain(), refused=False),
        Case(
            "conditions_cycle",
            "/v1/clusters",
            _conditions({"a": {"not": "b"}, "b": {"not": "a"}}, "a"),
        ),
        Case(
            "conditions_cycle_unused",
            "/v1/clusters",
            _conditions({"a": {"and": ["b", True]}, "b": {"or": ["a", False]}}, None, "cunused"),
        ),
        Case("conditions_self", "/v1/clusters", _conditions({"a": {"not": "a"}}, "a", "cself")),
        Case("conditions_chain_500", "/v1/clusters", _condition_chain()),
        Case("files_50000", "/v1/clusters", _files(50_000)),
        Case("files_2001", "/v1/clusters", _files(2_001)),
        Case("get_param_fanout", "/v1/clusters", _param_fanout()),
        Case("get_file_fanout", "/v1/clusters", _file_fanout()),
        Case("str_split_million", "/v1/clusters", _str_split_million()),
        Case("list_concat_unique_quadratic", "/v1/clusters", _unique_quadratic()),
        Case("nested_output_fanout", "/v1/clusters", _nested_output_fanout()),
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
