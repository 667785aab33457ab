"""The connection type the Senlin façade's services pass to its repositories.

The services above `store/` hold a transaction open across several repository calls but may
not import SQLAlchemy (the store boundary, issue 10): they name the connection by this alias.
"""

from __future__ import annotations

from typing import TypeAlias

from sqlalchemy import Connection

Conn: TypeAlias = Connection
