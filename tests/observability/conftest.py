"""The API fixture of tests/api (real app, real store on SQLite and PostgreSQL, sim provider)."""

from tests.api.conftest import Api, api

__all__ = ["Api", "api"]
