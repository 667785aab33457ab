"""Senlin's `os.heat.stack` profiles, read by Shoal's HOT reader instead of handed to Heat.

Senlin checked such a profile by asking Heat to preview the stack, and made one Heat stack per
node. Shoal reads the template (with the profile's `environment`, `files` and `parameters`) with
`shoal.documents.hot`, so a template problem is a 400 at profile create with the reader's messages,
each at a pointer under `/spec/properties`. A node is what the template declares, in Shoal's
model (docs/senlin.md, "Heat stack profiles"):

- a template that makes exactly one server, and no volume or group, makes a node that *is* that
  server: placed, created and deleted by the engine and provider like a Nova profile's node;
- a template that makes no server and no volume (only Heat's own resources, such as
  `OS::Heat::RandomString`) makes a node with nothing to place: a node row of kind `stack`,
  which no provider ever sees;
- anything else (several servers, volumes, groups, software deployments, which Shoal runs only
  for its own clusters) is refused when a node or cluster is built from the profile, saying
  what the template makes.

`template_url` is never fetched (Shoal reads no URL on a request's behalf): a 400 says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from shoal.documents.export import profile_document
from shoal.documents.hot.functions import plain
from shoal.documents.hot.load import read_body
from shoal.documents.syntax import parse
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument, Problem
from shoal.model.profile import ServerProfile
from shoal.service.senlin.errors import InvalidSpec
from shoal.service.senlin.shapes import JsonObject

PROPS = "/spec/properties"
MAX_TIMEOUT_MIN = 10_000
"""Minutes; Heat's own stack timeout is a number of minutes and Shoal bounds every number."""


@dataclass(frozen=True, slots=True)
class StackResource:
    """One resource of the template, as a node's `details` show it."""

    name: str
    type: str


@dataclass(frozen=True, slots=True)
class StackReading:
    """What a checked `os.heat.stack` profile makes."""

    server: ServerProfile | None
    """The template's one server, when it makes exactly one, nothing else to place and no
    software deployment."""
    places: int
    """How many servers and volumes (group members counted once per replica) and software
    deployments it makes: 0 is a node with nothing to place."""
    makes: str
    """What it makes that Shoal places, in words (for refusals)."""
    resources: tuple[StackResource, ...]

    @property
    def buildable(self) -> bool:
        return self.server is not None or self.places == 0

    def native(self) -> JsonObject:
        """The native server profile a node group of this profile is made from."""
        if self.server is None:
            raise InvalidSpec(
                "A cluster of an os.heat.stack profile is built from a template that makes "
                "exactly one server (and no volume, group or software deployment); this "
                f"template makes {self.makes}."
            )
        return profile_document(self.server)


def _where(path: str) -> str:
    # The reader names the body form's keys (`/template/...`, `/environment/...`,
    # `/files/...`, `/parameters/...`); in a Senlin spec they sit under `properties`.
    return PROPS + path


def _problems(problems: list[Problem]) -> InvalidSpec:
    details = [{"path": _where(p.path), "message": p.message} for p in problems]
    text = "; ".join(f"{d['path']}: {d['message']}" for d in details)
    return InvalidSpec(f"Failed in validating template: {text}", details)


def _check_types(props: JsonObject) -> list[Problem]:
    wrong: list[Problem] = []

    def need(key: str, ok: bool, what: str) -> None:
        if key in props and props[key] is not None and not ok:
            wrong.append(Problem(f"/{key}", f"'{key}' must be {what}"))

    need("template", isinstance(props.get("template"), dict | str), "a map or the template's text")
    need("environment", isinstance(props.get("environment"), dict | str), "a map or YAML text")
    need("parameters", isinstance(props.get("parameters"), dict), "a map")
    need("context", isinstance(props.get("context"), dict), "a map")
    need("disable_rollback", isinstance(props.get("disable_rollback"), bool), "a boolean")
    files = props.get("files")
    need(
        "files",
        isinstance(files, dict) and all(isinstance(v, str) for v in files.values()),
        "a map of file names to their text",
    )
    timeout = props.get("timeout")
    need(
        "timeout",
        isinstance(timeout, int)
        and not isinstance(timeout, bool)
        and 0 <= timeout <= MAX_TIMEOUT_MIN,
        f"an integer from 0 to {MAX_TIMEOUT_MIN} (minutes)",
    )
    return wrong


def _template_map(template: object) -> JsonObject | None:
    if isinstance(template, str):
        try:
            template = plain(parse(template, "template.yaml"))
        except InvalidDocument:
            return None
    return template if isinstance(template, dict) else None


def resources_of(props: JsonObject) -> tuple[StackResource, ...]:
    """The template's resources by name and type (as written; for views, never raises)."""
    template = _template_map(props.get("template"))
    section = template.get("resources") if template else None
    if not isinstance(section, dict):
        return ()
    return tuple(
        StackResource(str(name), str(body.get("type", "")) if isinstance(body, dict) else "")
        for name, body in section.items()
    )


def read_stack(props: JsonObject, inventory: Inventory) -> StackReading:
    """Check an `os.heat.stack` profile's properties with the HOT reader; InvalidSpec (400)
    with every problem, each at its pointer under `/spec/properties`."""
    if props.get("template_url"):
        raise InvalidSpec(
            "Shoal does not fetch 'template_url': give the template itself in 'template' "
            "(a map, or its text), with any nested files in 'files'.",
            [{"path": PROPS + "/template_url", "message": "not fetched; use 'template'"}],
        )
    if props.get("template") in (None, "", {}):
        raise InvalidSpec(
            "Both template and template_url are not specified for the os.heat.stack profile.",
            [{"path": PROPS + "/template", "message": "required"}],
        )
    wrong = _check_types(props)
    if wrong:
        raise _problems(wrong)
    body: JsonObject = {"template": props["template"]}
    for key in ("environment", "files", "parameters"):
        if props.get(key) is not None:
            body[key] = props[key]
    result = read_body(body, inventory)
    if result.spec is None:
        raise _problems(result.problems or [Problem("/template", "the template makes nothing")])
    spec = result.spec
    servers = [i for i in spec.instances if isinstance(i.profile, ServerProfile)]
    volumes = len(spec.instances) - len(servers)
    in_groups = sum(g.count * len(g.parts) for g in spec.node_groups)
    places = len(spec.instances) + in_groups
    deployments = len(spec.software.deployments)
    alone = len(servers) == 1 and places == 1 and not deployments
    one = servers[0].profile if alone else None
    assert one is None or isinstance(one, ServerProfile)
    words = [
        f"{len(servers)} server(s)" if servers else "",
        f"{volumes} volume(s)" if volumes else "",
        f"{len(spec.node_groups)} group(s) of {in_groups} node(s)" if spec.node_groups else "",
        f"{deployments} software deployment(s)" if deployments else "",
    ]
    makes = ", ".join(w for w in words if w) or "nothing to place"
    return StackReading(one, places + deployments, makes, resources_of(props))


def stack_details(props: JsonObject) -> JsonObject:
    """What a node of an `os.heat.stack` profile shows of its stack in `details` (besides its
    status)."""
    template = _template_map(props.get("template")) or {}
    given = props.get("parameters")
    return {
        "template_description": str(template.get("description", "")),
        "parameters": dict(given) if isinstance(given, dict) else {},
        "resources": [
            {"resource_name": r.name, "resource_type": r.type} for r in resources_of(props)
        ],
    }
