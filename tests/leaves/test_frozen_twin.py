"""`check_twin` (issue 40): a twin that drifts from its frozen class in slots, order, a type,
a default or a field it leaves out fails at import; a faithful one passes."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest

from shoal.frozen_twin import become, check_twin


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: str | None
    z: float = 1.5


class Faithful:
    __slots__ = Point.__slots__

    def __init__(self, x: int, y: str | None) -> None:
        self.x = x
        self.y = y
        self.z = 1.5


def test_a_faithful_twin_passes_and_becomes_an_equal_frozen_value() -> None:
    check_twin(Faithful, Point)
    p = become(Faithful(1, "a"), Point)
    assert p == Point(1, "a") and type(p) is Point
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]


class WrongType:
    __slots__ = Point.__slots__

    def __init__(self, x: int, y: str) -> None:
        self.x = x
        self.y = y
        self.z = 1.5


class WrongOrder:
    __slots__ = Point.__slots__

    def __init__(self, y: str | None, x: int) -> None:
        self.x = x
        self.y = y
        self.z = 1.5


class WrongDefault:
    __slots__ = Point.__slots__

    def __init__(self, x: int, y: str | None, z: float = 2.5) -> None:
        self.x = x
        self.y = y
        self.z = z


class LeftOut:
    __slots__ = Point.__slots__

    def __init__(self, x: int, y: str | None) -> None:
        self.x = x
        self.y = y
        self.z = 0.0


class Swapped:
    __slots__ = Point.__slots__

    def __init__(self, x: int, y: str | None) -> None:
        self.x = y
        self.y = x
        self.z = 1.5


class NoDefaultLeft:
    __slots__ = Point.__slots__

    def __init__(self, x: int) -> None:
        self.x = x
        self.y = None
        self.z = 1.5


@pytest.mark.parametrize(
    ("twin", "words"),
    [
        (WrongType, "y is str"),
        (WrongOrder, "first fields"),
        (WrongDefault, "z defaults to 2.5"),
        (LeftOut, "set z to its default"),
        (Swapped, "does not set x"),
        (NoDefaultLeft, "without a default"),
    ],
)
def test_a_drifted_twin_fails(twin: type, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        check_twin(twin, Point)


def test_slots_must_be_the_fields() -> None:
    class Other:
        __slots__ = ("y", "x", "z")  # noqa: RUF023 (out of order on purpose)

        def __init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="as slots"):
        check_twin(Other, Point)
