"""The local replica runtime's pure parts: container names from replica keys (allowed
characters only, distinct per key), Kubernetes' `$(VAR)` expansion of command and args, and how
a secret reaches `podman run`."""

from __future__ import annotations

import re

from shoal.model.workload_rollouts import ContainerRun
from shoal.providers.local.records import ServerRecord
from shoal.providers.local.replicas import container_name, expand, run_argv


def test_container_names_are_podman_names_and_distinct_per_key() -> None:
    a = container_name("c1/api-1", "web")
    b = container_name("c2/api-1", "web")
    odd = container_name("c1/ä p:i-1", "we b")
    for name in (a, b, odd):
        assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*", name), name
    assert a != b and "api-1" in a


def test_dollar_paren_expansion_as_kubernetes() -> None:
    env = {"SHOAL_NODE_ADDRESS": "127.1.1.2", "PORT": "8081"}
    assert expand("-p $(SHOAL_NODE_ADDRESS):$(PORT)", env) == "-p 127.1.1.2:8081"
    assert expand("$(UNKNOWN) ${PORT}", env) == "$(UNKNOWN) ${PORT}"  # left as written


def test_a_secret_is_given_to_podman_by_name_only() -> None:
    """`{secret}` env reaches `podman run` as `--env NAME` with its value in podman's own
    environment: never on the command line (`ps`, logs), nor expanded into command or args."""
    record = ServerRecord(
        "srv-1", "k", "ctl-1", "c", "h", "z", "img", "127.9.9.9", 0, 0, "/w", [], "/", 0.0
    )
    c = ContainerRun(
        "api",
        "img",
        ("sh", "-c", "echo $(PW) $(MODE)"),
        env=(("MODE", "a"),),
        secret_env=(("PW", "s3cret"),),
    )
    argv, extra = run_argv(record, "cid/api-1", "r", c)
    assert argv[0] == "run"
    assert "--env" in argv and "PW" in argv and "MODE=a" in argv
    assert "SHOAL_NODE_ADDRESS=127.9.9.9" in argv and "shoal.server=srv-1" in argv
    assert all("s3cret" not in x for x in argv)
    assert '"echo $(PW) a"' in " ".join(argv)  # (a secret is not expanded onto the line)
    assert extra == {"PW": "s3cret"}
