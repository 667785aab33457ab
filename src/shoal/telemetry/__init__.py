"""Telemetry shared by every layer: Prometheus metrics, request ids, bus notifications.

A leaf beside `clock` and `settings`: it imports nothing else from Shoal, so the engine, the
store, the providers and the API can all record into it without a layer importing a higher one.
"""
