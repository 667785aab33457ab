"""Providers by name, so the CLI and the engine can make one from configuration strings.

`make_provider("local", home=..., options={})` gives a `LocalProvider` owning `home/local`;
`make_provider("sim", home=..., options={"hosts": 500, "zones": 3})` a `SimProvider` over a
synthetic inventory. Option values may arrive as strings (from a command line) and are
converted here; an unknown name or option is a `ValueError`, said in the user's own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shoal.model.catalogs import default_inventory, synthetic_inventory
from shoal.model.inventory import Inventory
from shoal.providers.base import Provider

OptionValue = str | float | int

PROVIDERS = ("local", "sim", "openstack")

_LOCAL_OPTIONS = {
    "boot_timeout_s": float,
    "port": int,
    "stop_grace_s": float,
    "agent_poll_s": float,
    "sandbox": str,
    "isolation": str,
    "containers": str,
    "replicas": str,
}
_SIM_OPTIONS = {
    "create_latency_s": float,
    "delete_latency_s": float,
    "failure_rate": float,
    "seed": int,
    "hosts": int,
    "zones": int,
    "state_path": str,
    "real_cloud": bool,
    "deploy_s": float,
    "deploy_failure_rate": float,
    "hang_path": str,
}
_OPENSTACK_CONNECTION = {
    "cloud": str,
    "region": str,
    "auth_type": str,
    "compute_endpoint": str,
    "block_storage_endpoint": str,
    "image_endpoint": str,
    "network_endpoint": str,
    "load_balancer_endpoint": str,
}
_OPENSTACK_OPTIONS = {
    **_OPENSTACK_CONNECTION,
    "mode": str,
    "pin": str,
    "network": str,
    "poll_interval_s": float,
    "boot_timeout_s": float,
    "request_timeout_s": float,
    "concurrency": int,
    "slots_per_zone": int,
    "cpu_allocation_ratio": float,
    "ram_allocation_ratio": float,
    "agent_poll_s": float,
}


def make_provider(
    name: str,
    *,
    home: Path,
    options: Mapping[str, OptionValue] | None = None,
    inventory: Inventory | None = None,
) -> Provider:
    """A provider by name. `home` is Shoal's home; a provider keeps its files beneath it.

    `inventory` (hosts and catalog, e.g. read from an inventory file) replaces the provider's
    default inventory.
    """
    opts = dict(options or {})
    if name == "local":
        return _local(Path(home) / "local", _convert(name, opts, _LOCAL_OPTIONS), inventory)
    if name == "sim":
        from shoal.providers.sim.provider import SimProvider

        o = _convert(name, opts, _SIM_OPTIONS)
        seed = int(o.get("seed", 0))
        if inventory is not None:
            chosen = inventory
        elif "hosts" in o:
            chosen = synthetic_inventory(int(o["hosts"]), int(o.get("zones", 1)), seed=seed)
        elif "zones" in o:
            raise ValueError("sim option zones needs hosts as well")
        else:
            chosen = default_inventory()
        # The simulated cloud outlives one Shoal process by default (embedded commands each open
        # a new one); `state_path: memory` keeps it in memory, for benchmarks.
        given = str(o.get("state_path", "sim.db"))
        state_path: Path | None = None
        if given != "memory":
            state_path = Path(given)
            if not state_path.is_absolute():
                state_path = Path(home) / state_path
        return SimProvider(
            chosen,
            create_latency_s=float(o.get("create_latency_s", 0.0)),
            delete_latency_s=float(o.get("delete_latency_s", 0.0)),
            failure_rate=float(o.get("failure_rate", 0.0)),
            seed=seed,
            state_path=state_path,
            real_cloud=bool(o.get("real_cloud", False)),
            deploy_s=float(o.get("deploy_s", 0.0)),
            deploy_failure_rate=float(o.get("deploy_failure_rate", 0.0)),
            hang_path=Path(str(o["hang_path"])) if o.get("hang_path") else None,
        )
    if name == "openstack":
        return _openstack(_convert(name, opts, _OPENSTACK_OPTIONS))
    raise ValueError(f"no provider named {name!r}; known: {', '.join(PROVIDERS)}")


def _local(home: Path, o: dict[str, OptionValue], inventory: Inventory | None) -> Provider:
    from shoal.providers.local.options import LocalOptions
    from shoal.providers.local.provider import LocalProvider

    options = LocalOptions(
        boot_timeout_s=float(o.get("boot_timeout_s", 15.0)),
        port=int(o.get("port", 8080)),
        stop_grace_s=float(o.get("stop_grace_s", 3.0)),
        agent_poll_s=float(o.get("agent_poll_s", 5.0)),
        sandbox=str(o.get("sandbox", "bwrap")),  # issue 29: bwrap | off
        isolation=str(o.get("isolation", "auto")),  # issue 39: auto | netns | off
        containers=str(o.get("containers", "auto")),
        replicas=str(o.get("replicas", "podman")),  # issue 22: podman | agents
    )
    return LocalProvider(home, inventory, options)


def _openstack(o: dict[str, OptionValue]) -> Provider:
    """An `OpenStackProvider`; credentials from `cloud` (clouds.yaml) or the OS_* variables,
    endpoints overridable (an `auth_type: none` cloud, as in tests, needs them)."""
    from shoal.providers.openstack.options import OpenStackOptions
    from shoal.providers.openstack.provider import OpenStackProvider

    connect_args: dict[str, Any] = {}
    for key in _OPENSTACK_CONNECTION:
        if key in o:
            value = str(o[key])
            if key.endswith("_endpoint"):
                connect_args[f"{key}_override"] = value
            elif key == "region":
                connect_args["region_name"] = value
            else:
                connect_args[key] = value
    if "block_storage_endpoint_override" in connect_args:
        connect_args["block_storage_api_version"] = "3"

    def connection() -> object:
        import openstack

        return openstack.connect(**connect_args)

    options = OpenStackOptions(
        mode=str(o.get("mode", "auto")),
        pin=str(o.get("pin", "force")),
        network=str(o.get("network", "auto")),
        poll_interval_s=float(o.get("poll_interval_s", 1.0)),
        boot_timeout_s=float(o.get("boot_timeout_s", 600.0)),
        request_timeout_s=float(o.get("request_timeout_s", 60.0)),
        concurrency=int(o.get("concurrency", 16)),
        slots_per_zone=int(o.get("slots_per_zone", 32)),
        cpu_allocation_ratio=float(o.get("cpu_allocation_ratio", 1.0)),
        ram_allocation_ratio=float(o.get("ram_allocation_ratio", 1.0)),
        agent_poll_s=float(o.get("agent_poll_s", 30.0)),
    )
    return OpenStackProvider(connection, options)


_WANTED = {int: "an integer", float: "a number", str: "a string"}


def _convert(
    provider: str, options: dict[str, OptionValue], known: Mapping[str, type]
) -> dict[str, OptionValue]:
    out: dict[str, OptionValue] = {}
    for key, value in options.items():
        kind = known.get(key)
        if kind is None:
            raise ValueError(
                f"{provider} provider has no option {key!r}; known: {', '.join(sorted(known))}"
            )
        try:
            out[key] = kind(value)
        except (TypeError, ValueError) as e:
            wanted = _WANTED.get(kind, kind.__name__)
            raise ValueError(f"{provider} option {key}: {value!r} is not {wanted}") from e
    return out
