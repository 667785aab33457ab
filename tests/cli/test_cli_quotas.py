"""`shoal project quota show|set` and `shoal plan` bounds (issue 9, point 1): quotas set and
read through the CLI; a billion replicas is exit 2 naming the field, and a cluster larger than
the whole inventory is exit 1, both before any per-node work."""

from __future__ import annotations

from pathlib import Path

from tests.cli.support import Shoal, explain

BIG = """
name: big
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: %d
"""


def test_quota_set_and_show(shoal: Shoal) -> None:
    shoal.json("project", "create", "acme")
    shown = shoal.json("project", "quota", "set", "acme", "nodes=5", "vcpus=-1")
    assert shown["quotas"]["nodes"] == {"limit": 5, "in_use": 0, "default": False}
    again = shoal.json("project", "quota", "show", "acme")
    assert again["quotas"]["vcpus"]["limit"] == -1
    assert again["quotas"]["clusters"]["default"] is True
    bad = shoal("project", "quota", "set", "acme", "nodes=many")
    assert bad.returncode == 2, explain(bad)
    unknown = shoal("project", "quota", "set", "acme", "gpus=1")
    assert unknown.returncode == 2, explain(unknown)
    assert "/quotas/gpus" in unknown.stderr


def test_plan_refuses_huge_counts_before_placing(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "big.yaml"
    doc.write_text(BIG % 10**9)
    huge = shoal("plan", str(doc))
    assert huge.returncode == 2, explain(huge)
    assert "/node_groups/0/count" in huge.stderr
    doc.write_text(BIG % 5000)
    too_big = shoal("plan", str(doc))
    assert too_big.returncode == 1, explain(too_big)
    assert "whole inventory" in too_big.stderr
