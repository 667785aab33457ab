"""The end-to-end fixtures (a real `shoal server`, swept at teardown), shared with tests/e2e."""

from tests.e2e.conftest import start_server

__all__ = ["start_server"]
