"""Reading a cluster document from a file (or `-` for stdin) to send it as it is written.

The API parses and validates it; here only the name is read, for `apply` to choose between
create and replace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from shoal.cli.errors import EXIT_INVALID, CliError


def read_document(source: str) -> tuple[bytes, str]:
    """The document's bytes and a content type guessed from its name."""
    if source == "-":
        return sys.stdin.buffer.read(), "application/yaml"
    path = Path(source)
    try:
        content = path.read_bytes()
    except OSError as e:
        raise CliError(f"cannot read {source}: {e.strerror or e}", EXIT_INVALID) from None
    kind = "application/json" if path.suffix.lower() == ".json" else "application/yaml"
    return content, kind


def document_name(content: bytes) -> str | None:
    """The cluster's name (native `name` or `vcluster.name`), or None if it cannot be read."""
    import yaml

    try:
        data: Any = yaml.safe_load(content)
    except yaml.YAMLError:
        return None
    if isinstance(data, dict) and isinstance(data.get("vcluster"), dict):
        data = data["vcluster"]
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


def same_document(content: bytes, stored: Any) -> bool:
    """Whether `content` says exactly what the cluster's stored (native) document says.

    Only an exact match counts, so `apply` of an unchanged file records no action; any
    difference, even one the server would find meaningless, is left to the server to judge.
    """
    import json

    import yaml

    try:
        data: Any = yaml.safe_load(content)
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict) or not isinstance(stored, dict):
        return False
    try:
        return bool(json.loads(json.dumps(data)) == stored)
    except (TypeError, ValueError):
        return False
