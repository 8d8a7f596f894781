"""Python numbers narrowed to C integer fields, checked as upstream's Cython layer checks them.

Every value that ends up in a fixed-width C field (a ``DLDevice``'s type and
index, a ``DLDataType``'s code, bits and lanes, the device arguments of the
stream functions) goes through :func:`narrow` first, so that an out-of-range
number raises ``OverflowError`` with Cython's words instead of wrapping
(``device("cpu:4294967296")`` must not reach a kernel as device 0). ctypes
fields and arguments truncate silently, so the reference front end needs this
on every such path; the fast front end's C encoder checks the same ranges.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

#: C type -> (lowest, highest, whether it is unsigned).
_RANGES: Dict[str, Tuple[int, int, bool]] = {
    "int": (-(1 << 31), (1 << 31) - 1, False),
    "int16_t": (-(1 << 15), (1 << 15) - 1, False),
    "int32_t": (-(1 << 31), (1 << 31) - 1, False),
    "int64_t": (-(1 << 63), (1 << 63) - 1, False),
    "uint8_t": (0, (1 << 8) - 1, True),
    "uint16_t": (0, (1 << 16) - 1, True),
    "uint64_t": (0, (1 << 64) - 1, True),
}


def as_c_int(value: Any) -> int:
    """How Cython reads a Python value as a C integer: ints as they are, other numbers
    through ``__int__`` (so ``4.0`` is ``4``), anything else a ``TypeError``."""
    if isinstance(value, int):
        return int(value)  # a bool (or other int subclass) is stored as its number
    to_int = getattr(type(value), "__int__", None)
    if to_int is None:
        raise TypeError("an integer is required")
    result = to_int(value)
    if not isinstance(result, int):
        raise TypeError(f"__int__ returned non-int (type {type(result).__name__})")
    return result


def narrow(value: Any, ctype: str) -> int:
    """``value`` as the C integer type ``ctype`` (``"int32_t"``, ``"uint8_t"``, ...).

    Raises ``OverflowError`` with Cython's message when it does not fit: first
    against the C ``long`` / ``unsigned long`` Cython reads through, then
    against ``ctype`` itself.
    """
    lowest, highest, unsigned = _RANGES[ctype]
    number = as_c_int(value)
    if unsigned:
        if number < 0:
            raise OverflowError(f"can't convert negative value to {ctype}")
        if number >= 1 << 64:
            raise OverflowError("Python int too large to convert to C unsigned long")
    elif not -(1 << 63) <= number < 1 << 63:
        raise OverflowError("Python int too large to convert to C long")
    if not lowest <= number <= highest:
        raise OverflowError(f"value too large to convert to {ctype}")
    return number
