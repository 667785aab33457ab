"""Venvs for the real OpenStack services and clients the tests run beside Shoal.

Keystone, Nova, Cinder and the `openstack` CLI each pin their own versions of half of
OpenStack, so each lives in its own venv under the test cache (`SHOAL_TEST_CACHE`, default
~/.cache/shoal-tests), built once under a file lock and reused by later runs.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path


def cache_root() -> Path:
    explicit = os.environ.get("SHOAL_TEST_CACHE")
    return Path(explicit) if explicit else Path.home() / ".cache" / "shoal-tests"


def cached_venv(root: Path, pins: tuple[str, ...], after: str = "") -> Path:
    """`root`/venv with `pins` installed; built under a file lock on first use, then reused.

    `after` is Python run with the new venv's interpreter once the install succeeded.
    """
    venv = root / "venv"
    ready = venv / ".ready"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a half-built one (venvs don't relocate)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "-q"]
        for args in (["--upgrade", "pip", "wheel", "setuptools"], list(pins)):
            done = subprocess.run([*pip, *args], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"installing {pins} failed:\n{done.stdout}\n{done.stderr}")
        if after:
            subprocess.run([str(venv / "bin" / "python"), "-c", after], check=True)
        ready.touch()
        return venv
