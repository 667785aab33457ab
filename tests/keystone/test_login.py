"""`shoal login` against a real Keystone: OS_* variables in, SHOAL_URL / SHOAL_TOKEN out, and
the native API of a Keystone-mode server answers the `shoal` CLI with that token."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from shoal.cli.login import shoal_url
from tests.keystone.conftest import USER_PASSWORD, Keystone, KeystoneShoal


def test_shoal_url_is_the_facades_parent() -> None:
    assert shoal_url("http://h:1/clustering/") == "http://h:1"
    assert shoal_url("http://h:1") == "http://h:1"


def test_login_from_os_variables(keystone: Keystone, shoal: KeystoneShoal, catalog: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "SHOAL_"))} | {
        "OS_AUTH_URL": keystone.url,
        "OS_USERNAME": "alice",
        "OS_PASSWORD": USER_PASSWORD,
        "OS_PROJECT_NAME": "alpha",
        "OS_USER_DOMAIN_NAME": "Default",
        "OS_PROJECT_DOMAIN_NAME": "Default",
        "OS_IDENTITY_API_VERSION": "3",
        "OS_CLIENT_CONFIG_FILE": os.devnull,
    }
    done = subprocess.run(
        [sys.executable, "-m", "shoal", "login"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    assert exports["SHOAL_URL"] == shoal.url
    token = exports["SHOAL_TOKEN"]
    r = httpx.get(f"{shoal.url}/v1/clusters", headers={"X-Auth-Token": token}, timeout=30)
    assert r.status_code == 200, r.text

    env["OS_PASSWORD"] = "wrong"
    done = subprocess.run(
        [sys.executable, "-m", "shoal", "login"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SHOAL_TOKEN" not in done.stdout
