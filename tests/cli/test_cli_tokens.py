"""`shoal project token create|list|revoke` and `--expires` (issue 9, point 7)."""

from __future__ import annotations

from datetime import datetime

from tests.cli.support import Shoal, explain


def test_tokens_are_issued_listed_and_revoked(shoal: Shoal) -> None:
    made = shoal.json("project", "create", "team-t", "--expires", "2h")
    info = made["token_info"]
    created = datetime.fromisoformat(info["created_at"])
    assert (datetime.fromisoformat(info["expires_at"]) - created).total_seconds() == 7200

    extra = shoal.json("project", "token", "create", "team-t", "--name", "ci", "--expires", "never")
    assert extra["token"] and extra["token_info"]["expires_at"] is None

    revoked = shoal.json("project", "token", "revoke", info["id"])
    assert revoked["token_info"]["status"] == "REVOKED"
    listed = shoal.json("project", "token", "list", "team-t")["tokens"]
    assert {t["name"]: t["status"] for t in listed} == {"first": "REVOKED", "ci": "ACTIVE"}
    table = shoal.ok("project", "token", "list", "team-t").stdout
    assert "REVOKED" in table and "never" in table and extra["token"] not in table


def test_a_bad_expiry_or_token_is_refused(shoal: Shoal) -> None:
    for bad in ("soon", "0", "5w", "-1d"):
        done = shoal("project", "create", "team-x", "--expires", bad)
        assert done.returncode == 2, explain(done)
        assert "--expires" in done.stderr
    unknown = shoal("project", "token", "revoke", "no-such-token")
    assert unknown.returncode == 2, explain(unknown)
