"""The dashboard's Time page (issue 27), in a real Chromium against a real `shoal server`:
after a create, a host failure and the repair, it draws the actions as bars with their
durations, nodes by status over time, and the repair."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.remote.webdriver import WebDriver

from tests.support.server import eventually, wait_ok
from tests.ui.browser import find, go, screenshot, sign_in, until
from tests.ui.conftest import UiServer, browser, ui_server

__all__ = ["browser", "ui_server"]  # fixtures, imported for pytest
DOC = """
name: timed
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
"""


def test_the_time_page_draws_actions_nodes_and_repairs(
    ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(provider="sim", provider_options={"state_path": "memory"})
    with server.client() as c:
        wait_ok(c, c.post("/v1/clusters", content=DOC))

        def nodes() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = c.get("/v1/clusters/timed", params={"nodes": 10}).json()[
                "cluster"
            ]["nodes"]
            return found

        lost = next(n["host"] for n in nodes() if n["name"] == "web-1")
        assert c.post(f"/v1/hosts/{lost}/fail").status_code == 200
        eventually(
            lambda: all(n["host"] != lost and n["status"] == "ACTIVE" for n in nodes()),
            timeout_s=120,
            every_s=0.3,
        )
        eventually(
            lambda: any(
                a["action"] == "CLUSTER_RECOVER" and a["status"] == "SUCCEEDED"
                for a in c.get("/v1/actions").json()["actions"]
            ),
            timeout_s=60,
        )
    sign_in(browser, server.url, server.token)
    go(browser, "#/time")
    bars = until(
        browser,
        lambda: [
            b.get_attribute("data-status")
            for b in find(browser, "#time-actions g.bar")
            if "CLUSTER_RECOVER" in b.text
        ],
        "the repair's bar",
    )
    assert bars == ["SUCCEEDED"]
    labels = [b.text for b in find(browser, "#time-actions g.bar")]
    assert any(t.startswith("CLUSTER_CREATE") and " s SUCCEEDED" in t for t in labels), labels
    statuses = {p.get_attribute("data-status") for p in find(browser, "#time-nodes path.series")}
    assert {"ACTIVE", "CREATING"} <= statuses, statuses
    assert find(browser, "#time-nodes g.repair")
    repairs = [li.text for li in find(browser, "#time-repairs li[data-repair]")]
    assert repairs and "repairing web-1" in repairs[0], repairs
    screenshot(browser, "time")
