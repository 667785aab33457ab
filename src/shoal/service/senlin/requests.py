"""Reading Senlin request fields the way Senlin did: integers may come as strings, booleans as
"true"/"false"; a bad value is a 400 naming the field."""

from __future__ import annotations

from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.shapes import JsonObject


def as_int(
    name: str,
    value: object,
    *,
    allow_zero: bool = True,
    allow_negative: bool = False,
) -> int:
    result: int | None = None
    if isinstance(value, bool):
        result = None
    elif isinstance(value, int):
        result = value
    elif isinstance(value, float) and value.is_integer():
        result = int(value)
    elif isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text.startswith("-") else text
        if digits.isdigit():
            result = int(text)
    if result is None or (result == 0 and not allow_zero) or (result < 0 and not allow_negative):
        raise BadRequest(f"Invalid value '{value}' specified for '{name}'")
    return result


def as_number(name: str, value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise BadRequest(f"Invalid value '{value}' specified for '{name}'")


def as_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise BadRequest(f"Invalid value '{value}' specified for '{name}'")


def as_map(name: str, value: object) -> JsonObject:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"The '{name}' must be a map.")
    return dict(value)


def envelope(body: object, key: str) -> JsonObject:
    """`body[key]`, Senlin's request envelope ({"cluster": {...}})."""
    if not isinstance(body, dict) or not isinstance(body.get(key), dict):
        raise BadRequest(f"Malformed request data, missing '{key}' key in request body.")
    inner: JsonObject = body[key]
    return inner
