"""A local process tree standing in for a cloud guest with Heat's agents, booted from user data.

What a guest does at boot, step by step, with the real programs where there are real programs:

1. cloud-init's `write_files` (done here: the files the `#cloud-config` names are written under
   the guest's root directory);
2. os-collect-config's `heat_local` collector reads the boot-time metadata (the real program,
   `--print`);
3. the image's os-apply-config templates (heat-agents' own, both of them) render
   `/etc/os-collect-config.conf` and heat-config's file from it (the real program);
4. os-collect-config re-executes itself with that configuration and polls the metadata URL. On
   an image it runs as root with the rendered file; here, unprivileged, the chain is started
   with the local provider's layout (agents.py) from the rendered file's collector, metadata
   URL and polling interval, which the test checks first.
"""

from __future__ import annotations

import base64
import configparser
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from shoal.providers.local.agents import AgentInstall, AgentLayout, environment, prepare


@dataclass(frozen=True)
class Guest:
    root: Path
    collectors: list[str]
    metadata_url: str
    polling_interval_s: float
    log: Path


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{argv[0]} failed:\n{done.stderr[-3000:]}"
    return done.stdout


def boot_files(user_data_b64: str, root: Path) -> None:
    """cloud-init's part: write the files the user data's `#cloud-config` names."""
    text = base64.b64decode(user_data_b64).decode()
    assert text.startswith("#cloud-config\n"), text[:80]
    document = yaml.safe_load(text)
    for item in document["write_files"]:
        path = root / str(item["path"]).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item["content"])
        path.chmod(int(str(item.get("permissions", "0644")), 8))


def render_collector_config(root: Path, install: AgentInstall) -> configparser.RawConfigParser:
    """Steps 2 and 3: the real heat_local collector and the image's real templates."""
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    collected = _run(
        [
            str(install.bin / "os-collect-config"),
            "--config-file",
            os.devnull,
            "--print",
            "--heat_local-path",
            str(root / "var/lib/heat-cfntools/cfn-init-data"),
            "heat_local",
        ],
        env,
    )
    metadata = root / "boot-metadata.json"
    metadata.write_text(json.dumps(json.loads(collected)["heat_local"]))
    _run(
        [
            str(install.bin / "os-apply-config"),
            "--templates",
            str(install.share / "os-apply-config"),
            "--output",
            str(root),
            "--metadata",
            str(metadata),
        ],
        env,
    )
    conf = configparser.RawConfigParser(strict=False)  # `collectors` repeats, one per line
    conf.read(root / "etc/os-collect-config.conf")
    return conf


@contextlib.contextmanager
def standin_guest(user_data_b64: str, root: Path, install: AgentInstall) -> Iterator[Guest]:
    """Boot the stand-in from user data; the agent chain runs until the block ends."""
    boot_files(user_data_b64, root)
    conf = render_collector_config(root, install)
    rendered = root / "etc/os-collect-config.conf"
    collectors = [
        line.split("=", 1)[1].strip()
        for line in rendered.read_text().splitlines()
        if line.replace(" ", "").startswith("collectors=")
    ]
    guest = Guest(
        root=root,
        collectors=collectors,
        metadata_url=conf.get("request", "metadata_url"),
        polling_interval_s=float(conf.get("DEFAULT", "polling_interval")),
        log=root / "agents.log",
    )
    layout = AgentLayout(root / "unprivileged")
    argv = prepare(
        layout,
        install,
        metadata_url=guest.metadata_url,
        polling_interval_s=guest.polling_interval_s,
    )
    env = environment(layout, install, dict(os.environ))
    with open(guest.log, "ab") as log:
        proc = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield guest
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
