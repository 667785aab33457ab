"""The secrets in the URLs a node's agents use: derived, not stored.

A server's metadata URL carries HMAC(server key, node id); a run's signal URL carries
HMAC(signal key, action id), so each run has its own and a stale run's URL stops working once
another run owns the row. The keys live in the store (`software_keys`); only the signal
secret's hash is kept on the deployment row, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac

SERVER_KEY = "server"
SIGNAL_KEY = "signal"


def derive(key: str, subject: str) -> str:
    return hmac.new(key.encode(), subject.encode(), hashlib.sha256).hexdigest()


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def matches(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())
