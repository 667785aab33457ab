"""Where a client command's Shoal is: `home`, `url` and `token`, read without pydantic.

The full `Settings` (pydantic-settings) costs more start-up time than a client command may
spend, and a client needs only three values. They are read the way `Settings` reads them:
`SHOAL_*` variables win over the TOML file (`SHOAL_CONFIG`, or `$SHOAL_HOME/shoal.toml`), and
the home defaults to the user's data directory. The server reads everything else itself.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from shoal.cli.errors import EXIT_INVALID, CliError


@dataclass(frozen=True, slots=True)
class Where:
    home: Path
    url: str | None
    token: str | None


def _default_home() -> Path:
    explicit = os.environ.get("SHOAL_HOME")
    if explicit:
        return Path(explicit)
    from platformdirs import user_data_dir

    return Path(user_data_dir("shoal", appauthor=False))


def _config() -> dict[str, object]:
    explicit = os.environ.get("SHOAL_CONFIG")
    path = Path(explicit) if explicit else _default_home() / "shoal.toml"
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CliError(f"cannot read the Shoal settings file {path}: {e}", EXIT_INVALID) from None


def _value(name: str, config: dict[str, object]) -> str | None:
    found = os.environ.get(f"SHOAL_{name.upper()}")
    if found is None:
        from_file = config.get(name)
        found = str(from_file) if from_file is not None else None
    return found or None


def where() -> Where:
    config = _config()
    home = _value("home", config)
    return Where(
        Path(home) if home else _default_home(),
        _value("url", config),
        _value("token", config),
    )


def setting(name: str) -> str | None:
    """One setting as written (`SHOAL_<NAME>`, else the TOML file), unchecked; None if unset."""
    return _value(name, _config())


def home_dir() -> Path:
    return where().home
