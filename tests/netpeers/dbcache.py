"""The peers' database schema, migrated once and then loaded from a dump.

Neutron's ~400 alembic migrations take about a minute on MariaDB (Octavia's about 15 s); the
schema they make depends only on the pinned release. The first run migrates for real and
saves `mysqldump`'s output (schema and the lookup rows the migrations insert) next to the
venv; later runs load that dump into their fresh database in a few seconds. Without the
MariaDB client tools every run migrates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit


def _client_args(url: str) -> tuple[list[str], str]:
    parts = urlsplit(url)
    args = ["-h", parts.hostname or "127.0.0.1", "-P", str(parts.port or 3306)]
    args += ["-u", parts.username or "root"]
    if parts.password:
        args.append(f"-p{parts.password}")
    return args, parts.path.lstrip("/")


def prepare(url: str, cache: Path | None, migrate: list[str]) -> str:
    """Give the database at `url` its schema; returns "dump" or "migrations"."""
    args, db = _client_args(url)
    mysql, dump = shutil.which("mysql"), shutil.which("mysqldump")
    if cache is not None and cache.exists() and mysql:
        with open(cache, "rb") as src:
            subprocess.run([mysql, *args, db], stdin=src, check=True)
        return "dump"
    subprocess.run(migrate, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if cache is not None and dump:
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as out:
            subprocess.run([dump, *args, "--skip-comments", db], stdout=out, check=True)
        tmp.replace(cache)
    return "migrations"
