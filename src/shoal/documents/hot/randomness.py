"""`OS::Heat::RandomString`'s value: drawn as Heat draws it, once per cluster, then kept.

Heat makes the string when the resource is created and keeps it until a property changes
(`salt` exists only to force that). Shoal draws it while reading the template (with the
system's CSPRNG), keeps it as one of the cluster's secrets (stored with the cluster, served
only in a node's metadata) and marks it with a fingerprint of the properties it was drawn
from: an update whose RandomString has the same fingerprint keeps the value already stored
(`service/edits.py` `keep_generated`), a changed `salt` or length draws a new one.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import string

from shoal.documents.hot.shapes import RandomShape
from shoal.model.software import GENERATED_MARK

CLASS_CHARACTERS = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": string.digits + "ABCDEF",
    "octdigits": string.octdigits,
}
CHARACTER_CLASSES = tuple(CLASS_CHARACTERS)
DEFAULT_CLASS = "lettersdigits"


def generate(r: RandomShape) -> str:
    """Heat's `password_gen.generate_password`: each class's and sequence's minimum first,
    the rest from every allowed character together, then shuffled."""
    pools = [(CLASS_CHARACTERS[c], n) for c, n in r.classes] + list(r.sequences)
    if not pools:
        pools = [(CLASS_CHARACTERS[DEFAULT_CLASS], 0)]
    chars = [secrets.choice(pool) for pool, n in pools for _ in range(n)]
    allowed = "".join(sorted({ch for pool, _ in pools for ch in pool}))
    chars += [secrets.choice(allowed) for _ in range(max(0, r.length - len(chars)))]
    shuffled = []
    while chars:
        shuffled.append(chars.pop(secrets.randbelow(len(chars))))
    return "".join(shuffled)


def fingerprint(r: RandomShape) -> str:
    """What the value was drawn from (not the value): equal fingerprints keep the value."""
    drawn_from = {
        "length": r.length,
        "classes": r.classes,
        "sequences": r.sequences,
        "salt": r.salt,
    }
    text = json.dumps(drawn_from, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def mark(r: RandomShape) -> str:
    """The description of the hidden parameter that stores the value."""
    return f"{GENERATED_MARK} {fingerprint(r)}"
