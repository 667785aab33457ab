"""Signing in to the dashboard with Keystone credentials, against a real Keystone.

Shoal runs as `shoal server` in Keystone mode in front of the session's Keystone (keystone
30.0.0 under uwsgi, see tests/keystone/conftest.py); the browser signs in as alice of project
alpha with her user name and password, and sees alpha's cluster and not beta's.
"""

from __future__ import annotations

import httpx
from selenium.webdriver.remote.webdriver import WebDriver

from tests.keystone.conftest import SERVICE_PASSWORD, USER_PASSWORD, Keystone
from tests.support.server import wait_ok
from tests.ui.browser import find, until, visible
from tests.ui.conftest import UiServer
from tests.ui.docs import one_group, text


def test_keystone_user_signs_in_with_a_password_and_sees_only_its_project(
    keystone: Keystone, ui_server: UiServer, browser: WebDriver
) -> None:
    server = ui_server(
        provider="sim",
        provider_options={"state_path": "memory"},
        extra={
            "SHOAL_AUTH": "keystone",
            "SHOAL_KEYSTONE_URL": keystone.url,
            "SHOAL_KEYSTONE_USER": "senlin",
            "SHOAL_KEYSTONE_PASSWORD": SERVICE_PASSWORD,
            "SHOAL_KEYSTONE_PROJECT": "service",
        },
    )
    for user, project in (("alice", "alpha"), ("bob", "beta")):
        token = keystone.token(user, USER_PASSWORD, project)
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token}, timeout=30) as c:
            wait_ok(c, c.post("/v1/clusters", content=text(one_group(f"ks-ui-{project}", 1))))

    assert httpx.get(f"{server.url}/ui/api/auth").json() == {"mode": "keystone"}
    browser.get(f"{server.url}/ui")
    user = visible(browser, "#ks-user", "the Keystone sign-in form")
    assert browser.switch_to.active_element == user
    user.send_keys("alice")
    visible(browser, "#ks-password").send_keys("wrong")
    visible(browser, "#ks-project").send_keys("alpha\n")
    refused = visible(browser, "#ks-error [role='alert']", "the refusal")
    assert "Keystone refused" in refused.text
    assert visible(browser, "#ks-password").get_attribute("value") == ""
    visible(browser, "#ks-password").send_keys(USER_PASSWORD + "\n")
    visible(browser, "#nav a[aria-current='page']", "the pages after signing in")
    assert visible(browser, "#who").text == "tenant"
    until(
        browser,
        lambda: (
            {e.get_attribute("data-cluster") for e in find(browser, "#topo li.node")}
            == {"ks-ui-alpha"}
        ),
        "alpha's node, alone",
    )
    assert "ks-ui-beta" not in browser.page_source
    # The password went nowhere but Keystone: not into the page's storage or Shoal's log.
    stored = browser.execute_script("return JSON.stringify(sessionStorage)")
    assert USER_PASSWORD not in stored
    assert USER_PASSWORD not in server.log.read_text(errors="replace")
