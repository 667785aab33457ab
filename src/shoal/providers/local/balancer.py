"""A load balancer on `local`: a real HAProxy on its own loopback address.

Each declared load balancer is one `haproxy` process (Debian's package) with a frontend per
listener on the balancer's address and a backend per pool whose servers are the pool's members
right now, health-checked as the pool's monitor says and connecting *from* the balancer's
address (so the members' security groups can tell it apart). A change of members renders the
configuration again and reloads: the new process takes the sockets over (`-sf`), connections in
flight finish on the old one. Members' health is read from HAProxy's own stats socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import signal
from pathlib import Path

from shoal.model.networks import LbAlgorithm, LbProtocol, LoadBalancer, MonitorType, Pool
from shoal.providers.networking import (
    BalancerState,
    ClusterNetworks,
    MemberHealth,
    NetworkToolsMissingError,
    PoolMemberState,
)

PACKAGE = "haproxy"
_ALGORITHMS = {
    LbAlgorithm.ROUND_ROBIN: "roundrobin",
    LbAlgorithm.LEAST_CONNECTIONS: "leastconn",
    LbAlgorithm.SOURCE_IP: "source",
}
_STATUS = {"UP": MemberHealth.UP, "DOWN": MemberHealth.DOWN, "no check": MemberHealth.UP}


class HaproxyError(Exception):
    """HAProxy refused its configuration or would not start; the message carries its words."""


def _mode(pool: Pool) -> str:
    return "http" if pool.protocol is LbProtocol.HTTP else "tcp"


def render(lb: LoadBalancer, cluster: ClusterNetworks, vip: str, socket: str) -> str:
    lines = [
        "global",
        f"  stats socket abns@{socket} level admin",
        "  maxconn 2048",
        "defaults",
        "  timeout connect 2s",
        "  timeout client 30s",
        "  timeout server 30s",
        "  timeout check 2s",
        "",
    ]
    for listener in lb.listeners:
        pool = lb.pool(listener.pool)
        if pool is None:  # the reader refuses this; a guard, not a case
            continue
        lines += [
            f"frontend l_{listener.name}",
            f"  bind {vip}:{listener.port}",
            f"  mode {_mode(pool)}",
            f"  default_backend p_{pool.name}",
            "",
        ]
    for pool in lb.pools:
        lines += [f"backend p_{pool.name}", f"  mode {_mode(pool)}"]
        lines.append(f"  balance {_ALGORITHMS[pool.algorithm]}")
        check = ""
        m = pool.monitor
        if m is not None:
            # PING and UDP-CONNECT are checked as a TCP connect: HAProxy sends no ICMP.
            check = f" check inter {m.delay_s}s fall {m.max_retries} rise 1"
            if m.type in (MonitorType.HTTP, MonitorType.HTTPS):
                lines.append(f"  option httpchk GET {m.url_path}")
                lines.append(f"  http-check expect status {m.expected_codes.split(',')[0]}")
        for s in cluster.members(pool.members.target, pool.members.part):
            lines.append(f"  server {s.name} {s.address}:{pool.member_port} source {vip}{check}")
        lines.append("")
    return "\n".join(lines)


def haproxy(search: str | None = None) -> str:
    """haproxy's path: looked for on `search` (PATH-style), by default PATH then /usr/sbin."""
    path = shutil.which("haproxy", path=search)
    if path is None and search is None and os.access("/usr/sbin/haproxy", os.X_OK):
        path = "/usr/sbin/haproxy"
    if path is None:
        raise NetworkToolsMissingError((PACKAGE,), "load balancers on local need haproxy")
    return path


def _pid(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


async def _run(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace")


def _abstract(name: str) -> str:
    """HAProxy binds an `abns@` socket on the whole 108-byte address, zeros included."""
    return ("\0" + name).ljust(108, "\0")


class Balancer:
    """One load balancer's files (config, pid, stats socket) and its process."""

    def __init__(self, directory: Path, name: str) -> None:
        self.config = directory / f"lb-{name}.cfg"
        self.pidfile = directory / f"lb-{name}.pid"
        # An abstract socket: a path under a deep home can pass the 107 bytes a unix socket
        # name may have; the digest of the config's path names it instead.
        digest = hashlib.sha256(str(self.config.resolve()).encode()).hexdigest()[:32]
        self.socket = f"shoal-lb-{digest}"

    def running(self) -> int | None:
        return _pid(self.pidfile)

    async def ensure(self, text: str) -> bool:
        """Serve `text`; True when it (re)started. A config that did not change and a process
        that runs: nothing to do."""
        old = self.running()
        if old is not None and self.config.exists() and self.config.read_text() == text:
            return False
        exe = haproxy()
        candidate = self.config.with_suffix(".new")
        candidate.write_text(text)
        code, out = await _run(exe, "-c", "-q", "-f", str(candidate))
        if code != 0:
            candidate.unlink(missing_ok=True)
            raise HaproxyError(f"haproxy refused the configuration: {out.strip()[-2000:]}")
        candidate.replace(self.config)
        args = [exe, "-D", "-f", str(self.config), "-p", str(self.pidfile)]
        if old is not None:
            args += ["-sf", str(old)]
        code, out = await _run(*args)
        if code != 0:
            raise HaproxyError(f"haproxy would not start: {out.strip()[-2000:]}")
        return True

    async def stop(self) -> None:
        pid = self.running()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if _pid(self.pidfile) is None:
                    break
                await asyncio.sleep(0.02)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for f in (self.config, self.pidfile):
            f.unlink(missing_ok=True)

    async def health(self) -> dict[tuple[str, str], MemberHealth]:
        """(backend, server) -> health, from the stats socket; {} when it does not answer."""
        if self.running() is None:
            return {}
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(_abstract(self.socket)), 2.0
            )
        except (OSError, TimeoutError):
            return {}
        try:
            writer.write(b"show stat\n")
            await writer.drain()
            data = await asyncio.wait_for(reader.read(1 << 20), 2.0)
        except (OSError, TimeoutError):
            return {}
        finally:
            writer.close()
        out: dict[tuple[str, str], MemberHealth] = {}
        for line in data.decode(errors="replace").splitlines():
            cells = line.split(",")
            if line.startswith("#") or len(cells) < 18 or cells[1] in ("FRONTEND", "BACKEND"):
                continue
            status = cells[17].split(" ")[0] if not cells[17].startswith("no check") else "UP"
            out[(cells[0], cells[1])] = _STATUS.get(status, MemberHealth.UNKNOWN)
        return out

    async def state(self, lb: LoadBalancer, cluster: ClusterNetworks, vip: str) -> BalancerState:
        health = await self.health()
        members: list[PoolMemberState] = []
        for pool in lb.pools:
            for s in cluster.members(pool.members.target, pool.members.part):
                h = health.get((f"p_{pool.name}", s.name), MemberHealth.UNKNOWN)
                members.append(PoolMemberState(s.name, s.address, pool.member_port, h))
        return BalancerState(lb.name, vip, tuple(x.port for x in lb.listeners), tuple(members))
