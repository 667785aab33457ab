"""The dashboard in a real headless Chromium against a real `shoal server` process.

Each test signs in with a token (typed, then Enter), uses the pages as a person would, and
checks what the page shows against what the /v1 API says. The main pages' screenshots in
docs/ui/ are written here, so they show what the tests saw. Waits are bounded; nothing asserts
on time.
"""

from __future__ import annotations

from typing import Any, TypeVar

import httpx
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from tests.support.polling import eventually
from tests.support.server import REPO, wait_ok
from tests.ui.browser import (
    click,
    console_errors,
    find,
    go,
    host_of,
    screenshot,
    sign_in,
    until,
    visible,
)
from tests.ui.conftest import UiServer
from tests.ui.docs import BROKEN, DEMO, TOO_SPREAD, one_group, text, yaml_text

EXAMPLES = REPO / "examples"
T = TypeVar("T")


def api_nodes(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster": cluster})
    assert r.status_code == 200, r.text
    nodes: list[dict[str, Any]] = r.json()["nodes"]
    return nodes


def chips(driver: WebDriver, status: str | None = None) -> list[dict[str, str]]:
    """The node chips the topology draws: name, cluster, status, host."""
    found: list[dict[str, str]] = driver.execute_script(
        "return [...document.querySelectorAll('#topo li.node')].map(n => ({name: n.dataset.node,"
        " cluster: n.dataset.cluster, status: n.dataset.status,"
        " host: n.closest('li.host')?.dataset.host ?? ''}));"
    )
    return [c for c in found if status is None or c["status"] == status]


def _all_ready(replicas: list[dict[str, Any]], count: int) -> list[dict[str, Any]] | None:
    return replicas if len(replicas) == count and all(r["ready"] for r in replicas) else None


def plan(driver: WebDriver, document: str) -> None:
    go(driver, "#/plan")
    area = visible(driver, "#plan-doc")
    area.clear()
    area.send_keys(document)
    click(driver, "#plan-preview")


def test_plan_apply_see_nodes_on_their_hosts_scale_and_fail_a_host(
    ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(provider="local")
    client = server.client()
    sign_in(browser, server.url, server.token)

    # Plan before apply: every node drawn on a host, the rules held, nothing created yet.
    plan(browser, yaml_text(DEMO))
    ok = visible(browser, "#plan-ok", "the plan's placement")
    assert "ui-demo can be placed" in ok.text
    planned = until(browser, lambda: find(browser, "#plan-topo li.node.planned"), "planned nodes")
    assert len(planned) == 5
    assert all("PLANNED" in p.text for p in planned)
    assert client.get("/v1/clusters").json()["clusters"] == []
    screenshot(browser, "plan")
    click(browser, "#plan-apply")
    visible(browser, "#plan-applied", "the apply's acceptance")
    cluster = client.get("/v1/clusters").json()["clusters"][0]
    assert cluster["name"] == "ui-demo"

    # The topology fills in as the nodes come up, through the event stream, with no reload.
    go(browser, f"#/topology?cluster={cluster['id']}")
    visible(browser, "#topo .summary")
    browser.execute_script("window.__sameDocument = true")
    until(browser, lambda: len(chips(browser, "ACTIVE")) == 5, "five ACTIVE nodes")
    assert browser.execute_script("return window.__sameDocument") is True
    nodes = api_nodes(client, cluster["id"])
    assert {(n["name"], n["host"]) for n in nodes} == {
        (c["name"], c["host"]) for c in chips(browser)
    }
    held = {
        r.get_attribute("data-grouping"): r.get_attribute("data-ok")
        for r in find(browser, "table.groupings tr[data-grouping]")
    }
    assert held == {"web-apart": "true", "cache-pair": "true"}
    # Highlighting a grouping marks its members (and only them), operable by keyboard.
    button = find(browser, "tr[data-grouping='cache-pair'] button.hl-btn")[0]
    browser.execute_script("arguments[0].focus()", button)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert button.get_attribute("aria-pressed") == "true"
    assert sorted(e.get_attribute("data-node") for e in find(browser, "#topo li.node.hl")) == [
        "cache-1",
        "cache-2",
    ]
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    screenshot(browser, "topology")

    # The cluster page: groups with policies, nodes with address, host and health.
    go(browser, f"#/cluster/{cluster['id']}")
    visible(browser, "#nodes-table")
    rows = {
        r.get_attribute("data-node"): r.text for r in find(browser, "#nodes-table tr[data-node]")
    }
    for n in nodes:
        assert n["address"] and n["address"] in rows[n["name"]]
        assert n["host"] in rows[n["name"]] and "ACTIVE" in rows[n["name"]]
    # Scale web to 4: the preview names the new node and its host; then apply it.
    field = visible(browser, "#scale-web")
    field.clear()
    field.send_keys("4")
    click(browser, "form.scale[data-group='web'] button[name='preview']")
    preview = visible(browser, "form.scale[data-group='web'] .preview", "the scale preview")
    assert "create web-4 on" in preview.text
    screenshot(browser, "cluster")
    click(browser, "form.scale[data-group='web'] button[name='apply']")
    visible(browser, "form.scale[data-group='web'] [role='status'] a", "the resize accepted")

    # Live: the actions with their progress, and the events as they came.
    go(browser, "#/live")
    until(
        browser,
        lambda: [
            r
            for r in find(browser, "#actions-table tr[data-status='SUCCEEDED']")
            if "CLUSTER_RESIZE" in r.text and "1/1 steps" in r.text
        ],
        "the resize done, with its progress",
    )
    create_row = next(r for r in find(browser, "#actions-table tr") if "CLUSTER_CREATE" in r.text)
    assert "5/5 steps" in create_row.text
    assert len(find(browser, "#events li")) > 5
    screenshot(browser, "live")

    # Fail the host the cache pair shares: it shows FAILED and empty, and the pair comes back
    # together on another host.
    go(browser, f"#/topology?cluster={cluster['id']}")
    until(browser, lambda: len(chips(browser, "ACTIVE")) == 6, "six ACTIVE nodes")
    lost = host_of(browser, "ui-demo", "cache-1")
    assert lost and lost == host_of(browser, "ui-demo", "cache-2")
    click(browser, f"button[data-fail='{lost}']")
    until(
        browser,
        lambda: find(browser, f"li.host[data-host='{lost}'][data-failed='true']"),
        "the host shown FAILED",
    )

    def moved() -> bool:
        now = {c["name"]: c for c in chips(browser)}
        pair = [now[n] for n in ("cache-1", "cache-2") if n in now]
        return (
            len(pair) == 2
            and all(c["status"] == "ACTIVE" and c["host"] != lost for c in pair)
            and pair[0]["host"] == pair[1]["host"]
        )

    until(browser, moved, "the cache pair ACTIVE together on another host")
    # The replacements keep the names, so the old pair may still be drawn on the lost host for
    # a redraw or two after the new one is ACTIVE (its delete's events come after): wait for it.
    # Its text read in the same look (a redraw makes a found element stale).
    card = until(
        browser,
        lambda: [c.text for c in find(browser, f"li.host[data-host='{lost}'][data-count='0']")],
        "the failed host drawn empty",
    )[0]
    assert "FAILED" in card and "empty" in card
    after = {n["name"]: n["host"] for n in api_nodes(client, cluster["id"])}
    assert after["cache-1"] == after["cache-2"] != lost
    screenshot(browser, "host-failed")
    click(browser, f"button[data-recover='{lost}']")
    until(
        browser,
        lambda: find(browser, f"li.host[data-host='{lost}'][data-failed='false']"),
        "the host recovered",
    )
    assert not console_errors(browser), console_errors(browser)


def test_plan_preview_reads_the_reasons_it_cannot_be_placed(
    ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(provider="sim", provider_options={"state_path": "memory"})
    sign_in(browser, server.url, server.token)
    plan(browser, yaml_text(TOO_SPREAD))
    box = visible(browser, "#plan-error [role='alert']", "the reasons")
    assert box.get_attribute("data-code") == "unplaceable"
    assert "It cannot be placed" in box.text
    reasons = [li.text for li in find(box, "ul.reasons li")]
    api_error = server.client().post("/v1/clusters", content=text(TOO_SPREAD)).json()["error"]
    assert reasons == [d["message"] for d in api_error["details"]] and reasons
    assert visible(browser, "#plan-apply").get_attribute("disabled") is not None
    screenshot(browser, "plan-infeasible")
    # A broken document: every problem, with where it is.
    plan(browser, text(BROKEN))
    box = visible(browser, "#plan-error [role='alert'][data-code='invalid_document']")
    assert "The document has problems" in box.text
    assert "/node_groups/0/count" in box.text
    assert len(find(box, "ul.reasons li")) >= 2
    # Upload a file instead of pasting: the example database pair fits.
    go(browser, "#/plan")
    visible(browser, "#plan-file").send_keys(str(EXAMPLES / "db-pair.yaml"))
    until(
        browser,
        lambda: "db-pair" in visible(browser, "#plan-doc").get_attribute("value"),
        "the file's text in the editor",
    )
    click(browser, "#plan-preview")
    ok = visible(browser, "#plan-ok", "the uploaded document's placement")
    assert "db-pair can be placed" in ok.text
    # The drawing follows the answer: wait for it as the first plan test does.
    until(
        browser,
        lambda: len(find(browser, "#plan-topo li.node.planned")) == 4,  # 2 servers, 2 volumes
        "the uploaded document's four planned nodes",
    )


def test_a_tenant_sees_only_its_own_clusters(ui_server: UiServer, browser: WebDriver) -> None:
    server = ui_server(provider="sim", provider_options={"state_path": "memory"})
    admin = server.client()
    tokens = {}
    for name in ("team-a", "team-b"):
        r = admin.post("/v1/projects", json={"name": name})
        assert r.status_code == 201, r.text
        tokens[name] = r.json()["token"]
    ids = {}
    for team, cluster in (("team-a", "a-shop"), ("team-b", "b-secret")):
        with server.client(tokens[team]) as c:
            r = c.post("/v1/clusters", content=text(one_group(cluster, 2)))
            wait_ok(c, r)
            ids[cluster] = r.json()["cluster"]["id"]

    sign_in(browser, server.url, tokens["team-a"])
    assert visible(browser, "#who").text == "tenant"
    until(browser, lambda: len(chips(browser, "ACTIVE")) == 2, "team-a's two nodes")
    assert {c["cluster"] for c in chips(browser)} == {"a-shop"}
    assert not find(browser, "button[data-fail]"), "a tenant gets no host drills"
    assert not find(browser, "meter"), "a tenant sees no host capacity"
    assert "b-secret" not in browser.page_source
    screenshot(browser, "tenant")
    go(browser, "#/clusters")
    until(browser, lambda: find(browser, "tr[data-cluster]"), "the cluster list")
    assert [r.get_attribute("data-cluster") for r in find(browser, "tr[data-cluster]")] == [
        "a-shop"
    ]
    go(browser, "#/live")
    visible(browser, "#events li")
    assert "b-secret" not in browser.page_source
    # Another project's cluster by its id: not found, as the API says.
    go(browser, f"#/cluster/{ids['b-secret']}")
    box = visible(browser, "[role='alert'][data-code='not_found']")
    assert "b-secret" not in box.text

    # Keyboard: a page opens with focus on its heading; Tab goes on to its controls, and
    # Shift+Tab back through the navigation, where Enter opens a page.
    go(browser, "#/topology")
    visible(browser, "#topo .summary")
    until(browser, lambda: browser.switch_to.active_element.tag_name == "h1", "focus on the h1")
    ActionChains(browser).send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "topo-cluster"
    ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "logout"
    ActionChains(browser).send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("data-page") == "time"
    ActionChains(browser).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert browser.switch_to.active_element.get_attribute("data-page") == "plan"
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    visible(browser, "#plan-doc", "the plan page, reached by keyboard")


def test_crowded_hosts_are_drawn_as_counts_until_opened(
    ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(
        provider="sim", provider_options={"state_path": "memory", "hosts": 2, "zones": 1}
    )
    crowd = one_group("crowd", 40)
    # Two replicas of a workload ride along: the cluster page lists them (issue 22).
    crowd["workloads"] = {"api": {"replicas": 2, "containers": [{"name": "api", "image": "i"}]}}
    with server.client() as c:
        wait_ok(c, c.post("/v1/clusters", content=text(crowd)))
    sign_in(browser, server.url, server.token)
    until(browser, lambda: len(find(browser, "details.agg")) == 2, "two aggregated hosts")
    summaries = [s.text for s in find(browser, "details.agg summary")]
    assert sum(int(s.split()[0]) for s in summaries) == 40
    assert all("ACTIVE" in s for s in summaries)
    assert not find(browser, "#topo li.node"), "no node drawn before a host is opened"
    summary = find(browser, "details.agg summary")[0]
    browser.execute_script("arguments[0].focus()", summary)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    until(browser, lambda: find(browser, "details.agg[open] li.node"), "the opened host's nodes")
    opened = find(browser, "details.agg[open]")[0].get_attribute("data-host")
    before = find(browser, "#topo-updated")[0].text
    browser.execute_script("document.querySelector('#topo-updated').textContent = ''")
    click(browser, "#topo-refresh")
    until(browser, lambda: find(browser, "#topo-updated")[0].text, "the redraw")
    assert before and [
        d.get_attribute("data-host") for d in find(browser, "details.agg[open]")
    ] == [opened], "a redraw keeps an opened host open"
    assert len(find(browser, "details.agg[open] li.node")) == 20
    screenshot(browser, "topology-crowded")

    # Above the server's maximum of drawn nodes (issue 23) the view is counts per host alone.
    shown = browser.execute_script(
        """const el = document.createElement("div"); document.body.appendChild(el);
        window.Shoal.topology.render(el, {admin: false, summarised: true, drawn_max: 2000,
          total_nodes: 5, unplaced: [], unplaced_counts: {INIT: 1}, zones: [{name: "az1",
          hosts: [{name: "h1", zone: "az1", failed: false, capacity: null, used: null,
          nodes: [], node_count: 4, status_counts: {ACTIVE: 3, ERROR: 1}}]}]});
        const text = el.innerText; el.remove(); return text;"""
    )
    assert "4 node(s) on 1 host(s)" in shown and "not drawn: more than 2000 nodes" in shown
    assert "4 nodes: 3" in shown and "1 nodes: 1" in shown, shown
    # And above its maximum of listed hosts, each zone is one line of totals.
    shown = browser.execute_script(
        """const el = document.createElement("div"); document.body.appendChild(el);
        window.Shoal.topology.render(el, {admin: true, summarised: true, drawn_max: 2000,
          hosts_summarised: true, hosts_max: 1000, total_nodes: 7, unplaced: [],
          unplaced_counts: {}, zones: [{name: "az1", hosts: [], summary: {host_count: 1500,
          failed_hosts: 2, capacity: {vcpus: 24000, ram_mb: 4096, disk_gb: 1, volume_gb: 0},
          used: {vcpus: 7, ram_mb: 1024, disk_gb: 1, volume_gb: 0}, node_count: 7,
          status_counts: {ACTIVE: 6, ERROR: 1}}}]});
        const text = el.innerText; el.remove(); return text;"""
    )
    assert "7 node(s) on 1500 host(s) in 1 zone(s)" in shown, shown
    assert "more than 1000 hosts" in shown and "2 FAILED" in shown, shown
    assert "7 nodes: 6" in shown and "7/24000" in shown, shown

    # The cluster page shows the workload's replicas: node and readiness as the API has them.
    with server.client() as c:
        url = "/v1/clusters/crowd/workloads"
        replicas = eventually(
            lambda: _all_ready(c.get(url).json()["replicas"], 2), "ready replicas", every_s=0.2
        )
    go(browser, "#/cluster/crowd")
    visible(browser, "#replicas-table")
    shown = {
        r.get_attribute("data-replica"): r.text
        for r in find(browser, "#replicas-table tr[data-replica]")
    }
    assert sorted(shown) == ["api-1", "api-2"]
    for r in replicas:
        assert r["node"] in shown[r["replica"]] and "ready" in shown[r["replica"]]


def test_live_shows_a_rolling_updates_batch_and_cancels_it(
    ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(provider="sim", provider_options={"state_path": "memory"})
    # One node per batch, then a long pause: the update stays between batches for the test.
    group = {
        "name": "app",
        "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
        "count": 3,
        "min": 1,
        "update": {"max_unavailable": 1, "max_surge": 0, "pause_s": 3600, "health_gate": False},
    }
    doc: dict[str, Any] = {"name": "rolling", "node_groups": [group]}
    with server.client() as c:
        r = c.post("/v1/clusters", content=text(doc))
        wait_ok(c, r)
        cluster_id = r.json()["cluster"]["id"]
        changed = dict(
            doc, node_groups=[dict(group, profile=dict(group["profile"], flavor="m1.small"))]
        )
        r = c.put(f"/v1/clusters/{cluster_id}", content=text(changed))
        assert r.status_code == 202, r.text
    sign_in(browser, server.url, server.token)
    go(browser, "#/live")

    def update_row() -> Any:
        for row in find(browser, "#actions-table tr[data-action]"):
            if "CLUSTER_UPDATE" in row.text and "batch 1 of 3 (pause)" in row.text:
                return row
        return None

    row = until(browser, update_row, "the update paused after batch 1 of 3")
    assert row.get_attribute("data-status") == "RUNNING"
    screenshot(browser, "live-rolling")
    find(row, "button[data-cancel]")[0].click()
    until(
        browser,
        lambda: [
            r
            for r in find(browser, "#actions-table tr[data-action]")
            if "CLUSTER_UPDATE" in r.text and r.get_attribute("data-status") != "RUNNING"
        ],
        "the update ended after its cancel",
    )


SOFTWARE_DOC = """
name: soft
node_groups:
  - {name: web, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 2}
  - {name: web-extra, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 10}
software:
  configs:
    hello: {group: script, config: "#!/bin/sh\\necho hello from $name", inputs: [name]}
  deployments:
    greet: {config: hello, target: web, inputs: {name: {node: name}}}
"""


def test_sign_in_hides_the_navigation_and_deployments_have_their_sections(
    ui_server: UiServer, browser: WebDriver
) -> None:
    """Issue 36: the sign-in page showed the navigation; software deployments appeared nowhere;
    DEPLOY, DEPLOYING, SIGNALLED and DEPLOY_COMPLETE events and a COMPLETE were drawn with
    `?`; node tables looked shuffled (id order)."""
    server = ui_server(provider="sim")
    client = server.client()
    browser.get(f"{server.url}/ui")
    visible(browser, "#token", "the token field")
    assert not find(browser, "#nav")[0].is_displayed()
    assert not find(browser, "#logout")[0].is_displayed()
    sign_in(browser, server.url, server.token)
    assert find(browser, "#nav")[0].is_displayed()

    r = client.post("/v1/clusters", content=SOFTWARE_DOC)
    assert r.status_code == 202, r.text
    cid = r.json()["cluster"]["id"]

    def completed() -> list[dict[str, Any]] | None:
        rows = client.get(f"/v1/clusters/{cid}/deployments").json()["deployments"]
        return rows if len(rows) == 2 and all(d["status"] == "COMPLETE" for d in rows) else None

    eventually(completed, "both deployments COMPLETE")
    go(browser, f"#/cluster/{cid}")
    visible(browser, "#h-deps", "the deployments section")
    rows = until(browser, lambda: find(browser, "table.deployments tr[data-deployment]"), "rows")
    assert sorted(r.get_attribute("data-node") for r in rows) == ["web-1", "web-2"]
    assert all("● COMPLETE" in r.text for r in rows), [r.text for r in rows]
    # natural order on the node table: web-extra-2 before web-extra-10
    names = [r.get_attribute("data-node") for r in find(browser, "#nodes-table tr[data-node]")]
    extra = [n for n in names if n.startswith("web-extra-")]
    assert extra.index("web-extra-2") < extra.index("web-extra-10"), names
    badges = [b.text for b in find(browser, ".badge")]
    assert badges and not [b for b in badges if b.startswith("?")], badges

    # the node's page: its facts, its deployment, and the run's output
    click(browser, "table.deployments tr[data-node='web-1'] a", "the node's link")
    visible(browser, "#h-node-deps", "the node's deployments")
    assert "Node web-1" in visible(browser, "h1").text
    click(browser, "button[data-log='greet']", "the output button")
    log = visible(browser, "#deployment-log", "the run's output")
    assert "greet: COMPLETE" in log.text

    # the Live page: every event has a badge, none a `?`
    go(browser, "#/live")
    until(browser, lambda: find(browser, "#events li"), "events on the Live page")
    statuses = browser.execute_script(
        "return [...document.querySelectorAll('#events li .badge')].map(b => b.textContent)"
    )
    assert any("DEPLOY_COMPLETE" in s for s in statuses), statuses
    assert not [s for s in statuses if s.strip().startswith("?")], statuses
    assert console_errors(browser) == []
