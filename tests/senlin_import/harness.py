"""A real Senlin 16 database on the machine's MariaDB: `db_sync` by `senlin-manage`, then rows
written through Senlin's own DB API (never hand-written SQL), for the import to read."""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql

from tests.senlin_import.venv import senlin_venv

MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root"}
SEED = Path(__file__).with_name("senlin_seed.py")


def _admin(sql: str) -> None:
    conn = pymysql.connect(**MARIADB, autocommit=True)  # type: ignore[arg-type]
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


@dataclass
class SenlinDb:
    """One fresh Senlin database; `url` is what `shoal import senlin --database` takes."""

    name: str
    workdir: Path
    steps: list[list[Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"mysql+pymysql://root@127.0.0.1:3306/{self.name}"

    def sync(self) -> None:
        venv = senlin_venv()
        conf = self.workdir / "senlin.conf"
        conf.write_text(f"[database]\nconnection = {self.url}\n")
        subprocess.run(
            [str(venv / "bin" / "senlin-manage"), "--config-file", str(conf), "db_sync"],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def call(self, function: str, *args: Any) -> None:
        """Queue one `senlin.db.api` call; `flush` runs them all in one Senlin process."""
        self.steps.append([function, *args])

    def flush(self) -> None:
        if not self.steps:
            return
        body = json.dumps({"connection": self.url, "steps": self.steps})
        self.steps = []
        done = subprocess.run(
            [str(senlin_venv() / "bin" / "python"), str(SEED)],
            input=body,
            text=True,
            capture_output=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"Senlin's DB API refused the rows:\n{done.stderr[-3000:]}")

    def drop(self) -> None:
        _admin(f"DROP DATABASE IF EXISTS `{self.name}`")

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, for before/after comparisons."""
        conn = pymysql.connect(**MARIADB, database=self.name)  # type: ignore[arg-type]
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW TABLES")
                tables = [r[0] for r in cur.fetchall()]
                out = {}
                for t in tables:
                    cur.execute(f"SELECT * FROM `{t}`")
                    out[t] = sorted(cur.fetchall(), key=repr)
                return out
        finally:
            conn.close()


def fresh_senlin_db(workdir: Path) -> SenlinDb:
    db = SenlinDb(f"senlin_{uuid.uuid4().hex[:10]}", workdir)
    _admin(f"CREATE DATABASE `{db.name}` CHARACTER SET utf8mb4")
    db.sync()
    return db
