#!/usr/bin/env python3
"""Shoal's kubelet stand-in on a local node: plays `group: kubelet` deployments with podman.

heat-agents' `50-heat-config-kubelet` script writes each kubelet deployment's Pod manifest into
a directory for a kubelet to run; its hook then waits for docker-era container names
(`k8s_NAME.HASH_ID`) through docker-py 1.x, which no podman pod carries. So on `local` this
script is the kubelet *and* the hook's wait: run by os-refresh-config after the manifests are
written and before heat-config runs the hooks (as `configure.d/52-shoal-kubelet`), it plays
each new deployment's manifest through the node's podman socket (`POST /libpod/play/kube`),
waits for its pod to run, and signals the outcome the way heat-config would (heat-config-notify
with the deployment's own config), marking it deployed so heat-config skips it. A changed
deployment replaces its pod (down, then play); a DELETE run or a deployment no longer served
takes it down (`DELETE /libpod/play/kube`). An image that is not in the node's storage fails
the deployment with podman's message, which names the image.

Run by path with the agents' Python: standard library only, nothing of Shoal's imported.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

API = "/v4.3.1/libpod"
DEFAULT_TIMEOUT_S = 120.0
MAX_OUTPUT = 65536
SUBSTITUTED = ("SHOAL_NODE_ADDRESS", "SHOAL_NODE_NAME", "SHOAL_NODE_WORKDIR")


class _Conn(http.client.HTTPConnection):
    def __init__(self, path: str, timeout_s: float) -> None:
        super().__init__("localhost", timeout=timeout_s)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


def _call(method: str, url: str, body: str | None = None) -> tuple[int, Any]:
    host = os.environ.get("DOCKER_HOST", "")
    if not host.startswith("unix://"):
        return 0, {"message": "no container runtime on this node (DOCKER_HOST is not set)"}
    conn = _Conn(host[len("unix://") :], 300.0)
    try:
        headers = {"Content-Type": "application/yaml"} if body is not None else {}
        conn.request(method, url, body=body.encode() if body is not None else None, headers=headers)
        answer = conn.getresponse()
        raw = answer.read()
    except OSError as e:
        return 0, {"message": f"the node's container runtime did not answer: {e}"}
    finally:
        conn.close()
    try:
        return answer.status, json.loads(raw or b"null")
    except ValueError:
        return answer.status, {"message": raw.decode(errors="replace")}


def _down(manifest: str) -> str:
    status, data = _call("DELETE", f"{API}/play/kube", manifest)
    return "" if status == 200 else str(data)


def _play(manifest: str, timeout_s: float) -> tuple[int, str, str]:
    """(status code, stdout, stderr) of playing one manifest and waiting for its pods."""
    status, data = _call("POST", f"{API}/play/kube", manifest)
    if status != 200:
        message = data.get("message") if isinstance(data, dict) else data
        return 1, "", f"podman kube play failed: {message}"
    pods = [p.get("ID", "") for p in (data.get("Pods") or [])]
    errors = [e for p in (data.get("Pods") or []) for e in (p.get("ContainerErrors") or [])]
    if errors:
        return 1, "", "podman kube play: " + "; ".join(map(str, errors))
    deadline = time.monotonic() + timeout_s
    before: dict[str, tuple[str, int]] | None = None
    while True:
        now = _containers(pods)
        running = bool(now) and all(state == "running" for state, _ in now.values())
        # Running, and still the same processes a second later: not crash-looping (a port
        # already taken makes a container exit at once, and `always` start it again).
        if running and now == before:
            return 0, f"pods running: {', '.join(pods)}\n", ""
        if time.monotonic() > deadline:
            return 1, "", f"pods not running steadily after {timeout_s}s: {now}"
        before = now if running else None
        time.sleep(1.0)


def _containers(pods: list[str]) -> dict[str, tuple[str, int]]:
    """Each container of the pods: (state, restart count)."""
    out: dict[str, tuple[str, int]] = {}
    for pod in pods:
        _, info = _call("GET", f"{API}/pods/{pod}/json")
        for c in (info.get("Containers") or []) if isinstance(info, dict) else []:
            _, ctr = _call("GET", f"{API}/containers/{c.get('Id')}/json")
            if isinstance(ctr, dict):
                state = ctr.get("State") or {}
                out[str(c.get("Id"))] = (
                    str(state.get("Status")),
                    int(ctr.get("RestartCount") or 0),
                )
    return out


def _compose_down(name: str) -> None:
    """A deployment that was docker-compose and is now kubelet: its compose project goes
    (heat-agents' compose script keeps a project whose deployment name is still served)."""
    working = os.environ.get("HEAT_DOCKER_COMPOSE_WORKING")
    compose = os.environ.get("HEAT_DOCKER_COMPOSE_CMD", "docker-compose")
    project = Path(working) / name if working else None
    if project is None or not (project / "docker-compose.yml").exists():
        return
    subprocess.run(
        [compose, "down", "--timeout", "1"],
        cwd=project,
        capture_output=True,
        check=False,
        timeout=300,
    )
    (project / "docker-compose.yml").unlink()


def _notify(config: dict[str, Any], deployed: Path, code: int, out: str, err: str) -> None:
    """What heat-config does after a hook: the config marked deployed, then the signal."""
    path = deployed / f"{config['id']}.json"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(config, f)
    response = {
        "deploy_stdout": out[-MAX_OUTPUT:],
        "deploy_stderr": err[-MAX_OUTPUT:],
        "deploy_status_code": code,
    }
    notify = os.environ.get("HEAT_CONFIG_NOTIFY", "heat-config-notify")
    subprocess.run([notify, str(path)], input=json.dumps(response).encode(), check=False)


def _manifest(c: dict[str, Any], manifests: Path) -> str:
    """The manifest heat-agents wrote for this config (its config as JSON), as text, with the
    node's own facts substituted as docker-compose substitutes its environment in a compose
    file: `${SHOAL_NODE_ADDRESS}`, `${SHOAL_NODE_NAME}`, `${SHOAL_NODE_WORKDIR}`."""
    written = manifests / f"{c['id']}.json"
    value = json.loads(written.read_text()) if written.exists() else c.get("config")
    text = value if isinstance(value, str) else json.dumps(value)
    for name in SUBSTITUTED:
        text = text.replace("${" + name + "}", os.environ.get(name, ""))
    return text


def main() -> int:
    conf = Path(os.environ.get("HEAT_SHELL_CONFIG", "/var/run/heat-config/heat-config"))
    deployed = Path(os.environ.get("HEAT_CONFIG_DEPLOYED", "/var/lib/heat-config/deployed"))
    manifests = Path(
        os.environ.get(
            "HEAT_KUBELET_MANIFESTS", "/var/lib/heat-config/heat-config-kubelet/kubelet-manifests"
        )
    )
    played = manifests.parent / "played"
    played.mkdir(mode=0o700, parents=True, exist_ok=True)
    deployed.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        configs = [c for c in json.loads(conf.read_text()) if c.get("group") == "kubelet"]
    except (OSError, ValueError):
        return 0
    current = {str(c["name"]) for c in configs}
    for old in played.glob("*.yaml"):
        if old.stem not in current:
            _down(old.read_text())
            old.unlink()
    for c in configs:
        if (deployed / f"{c['id']}.json").exists():
            continue
        inputs = {i.get("name"): i.get("value") for i in c.get("inputs", [])}
        mine = played / f"{c['name']}.yaml"
        previous = mine.read_text() if mine.exists() else None
        if previous is not None:
            _down(previous)
            mine.unlink()
        if inputs.get("deploy_action") == "DELETE":
            _notify(c, deployed, 0, "pod removed\n" if previous else "", "")
            continue
        _compose_down(str(c["name"]))
        manifest = _manifest(c, manifests)
        timeout = float((c.get("options") or {}).get("containers_timeout", DEFAULT_TIMEOUT_S))
        code, out, err = _play(manifest, timeout)
        if code == 0:
            mine.write_text(manifest)
        else:
            _down(manifest)
        _notify(c, deployed, code, out, err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
