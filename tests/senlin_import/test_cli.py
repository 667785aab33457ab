"""`shoal import senlin --database URL [--project P] [--dry-run] -o json`, the real command
against a background Shoal on sim whose cloud holds the servers Senlin's rows name: exit 0
done, 1 a refused cluster or an unreadable database, 2 invalid input."""

from __future__ import annotations

import json
from pathlib import Path

from shoal.model.catalogs import default_inventory
from shoal.providers.sim.provider import SimProvider
from tests.cli.support import Shoal
from tests.senlin_import.harness import SenlinDb
from tests.senlin_import.scenario import NOVA, PROJECT, Writer, new_id


async def test_cli_dry_run_import_and_exit_codes(senlin_db: SenlinDb, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    inventory = default_inventory()
    # The simulated cloud the background Shoal will open (its state file), servers made first.
    cloud = SimProvider(inventory, state_path=home / "sim.db")
    w = Writer(senlin_db, cloud, inventory)
    w.profile("nova", NOVA)
    w.cluster("api", "nova", desired=2, min_size=1, max_size=4)
    await w.node("api-1", "api", "nova", 1, host="az1-host1")
    await w.node("api-2", "api", "nova", 2, host="az2-host1")
    w.cluster("busy", "nova", desired=0)
    senlin_db.call("cluster_lock_acquire", w.out.clusters["busy"], new_id(), -1)
    senlin_db.flush()
    await cloud.close()
    shoal = Shoal(home, provider="sim", provider_options={"state_path": "sim.db"})

    dry = shoal("import", "senlin", "--database", senlin_db.url, "--dry-run", "-o", "json")
    assert dry.returncode == 1, dry.stderr  # the busy cluster is refused
    plan = json.loads(dry.stdout)
    outcomes = {c["name"]: c["outcome"] for c in plan["clusters"]}
    assert outcomes == {"api": "import", "busy": "refused"} and plan["dry_run"] is True
    assert shoal("get", "clusters", "-o", "json").stdout.count('"api"') == 0
    shown = shoal("import", "senlin", "--database", senlin_db.url, "--dry-run")
    assert shown.returncode == 1 and "dry run" in shown.stdout, shown.stderr
    assert "cluster_lock" in shown.stdout and "not copied" in shown.stdout

    done = shoal(
        "import", "senlin", "--database", senlin_db.url, "--project", PROJECT, "-o", "json"
    )
    assert done.returncode == 1, done.stderr  # busy, still refused
    report = json.loads(done.stdout)
    assert report["summary"]["imported"] == 1 and report["summary"]["nodes_adopted"] == 2
    api = next(c for c in report["clusters"] if c["name"] == "api")
    assert {n["physical_id"]: n["host"] for n in api["nodes"]} == {
        w.out.servers["api-1"]: "az1-host1",
        w.out.servers["api-2"]: "az2-host1",
    }
    again = shoal(
        "import", "senlin", "--database", senlin_db.url, "--project", "other", "-o", "json"
    )
    assert again.returncode == 0 and json.loads(again.stdout)["clusters"] == []

    bad = shoal("import", "senlin", "--database", "postgresql://x/y", "-o", "json")
    assert bad.returncode == 2 and "/database" in bad.stderr
    gone = shoal("import", "senlin", "--database", "mysql+pymysql://root@127.0.0.1:1/x")
    assert gone.returncode == 1, gone.stderr
