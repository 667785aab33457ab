"""The dashboard shows a cluster's networking (issue 26): its network, which rules allow what
from which servers now, and the load balancer with its members' health as HAProxy sees it
(a real local cluster: nftables and HAProxy)."""

from __future__ import annotations

import json
from pathlib import Path

from selenium.webdriver.remote.webdriver import WebDriver

from tests.networks.support import sweep
from tests.support.server import wait_ok
from tests.ui.browser import find, go, screenshot, sign_in, until, visible
from tests.ui.conftest import UiServer

TINY = {"type": "server", "flavor": "m1.tiny", "image": "cirros"}


def test_cluster_page_shows_networks_rules_and_balancer_health(
    ui_server: UiServer, browser: WebDriver, tmp_path: Path
) -> None:
    try:
        _check(ui_server, browser)
    finally:
        sweep(tmp_path)


def _check(ui_server: UiServer, browser: WebDriver) -> None:
    server = ui_server(provider="local")
    node_port = int(json.loads(server.env["SHOAL_PROVIDER_OPTIONS"])["port"])
    document = {
        "name": "netview",
        "node_groups": [
            {"name": "web", "profile": TINY, "count": 2},
            {"name": "db", "profile": TINY, "count": 1},
        ],
        "networks": [{"name": "app", "cidr": "10.60.0.0/24", "router": "public"}],
        "security_groups": [{"name": "db", "rules": [{"ports": 5432, "from": {"member": "web"}}]}],
        "ports": [{"server": "db", "network": "app", "security_groups": ["db"]}],
        "load_balancers": [
            {
                "name": "front",
                "network": "app",
                "listeners": [{"port": 18080, "protocol": "HTTP", "pool": "web"}],
                "pools": [
                    {
                        "name": "web",
                        "members": "web",
                        "port": node_port,
                        "protocol": "HTTP",
                        "health": {"type": "HTTP", "delay": 1, "timeout": 1, "url_path": "/health"},
                    }
                ],
            }
        ],
    }
    with server.client() as c:
        r = c.post("/v1/clusters", json=document)
        wait_ok(c, r)
        cid = r.json()["cluster"]["id"]
    sign_in(browser, server.url, server.token)
    go(browser, f"#/cluster/{cid}")
    visible(browser, "#h-nets")
    assert "10.60.0.0/24" in visible(browser, "tr[data-network='app']").text
    rules = visible(browser, "section[data-sg='db']").text
    assert "Protects: netview-db-1" in rules or "Protects: db-1" in rules
    assert "tcp 5432 from members of web" in rules and "web-1" in rules and "web-2" in rules

    def all_up() -> bool:
        cells = find(browser, "section[data-lb='front'] tr[data-member] .health")
        return len(cells) == 2 and all(c.text == "UP" for c in cells)

    until(browser, all_up, "both members UP in the balancer")
    screenshot(browser, "networks")
