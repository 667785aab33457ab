"""Making providers by name, from options that may arrive as strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.providers.base import Provider
from shoal.providers.local import LocalProvider
from shoal.providers.registry import make_provider
from shoal.providers.sim import SimProvider

pytestmark = pytest.mark.asyncio


async def test_sim_with_a_synthetic_inventory(tmp_path: Path) -> None:
    sim = make_provider(
        "sim",
        home=tmp_path,
        options={"hosts": "12", "zones": 3, "failure_rate": "0", "state_path": "sim.db"},
    )
    assert isinstance(sim, SimProvider) and isinstance(sim, Provider)
    inventory = await sim.inventory()
    assert len(inventory.hosts) == 12 and inventory.zones == ("az1", "az2", "az3")
    await sim.close()
    assert (tmp_path / "sim.db").exists()


async def test_sim_defaults_to_the_default_inventory(tmp_path: Path) -> None:
    sim = make_provider("sim", home=tmp_path, options={})
    assert (await sim.inventory()).hosts[0].name == "az1-host1"


async def test_local_lives_under_home(tmp_path: Path) -> None:
    local = make_provider("local", home=tmp_path, options={"port": "9090"})
    assert isinstance(local, LocalProvider)
    assert local.home == tmp_path / "local" and local.port == 9090


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("nova", {}, "no provider named 'nova'"),
        ("sim", {"speed": 1}, "no option 'speed'"),
        ("sim", {"seed": "x"}, "not an integer"),
        ("sim", {"zones": 2}, "needs hosts"),
    ],
)
async def test_bad_configuration_is_a_value_error(
    tmp_path: Path, name: str, options: dict[str, str | int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_provider(name, home=tmp_path, options=options)
