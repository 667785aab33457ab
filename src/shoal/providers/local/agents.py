"""Heat's real in-guest agent chain, run for a local server in its working directory.

A cloud image with Heat's agents runs os-collect-config, which polls the server's metadata URL
(its `request` collector) and, when the metadata changes, runs os-refresh-config; that runs
os-apply-config (which renders the deployments into heat-config's file) and then heat-config,
which hands each new deployment to its group's hook (`script`, `ansible` …) and gives the
hook's result to heat-config-notify, which POSTs it to the deployment's signal URL. Here the
same programs run unchanged, unprivileged, as one detached process tree per server: every path
they would take under /etc, /var/lib or /var/run is set by their configuration file or their
environment variables to a directory under `<workdir>/agents/`, laid out like the guest's root.

Two things differ from an image, both configuration: os-refresh-config's one-line
`20-os-apply-config` script (`exec os-apply-config`) is replaced by one that names the output
root, because os-apply-config takes its output directory only on the command line; and only
heat-config's own template is installed for os-apply-config, not the one that rewrites
/etc/os-collect-config.conf, which would drop the lock-file option an unprivileged
os-refresh-config needs.

Where the programs come from: `scripts/agents.sh` (run by `make venv`) installs the PyPI
releases into `<venv>/agents` and heat-agents' hooks out of its sdist into
`<venv>/share/heat-agents`; `AgentInstall.find()` looks there, or where SHOAL_HEAT_AGENTS_BIN
and SHOAL_HEAT_AGENTS_SHARE point.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from shoal.files import (
    has_link_beneath,
    open_dir_beneath,
    private_dir,
    remove_tree_beneath,
    write_beneath,
)
from shoal.providers.local import kubeplay

AGENTS_DIR = "agents"
LOG_NAME = "agents.log"
BIN_ENV = "SHOAL_HEAT_AGENTS_BIN"
SHARE_ENV = "SHOAL_HEAT_AGENTS_SHARE"

# Set for the chain, so for every hook and script it runs: the local server it stands in for.
WORKDIR_ENV = "SHOAL_NODE_WORKDIR"
ADDRESS_ENV = "SHOAL_NODE_ADDRESS"
PORT_ENV = "SHOAL_NODE_PORT"
NAME_ENV = "SHOAL_NODE_NAME"

_HOOK_DIRS = {
    # hook: (working dir variable, outputs dir variable or "")
    "script": ("HEAT_SCRIPT_WORKING", "HEAT_SCRIPT_OUTPUTS"),
    "ansible": ("HEAT_ANSIBLE_WORKING", "HEAT_ANSIBLE_OUTPUTS"),
    "puppet": ("HEAT_PUPPET_WORKING", "HEAT_PUPPET_OUTPUTS"),
    "chef": ("HEAT_CHEF_WORKING", "HEAT_CHEF_OUTPUTS"),
    "salt": ("HEAT_SALT_WORKING", ""),
    "docker-compose": ("HEAT_DOCKER_COMPOSE_WORKING", ""),
}
CONTAINER_ELEMENTS = ("docker-compose", "kubelet")
KUBELET_PLAYER = "52-shoal-kubelet"
COMPOSE_ENV = "SHOAL_DOCKER_COMPOSE"


class AgentsNotInstalledError(Exception):
    """The agent chain is not where Shoal looks for it (`make venv` installs it)."""


@dataclass(frozen=True, slots=True)
class AgentInstall:
    """Where the agents' programs are: a bin directory with os-collect-config and friends,
    and heat-agents' files (hooks/, bin/heat-config-notify, os-refresh-config/ …)."""

    bin: Path
    share: Path

    @classmethod
    def find(cls) -> AgentInstall:
        """From SHOAL_HEAT_AGENTS_BIN/SHARE, or beside the running interpreter's venv."""
        prefix = Path(sys.prefix)
        install = cls(
            bin=Path(os.environ.get(BIN_ENV) or prefix / "agents" / "bin"),
            share=Path(os.environ.get(SHARE_ENV) or prefix / "share" / "heat-agents"),
        )
        install.check()
        return install

    def compose_command(self) -> Path | None:
        """docker-compose, from its own venv beside the agents' (scripts/agents.sh), or
        SHOAL_DOCKER_COMPOSE; None when it is not installed."""
        given = os.environ.get(COMPOSE_ENV)
        prefix = self.bin.parent.parent
        command = Path(given) if given else prefix / "agents-compose" / "bin" / "docker-compose"
        return command if command.exists() else None

    def check(self) -> None:
        """Raise `AgentsNotInstalledError` naming what is missing."""
        missing = self.missing()
        if missing:
            raise AgentsNotInstalledError(
                f"Heat's agents are not installed ({', '.join(missing)} missing); "
                f"run `make venv` (scripts/agents.sh) or set {BIN_ENV} and {SHARE_ENV}"
            )

    def missing(self) -> list[str]:
        wanted = [
            self.bin / "os-collect-config",
            self.bin / "os-refresh-config",
            self.bin / "os-apply-config",
            self.bin / "dib-run-parts",
            self.share / "hooks" / "script",
            self.share / "bin" / "heat-config-notify",
            self.share / "os-refresh-config" / "configure.d" / "55-heat-config",
            self.share / "os-apply-config" / "var" / "run" / "heat-config" / "heat-config",
        ]
        return [str(p) for p in wanted if not p.exists()]


