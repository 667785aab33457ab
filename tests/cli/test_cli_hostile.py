"""The CLI bounded like the API (issue 29): special or huge files are refused with exit 2, and
user text holding Rich markup (`[/]`, `[bold]`) prints literally instead of crashing the
error printer. `shoal plan` runs offline, so no server is started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shoal.cli.documents import MAX_DOCUMENT_BYTES, document_name, same_document
from tests.cli.support import Shoal, explain

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import hostile_cases

NATIVE = """\
name: c
profiles:
  p: {type: server, flavor: m1.tiny, image: cirros}
node_groups:
  - {name: web, profile: p, count: 1}
"""

HOT_GET_FILE = """\
heat_template_version: 2016-10-14
resources:
  web:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, user_data: {get_file: /dev/zero}}
"""


@pytest.mark.parametrize(
    ("doc", "args"),
    [
        ("native.yaml", ["-e", "/dev/zero"]),
        ("hot.yaml", []),  # get_file: /dev/zero
        ("big.yaml", []),
    ],
)
def test_special_and_huge_files_are_refused(
    shoal: Shoal, tmp_path: Path, doc: str, args: list[str]
) -> None:
    (tmp_path / "native.yaml").write_text(NATIVE)
    (tmp_path / "hot.yaml").write_text(HOT_GET_FILE)
    (tmp_path / "big.yaml").write_text("x: " + "y" * (MAX_DOCUMENT_BYTES + 10) + "\n")
    source = doc if doc.startswith("/") else str(tmp_path / doc)
    done = shoal("plan", source, *args)
    assert done.returncode == 2, explain(done)
    assert "Traceback" not in done.stderr
    assert (
        "not a regular file" in done.stderr
        or "larger than" in done.stderr
        or ("/dev/zero" in done.stderr)
    ), explain(done)


def test_markup_in_user_text_prints_literally(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "markup.yaml"
    doc.write_text(NATIVE.replace("name: c", 'name: "a[/]b[bold]"').replace("m1.tiny", '"[/]m1"'))
    done = shoal("plan", str(doc))
    assert done.returncode == 2, explain(done)
    assert "Traceback" not in done.stderr and "MarkupError" not in done.stderr
    assert "a[/]b[bold]" in done.stderr
    assert "'[/]m1'" in done.stderr


def test_the_cli_reads_yaml_within_the_servers_bounds() -> None:
    bomb = "name: x\n" + hostile_cases.laughs()
    assert document_name(bomb.encode()) is None
    assert not same_document(bomb.encode(), {"name": "x"})
    assert document_name(b"name: x\na: &a [1]\nb: *a\n") == "x"
