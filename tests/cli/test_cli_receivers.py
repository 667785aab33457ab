"""`shoal receiver create|list|delete` and `shoal webhook trigger`, embedded and remote."""

from __future__ import annotations

from pathlib import Path

from tests.cli.support import Shoal, explain
from tests.cli.test_cli_remote import Server, client, server  # noqa: F401 (fixture)
from tests.support.server import eventually

WEB = """\
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    max: 5
    scaling: {number: 2}
"""


def test_receiver_lifecycle_embedded(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))
    made = shoal.ok("receiver", "create", "--cluster", "shop", "--action", "scale_out", "grow")
    url = made.stdout.strip()
    # the background Shoal's own address: a monitoring system can call it as it is
    assert url.startswith("http://127.0.0.1:") and "/v1/webhooks/" in url, explain(made)
    assert "?token=" in url, explain(made)

    fired = shoal.ok("webhook", "trigger", url)
    assert "cluster shop: ACTIVE" in fired.stdout, explain(fired)
    assert len(shoal.json("describe", "cluster", "shop")["nodes"]) == 4

    cooling = shoal("webhook", "trigger", url)
    assert cooling.returncode == 2, explain(cooling)
    assert "cooldown" in cooling.stderr

    listed = shoal.ok("receiver", "list").stdout
    assert "grow" in listed and "scale_out" in listed and "token" not in listed
    assert shoal.json("receiver", "list")["receivers"][0]["triggered_at"]

    shoal.ok("receiver", "delete", "grow")
    gone = shoal("webhook", "trigger", url)
    assert gone.returncode == 2, explain(gone)
    assert "not found" in gone.stderr


def test_an_absolute_webhook_url_needs_no_token(server: Server, tmp_path: Path) -> None:  # noqa: F811
    admin = client(tmp_path, server.url, server.token)
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    admin.ok("up", str(doc))
    made = admin.json(
        "receiver", "create", "--cluster", "shop", "--action", "scale_in", "--count", "1", "shrink"
    )
    url = made["receiver"]["webhook_url"]
    assert url.startswith(server.url + "/v1/webhooks/")

    anyone = Shoal(tmp_path / "nobody", provider="sim")
    (tmp_path / "nobody").mkdir()
    fired = anyone.ok("webhook", "trigger", url)
    assert "accepted: CLUSTER_SCALE_IN" in fired.stdout, explain(fired)
    eventually(lambda: len(admin.json("describe", "cluster", "shop")["nodes"]) == 1, timeout_s=60)
