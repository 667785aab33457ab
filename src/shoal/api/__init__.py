"""The HTTP API: native /v1 and the seed blueprint's /v2/{tenant_id}/vclusters, on FastAPI.

Routes are thin: they authenticate, call the service, and shape the answer. Every error leaves
here in one shape, `{"error": {"code", "title", "message", "details"}}`.
"""
