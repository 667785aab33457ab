"""Real containers for workloads' tests: the fixtures of tests/containers (a home with the
busybox image imported, swept of every node's containers at teardown; a Shoal server)."""

from tests.containers.conftest import home, start_server

__all__ = ["home", "start_server"]
