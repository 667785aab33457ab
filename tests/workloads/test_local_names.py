"""The local replica runtime's pure parts: container names from replica keys (allowed
characters only, distinct per key) and Kubernetes' `$(VAR)` expansion of command and args."""

from __future__ import annotations

import re

from shoal.providers.local.replicas import container_name, expand


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
