"""The service's front door: requests become validated, placed, persisted actions.

Both the HTTP API and the embedded CLI call these functions; nothing here knows about HTTP.
Every refusal is a `ServiceError` with a status, a code and details, raised before anything
is written, so a refused request changes nothing.
"""
