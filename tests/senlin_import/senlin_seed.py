"""Writes Senlin rows through Senlin's own DB API (`senlin.db.api`), run by the Senlin venv.

Reads a JSON document on stdin: `{"connection": URL, "steps": [[function, args...], ...]}`;
each step calls `senlin.db.api.<function>(context, *args)` (or without a context for the lock
functions, as Senlin's engine calls them) and nothing else touches the tables: the rows are
exactly the ones Senlin 16 itself writes. Prints `{"ok": N}`.
"""

import datetime
import json
import sys

from oslo_config import cfg

NO_CONTEXT = {"cluster_lock_acquire", "node_lock_acquire"}
STAMPED = {"cluster_create", "node_create", "profile_create", "policy_create", "receiver_create"}


def main() -> None:
    data = json.load(sys.stdin)
    from oslo_db import options as db_options
    from senlin.common import context as senlin_context
    from senlin.db import api

    cfg.CONF([], project="senlin")
    db_options.set_defaults(cfg.CONF, connection=data["connection"])

    ctx = senlin_context.get_admin_context()
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    for step in data["steps"]:
        name, args = step[0], list(step[1:])
        if name in STAMPED:
            values = args[-1]
            values.setdefault("created_at", now)
            if name in ("cluster_create", "node_create"):
                values.setdefault("init_at", now)
        fn = getattr(api, name)
        fn(*args) if name in NO_CONTEXT else fn(ctx, *args)
    print(json.dumps({"ok": len(data["steps"])}))


if __name__ == "__main__":
    main()
