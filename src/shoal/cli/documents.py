"""Reading a cluster document from a file (or `-` for stdin) to send it as it is written.

The API parses and validates it; here only the name is read, for `apply` to choose between
create and replace. A HOT template with `-e` environments is sent as Heat's stack-create body,
its nested files included (docs/hot.md).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from shoal.cli.errors import EXIT_INVALID, CliError

MAX_DOCUMENT_BYTES = 2 << 20
"""What the CLI reads of a document or environment, at most: the server's default body limit
(a larger file could not be sent). `-e /dev/zero` once read until MemoryError."""


def read_file(source: str | Path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """At most `limit` bytes of a regular file (or `-`, stdin), else CliError (exit 2).

    Opened without blocking and checked with fstat, so `/dev/zero`, a FIFO or a directory is
    refused at once instead of read without end. (documents/files.py does the same for the readers;
    importing it here would load the whole spec package into every command.)
    """
    if str(source) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
            fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise CliError(f"cannot read {source}: {e.strerror or e}", EXIT_INVALID) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise CliError(f"cannot read {source}: it is not a regular file", EXIT_INVALID)
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(limit + 1)
        except OSError as e:
            raise CliError(f"cannot read {source}: {e.strerror or e}", EXIT_INVALID) from None
        finally:
            os.close(fd)
    if len(data) > limit:
        raise CliError(f"cannot read {source}: it is larger than {limit} bytes", EXIT_INVALID)
    return data


def read_document(source: str) -> tuple[bytes, str]:
    """The document's bytes and a content type guessed from its name."""
    if source == "-":
        return read_file("-"), "application/yaml"
    path = Path(source)
    content = read_file(path)
    kind = "application/json" if path.suffix.lower() == ".json" else "application/yaml"
    return content, kind


def document_name(content: bytes) -> str | None:
    """The cluster's name (native `name`, `vcluster.name`, or a stack-create body's
    `stack_name`), or None if it cannot be read."""
    import yaml

    try:
        data: Any = _safe_load(content)
    except yaml.YAMLError:
        return None
    if isinstance(data, dict) and isinstance(data.get("template"), dict):
        stack = data.get("stack_name")  # a HOT template as a stack-create body: read_template
        return stack if isinstance(stack, str) and stack else None
    if isinstance(data, dict) and isinstance(data.get("document"), dict):
        data = data["document"]  # {document, environment}: see read_request
    if isinstance(data, dict) and isinstance(data.get("vcluster"), dict):
        data = data["vcluster"]
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


NameOption = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="The cluster (Heat's stack name) of a HOT template; default: the template's file "
        "name (overcloud.yaml -> overcloud).",
    ),
]

EnvironmentOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--environment",
        "-e",
        help="Environment file (repeatable; merged in order, later wins): Heat's for a HOT "
        "template; for a Shoal document its parameters and roles (docs/software.md).",
    ),
]


def is_hot_file(source: str) -> bool:
    """True when the file is a Heat template (it has a `heat_template_version` key)."""
    if source == "-":
        return False
    import yaml  # lazily: most commands never read a document

    try:
        data = _safe_load(read_file(source))
    except (CliError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "heat_template_version" in data


def read_template(
    source: str, environments: list[Path] | None, name: str | None = None
) -> tuple[bytes, str] | None:
    """A HOT template and its environments as Heat's stack-create body, files included;
    the stack (cluster) is `name`, or named after the template's file.

    None when `source` is not a template (a Shoal document, see `read_request`).
    """
    if not is_hot_file(source):
        return None
    if source == "-":
        raise CliError("a HOT template with -e must be read from a file, not stdin", EXIT_INVALID)
    for env in environments or []:
        read_file(env)  # a missing, special or huge file is refused here, plainly
    # The reader runs here only to bundle nested files; imported lazily, like yaml.
    from shoal.documents.hot import bundle
    from shoal.model import InvalidDocument
    from shoal.model.catalogs import default_inventory

    try:
        body = bundle(source, list(environments or []), default_inventory(), name=name)
    except InvalidDocument as bad:
        raise CliError(f"cannot read {source}: {bad}", EXIT_INVALID) from None
    return body, "application/json"


def read_request(
    source: str, environments: list[Path] | None, name: str | None = None
) -> tuple[bytes, str]:
    """What `up` and `apply` send: a HOT template as Heat's stack-create body (its stack named
    `name`, or after the file); a Shoal document with environments as
    `{document, environment: [...]}`; else the file as it is."""
    template = read_template(source, environments, name)
    if template is not None:
        return template
    if name is not None:
        raise CliError(
            "--name names a HOT template's cluster; a Shoal document names its own", EXIT_INVALID
        )
    content, kind = read_document(source)
    if not environments:
        return content, kind
    import json

    body = {"document": _tree(content, source), "environment": read_environments(environments)}
    return json.dumps(body).encode(), "application/json"


def read_environments(environments: list[Path]) -> list[Any]:
    """Each environment file parsed (YAML or JSON), in the order given."""
    result = []
    for env in environments:
        result.append(_tree(read_file(env), str(env)))
    return result


def _tree(content: bytes, source: str) -> Any:
    import yaml

    try:
        return _safe_load(content)
    except yaml.YAMLError as e:
        raise CliError(f"cannot read {source}: {e}", EXIT_INVALID) from None


def _safe_load(content: str | bytes) -> Any:
    """YAML as `yaml.safe_load` reads it, within the server's bounds: an alias bomb (a billion
    laughs) or a recursive alias is a `yaml.YAMLError`, not a CLI that never returns."""
    from shoal.documents.syntax import safe_load  # lazily: most commands never read a document

    return safe_load(content)


def same_document(content: bytes, stored: Any) -> bool:
    """Whether `content` says exactly what the cluster's stored (native) document says.

    Only an exact match counts, so `apply` of an unchanged file records no action; any
    difference, even one the server would find meaningless, is left to the server to judge.
    """
    import json

    import yaml

    try:
        data: Any = _safe_load(content)
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict) or not isinstance(stored, dict):
        return False
    try:
        return bool(json.loads(json.dumps(data)) == stored)
    except (TypeError, ValueError):
        return False
