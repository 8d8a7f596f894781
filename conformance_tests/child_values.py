"""The plain Python values a recipe can ask for that no front end defines: an object no rule
converts, an exception class nobody registers, and floats given by their bits."""

from __future__ import annotations

import struct


class Opaque:
    """A Python object no rule converts: it travels as an OpaquePyObject."""

    def __init__(self, tag: int):
        self.tag = tag

    def __repr__(self) -> str:
        return f"Opaque({self.tag})"


class ConformanceError(RuntimeError):
    """An exception class nobody registers: crosses as kind "RuntimeError" (or its name)."""


EXCEPTIONS = {
    cls.__name__: cls
    for cls in (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
                AssertionError, ZeroDivisionError, NotImplementedError, MemoryError,
                ConformanceError)
}


def float_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def bits_of_float(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]
