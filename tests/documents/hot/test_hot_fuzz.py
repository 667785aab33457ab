"""Whatever a template holds, the reader answers with problems, never a traceback."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shoal.documents.hot import read_body
from shoal.documents.hot.versions import ALL_FUNCTIONS, KNOWN_NAMES
from shoal.model.catalogs import default_inventory

_KEYS = [
    *sorted(ALL_FUNCTIONS),
    "template", "params", "for_each", "type", "properties", "value", "x", "count",
    "resource_def", "flavor", "image", "policies", "group", "scheduler_hints",
]  # fmt: skip
_TYPES = [
    "OS::Nova::Server", "OS::Cinder::Volume", "OS::Cinder::VolumeAttachment",
    "OS::Nova::ServerGroup", "OS::Heat::ResourceGroup", "OS::Heat::Value", "OS::Heat::None",
    "OS::Heat::SoftwareDeployment", "OS::Senlin::Cluster", "nested.yaml", "X::Y",
]  # fmt: skip
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.sampled_from(["a", "r", "m1.tiny", "cirros", "%index%", ""]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3)
    ),
    max_leaves=12,
)
_resource = st.fixed_dictionaries(
    {"type": st.sampled_from(_TYPES)},
    optional={"properties": _values, "depends_on": _values, "condition": _values},
)


@settings(max_examples=300, deadline=None)
@given(
    version=st.sampled_from([*KNOWN_NAMES, "1999-01-01"]),
    resources=st.dictionaries(st.sampled_from(["r", "s", "v"]), _resource, max_size=3),
    outputs=st.dictionaries(st.sampled_from(["o"]), st.fixed_dictionaries({"value": _values})),
    params=st.dictionaries(
        st.sampled_from(["a", "b"]),
        st.fixed_dictionaries(
            {"type": st.sampled_from(["string", "json", "number"])}, optional={"default": _values}
        ),
    ),
    conditions=st.dictionaries(st.sampled_from(["c"]), _values, max_size=1),
)
def test_random_templates_never_raise(
    version: str,
    resources: dict[str, object],
    outputs: dict[str, object],
    params: dict[str, object],
    conditions: dict[str, object],
) -> None:
    body = {
        "template": {
            "heat_template_version": version,
            "parameters": params,
            "conditions": conditions,
            "resources": resources,
            "outputs": outputs,
        },
        "files": {
            "nested.yaml": "heat_template_version: 2016-10-14\nparameters: {x: {type: string}}\n"
        },
    }
    result = read_body(body, default_inventory())
    assert result.spec is not None or result.problems


def test_work_is_bounded_nested_repeats() -> None:
    inner = {
        "repeat": {
            "for_each": {"%j%": [str(n) for n in range(300)]},
            "template": {"list_join": ["-", ["%i%", "%j%"]]},
        }
    }
    outer = {
        "repeat": {
            "for_each": {"%i%": [str(n) for n in range(300)]},
            "template": {
                "repeat": {"for_each": {"%k%": [str(n) for n in range(300)]}, "template": inner}
            },
        }
    }
    body = {"heat_template_version": "2016-10-14", "outputs": {"o": {"value": outer}}}
    problems = read_body(body, default_inventory()).problems
    bounded = ("evaluation steps", "would make more than")
    assert [p.message for p in problems if any(b in p.message for b in bounded)]
    assert len(problems) < 5


def test_nested_template_that_nests_itself_stops_at_the_depth_limit() -> None:
    loop = "heat_template_version: 2016-10-14\nresources:\n  again: {type: loop.yaml}\n"
    body = {
        "template": {
            "heat_template_version": "2016-10-14",
            "resources": {"r": {"type": "loop.yaml"}},
        },
        "files": {"loop.yaml": loop},
    }
    problems = read_body(body, default_inventory()).problems
    assert any("nest deeper than" in p.message for p in problems)


def test_resources_in_all_nested_templates_are_bounded() -> None:
    wide = "heat_template_version: 2016-10-14\nresources:\n" + "".join(
        f"  n{i}: {{type: wide{1 if i < 150 else 2}.yaml}}\n" for i in range(300)
    )
    leaf = "heat_template_version: 2016-10-14\nresources:\n" + "".join(
        f"  v{i}: {{type: OS::Heat::None}}\n" for i in range(300)
    )
    body = {
        "template": {
            "heat_template_version": "2016-10-14",
            "resources": {"r": {"type": "wide.yaml"}},
        },
        "files": {"wide.yaml": wide, "wide1.yaml": leaf, "wide2.yaml": leaf},
    }
    problems = read_body(body, default_inventory()).problems
    assert any("resources in all" in p.message for p in problems)
