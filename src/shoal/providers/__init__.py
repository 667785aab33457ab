"""Backends that really create things, behind one protocol (`base.Provider`).

Vendor errors are translated at this boundary into `shoal.providers.errors`, so nothing above it
ever sees a subprocess, an SDK or an HTTP exception.
"""