@dataclass(frozen=True, slots=True)
class AgentLayout:
    """The guest's directories for one server, under `<workdir>/agents/`."""

    root: Path

    @classmethod
    def of(cls, workdir: Path) -> AgentLayout:
        return cls(workdir / AGENTS_DIR)

    @property
    def config_file(self) -> Path:
        return self.root / "etc" / "os-collect-config.conf"

    @property
    def refresh_base(self) -> Path:
        return self.root / "usr" / "libexec" / "os-refresh-config"

    @property
    def templates(self) -> Path:
        return self.root / "usr" / "libexec" / "os-apply-config" / "templates"

    @property
    def heat_config(self) -> Path:
        return self.root / "var" / "run" / "heat-config" / "heat-config"

    @property
    def deployed(self) -> Path:
        return self.root / "var" / "lib" / "heat-config" / "deployed"

    @property
    def lockfile(self) -> Path:
        return self.root / "var" / "run" / "os-refresh-config.lock"

    @property
    def log(self) -> Path:
        return self.root / LOG_NAME

    @property
    def kubelet_manifests(self) -> Path:
        return self.hook_working("kubelet") / "kubelet-manifests"

    def hook_working(self, hook: str) -> Path:
        return self.root / "var" / "lib" / "heat-config" / f"heat-config-{hook}"

    def hook_outputs(self, hook: str) -> Path:
        return self.root / "var" / "run" / "heat-config" / f"heat-config-{hook}"


def prepare(
    layout: AgentLayout,
    install: AgentInstall,
    *,
    metadata_url: str,
    polling_interval_s: float,
    request_timeout_s: float = 10.0,
) -> list[str]:
    """Write the guest's configuration for one server and return the argv that starts its
    agent chain. Idempotent: a restart keeps `deployed/`, so finished deployments stay done."""
    # Every write goes through directory descriptors opened without following links
    # (files.py): the node's own processes run meanwhile and may swap a folder for a link.
    workdir = layout.root.parent
    private_dir(workdir)
    _reset_if_linked(layout)

    def rel(path: Path) -> Path:
        return path.relative_to(workdir)

    for d in (layout.config_file.parent, layout.heat_config.parent, layout.deployed.parent):
        os.close(open_dir_beneath(workdir, rel(d)))
    _write_collect_config(layout, metadata_url, polling_interval_s, request_timeout_s)
    _write_refresh_scripts(layout, install)
    return [str(install.bin / "os-collect-config"), "--config-file", str(layout.config_file)]


def _write_collect_config(
    layout: AgentLayout, metadata_url: str, polling_interval_s: float, request_timeout_s: float
) -> None:
    """os-collect-config's file: the `request` collector polling the metadata URL."""
    workdir = layout.root.parent
    cache = layout.root / "var" / "lib" / "os-collect-config"
    backup = layout.root / "var" / "run" / "os-collect-config"
    write_beneath(
        workdir,
        layout.config_file.relative_to(workdir),
        "\n".join(
            [
                "[DEFAULT]",
                f"command = os-refresh-config --lockfile {layout.lockfile}",
                "collectors = request",
                f"polling_interval = {polling_interval_s}",
                f"min_polling_interval = {min(1.0, polling_interval_s)}",
                f"cachedir = {cache}",
                f"backup_cachedir = {backup}",
                "",
                "[request]",
                # oslo.config substitutes `$name` in values; `$$` is a literal dollar.
                f"metadata_url = {metadata_url.replace('$', '$$')}",
                f"timeout = {request_timeout_s}",
                "",
            ]
        ),
    )


