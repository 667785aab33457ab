"""The secret a webhook call carries, including Senlin's own `?V=1` URLs.

Senlin's webhook URLs (`/v1/webhooks/{id}/trigger?V=2&<params>` from Senlin 16, whose
webhook version is 2; `?V=1` from older releases) carry no token: the receiver id in the
URL is the capability. A receiver imported from Senlin (`shoal import senlin`) keeps that URL
working by having its id as its secret; every other receiver's secret is random, so a call
without `token` still finds nothing to run for it.
"""

from __future__ import annotations

SENLIN_WEBHOOK_VERSIONS = frozenset({"1", "2"})
"""Senlin 16 hands out `?V=2` (found by running it: tests/senlin_live), earlier ones `?V=1`."""


def webhook_secret(receiver_id: str, token: str | None, version: str | None) -> str | None:
    if token:
        return token
    return receiver_id if version in SENLIN_WEBHOOK_VERSIONS else None
