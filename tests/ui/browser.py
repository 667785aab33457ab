"""A real headless Chromium for the dashboard tests, the benchmark and the screenshots.

Debian's `chromium` and `chromium-driver` packages provide the browser and its driver
(`apt-get install -y chromium chromium-driver`; `.ci/run` installs them). When they are missing
the tests fail saying so: a dashboard nobody tested in a browser is not tested.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from tests.support.polling import eventually

REPO = Path(__file__).resolve().parents[2]
DOCS_SHOTS = REPO / "docs" / "ui"
SHOTS_ENV = "SHOAL_UPDATE_SCREENSHOTS"
"""Set to 1 to refresh docs/ui/*.png; otherwise screenshots go to a scratch directory, so a test
run leaves the tree as it found it."""
CHROMIUM = os.environ.get("SHOAL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SHOAL_CHROMEDRIVER", "/usr/bin/chromedriver")
WAIT_S = 90.0
"""Bound on any one wait in the browser: generous for a loaded 2-core machine, never asserted."""


class BrowserMissing(RuntimeError):
    pass


def chromium_problem() -> str | None:
    """Why a browser cannot be started here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() or shutil.which(path)):
            return (
                f"{path} is missing: install Debian's {package} "
                "(apt-get install -y chromium chromium-driver), as .ci/run does"
            )
    return None


def start_chromium(width: int = 1366, height: int = 900) -> WebDriver:
    problem = chromium_problem()
    if problem:
        raise BrowserMissing(problem)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={width},{height}",
        "--force-prefers-reduced-motion",
    ):
        options.add_argument(arg)
    # Loopback only: no proxy from the environment may see (or break) the test's requests.
    options.add_argument("--no-proxy-server")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    return driver


def until(driver: WebDriver, check: Callable[[], Any], what: str, timeout_s: float = WAIT_S) -> Any:
    """Call `check` until it returns something truthy (a page being redrawn under it counts
    as not yet); fail naming `what` in the browser on timeout."""

    def seen() -> Any:
        try:
            return check()
        except (StaleElementReferenceException, WebDriverException) as e:
            return _Missed(e)

    return eventually(seen, f"in the browser: {what}", timeout_s=timeout_s, every_s=0.2)


class _Missed:
    """The browser's error while the page changed: falsy, and shown at the deadline."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return repr(self.error)


def find(driver: WebDriver | WebElement, css: str) -> list[WebElement]:
    return list(driver.find_elements(By.CSS_SELECTOR, css))


def visible(driver: WebDriver, css: str, what: str | None = None) -> WebElement:
    """The first element matching `css` once it is displayed."""

    def check() -> WebElement | None:
        for el in find(driver, css):
            if el.is_displayed():
                return el
        return None

    found: WebElement = until(driver, check, what or css)
    return found


def click(driver: WebDriver, css: str, what: str | None = None) -> None:
    """Click the first displayed element matching `css`, found again if the page redrew it
    between finding and clicking (the topology redraws on every event: a button found a moment
    before is then a stale reference, and the click never happened)."""

    def check() -> bool:
        for el in find(driver, css):
            if el.is_displayed():
                el.click()
                return True
        return False

    until(driver, check, what or css)


def sign_in(driver: WebDriver, url: str, token: str) -> None:
    """Sign in with the keyboard alone: type the token, press Enter."""
    driver.get(f"{url}/ui")
    field = visible(driver, "#token", "the token field")
    assert driver.switch_to.active_element == field, "the token field should have focus"
    field.send_keys(token + "\n")
    visible(driver, "#nav a[aria-current='page']", "the navigation after signing in")
    until(
        driver,
        lambda: driver.execute_script("return document.body.dataset.topologyRendered"),
        "the topology after signing in",
    )


def go(driver: WebDriver, hash_: str) -> None:
    driver.execute_script("location.hash = arguments[0]", hash_)


def host_of(driver: WebDriver, cluster: str, node: str) -> str | None:
    """The host whose card draws `cluster`'s `node`, or None."""
    found: str | None = driver.execute_script(
        "const n = [...document.querySelectorAll('#topo li.node')].find("
        "x => x.dataset.node === arguments[1] && x.dataset.cluster === arguments[0]);"
        "return n ? n.closest('li.host')?.dataset.host ?? null : null;",
        cluster,
        node,
    )
    return found


def screenshot(driver: WebDriver, name: str) -> Path:
    """The page as it is now, as <name>.png: in docs/ui/ when SHOAL_UPDATE_SCREENSHOTS=1 (the docs
    show what the tests saw), else in a scratch directory."""
    shots = DOCS_SHOTS if os.environ.get(SHOTS_ENV) == "1" else scratch_shots()
    shots.mkdir(parents=True, exist_ok=True)
    path = shots / f"{name}.png"
    height = int(driver.execute_script("return Math.min(document.body.scrollHeight, 2400)"))
    width = int(driver.execute_script("return window.innerWidth"))
    driver.set_window_size(max(width, 1366), max(height + 140, 900))
    driver.save_screenshot(str(path))
    return path


def scratch_shots() -> Path:
    """Where screenshots go when the docs' copies are not being refreshed."""
    return Path(os.environ.get("TMPDIR", "/tmp")) / "shoal-ui-shots"


def console_errors(driver: WebDriver) -> list[str]:
    """Severe messages the page logged (script errors, failed requests)."""
    return [str(e["message"]) for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