def _write_refresh_scripts(layout: AgentLayout, install: AgentInstall) -> None:
    """os-refresh-config's scripts: os-apply-config into the tree, the container hooks' and
    Shoal's kubelet stand-in, heat-config; and heat-config's template for os-apply-config."""
    workdir = layout.root.parent
    configure = (layout.refresh_base / "configure.d").relative_to(workdir)
    remove_tree_beneath(workdir, configure)
    output = shlex.quote(str(layout.root))
    write_beneath(
        workdir,
        configure / "20-os-apply-config",
        f"#!/bin/bash\nset -ue\n\nexec os-apply-config --output {output}\n",
        0o700,
    )
    # The container hooks' scripts (compose files, Pod manifests) and Shoal's kubelet stand-in,
    # which plays the manifests before heat-config runs the hooks (containers.md).
    scripts = install.share / "os-refresh-config" / "configure.d"
    for element in CONTAINER_ELEMENTS:
        script = scripts / f"50-heat-config-{element}"
        if script.exists():
            write_beneath(workdir, configure / script.name, script.read_bytes(), 0o700)
    write_beneath(workdir, configure / KUBELET_PLAYER, Path(kubeplay.__file__).read_bytes(), 0o700)
    heat_config = scripts / "55-heat-config"
    write_beneath(workdir, configure / "55-heat-config", heat_config.read_bytes(), 0o700)
    template = layout.templates / "var" / "run" / "heat-config" / "heat-config"
    source = install.share / "os-apply-config" / "var" / "run" / "heat-config" / "heat-config"
    write_beneath(workdir, template.relative_to(workdir), source.read_bytes())


def _reset_if_linked(layout: AgentLayout) -> None:
    """The tree is the node's to write (its scripts run there): if it put a symlink where
    Shoal writes the chain's configuration, the tree starts afresh rather than Shoal writing
    (or deleting) through the link, e.g. into $SHOAL_HOME."""
    workdir = layout.root.parent
    touched = [
        layout.config_file,
        layout.refresh_base / "configure.d" / "20-os-apply-config",
        layout.templates / "var" / "run" / "heat-config" / "heat-config",
        layout.heat_config,
        layout.deployed,
        layout.lockfile,
        layout.log,
        layout.root / "var" / "lib" / "os-collect-config",
        layout.root / "var" / "run" / "os-collect-config",
    ]
    if not any(has_link_beneath(workdir, p) for p in touched):
        return
    remove_tree_beneath(workdir, AGENTS_DIR)  # never follows a link


def environment(layout: AgentLayout, install: AgentInstall, base: dict[str, str]) -> dict[str, str]:
    """`base` plus every path variable the chain reads, and its programs first on PATH (the
    hooks start with `#!/usr/bin/env python3`, which must be the agents' interpreter)."""
    env = dict(base)
    for leaked in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(leaked, None)
    path = [str(install.bin), str(install.share / "bin"), env.get("PATH", os.defpath)]
    env["PATH"] = os.pathsep.join(path)
    env["OS_REFRESH_CONFIG_BASE_DIR"] = str(layout.refresh_base)
    env["OS_CONFIG_APPLIER_TEMPLATES"] = str(layout.templates)
    env["HEAT_CONFIG_HOOKS"] = str(install.share / "hooks")
    env["HEAT_SHELL_CONFIG"] = str(layout.heat_config)
    env["HEAT_CONFIG_DEPLOYED"] = str(layout.deployed)
    env["HEAT_CONFIG_DEPLOYED_OLD"] = str(layout.deployed)
    env["HEAT_CONFIG_NOTIFY"] = str(install.share / "bin" / "heat-config-notify")
    for hook, (working, outputs) in _HOOK_DIRS.items():
        env[working] = str(layout.hook_working(hook))
        if outputs:
            env[outputs] = str(layout.hook_outputs(hook))
    env["HEAT_PUPPET_HIERA_DATADIR"] = str(layout.root / "etc" / "puppet" / "hieradata")
    env["HEAT_CFN_INIT_LAST_METADATA_DIR"] = str(layout.root / "var" / "cache" / "heat-cfntools")
    env["HEAT_HIERA_CONFIG"] = str(layout.root / "etc" / "puppet" / "hiera.yaml")
    # ansible-playbook keeps its state and temporary files under its home, not the user's.
    env["ANSIBLE_HOME"] = str(layout.root / "var" / "lib" / "ansible")
    env["ANSIBLE_LOCAL_TEMP"] = str(layout.root / "var" / "tmp" / "ansible")
    env["PYTHONUNBUFFERED"] = "1"
    compose = install.compose_command()
    if compose is not None:
        env["HEAT_DOCKER_COMPOSE_CMD"] = str(compose)
    env["HEAT_KUBELET_MANIFESTS"] = str(layout.kubelet_manifests)
    return env
