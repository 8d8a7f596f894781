"""Reading C memory in bulk: a struct's fields or a run of bytes at an address, in one step.

Walks over large values (structural hash and equality) read two things per element: an
object's header fields and its slot table. Through ctypes each read makes a ctypes object
(``T.from_address(address)``, then ``.raw`` or a field): 0.5-1 us. Here, on CPython, the
process's address space is one read-only ``memoryview`` (:data:`MEMORY`, a view of a
``c_char`` array at address 0; nothing is copied or mapped), so that
reading a struct's fields there (:func:`reader`) or a run of bytes (:func:`bytes_at`) is one C
call (~0.15 us). Only addresses of live objects are ever read, exactly as ``from_address``
would read them. PyPy's ctypes cannot make such a view: there the same two functions read
through ``from_address``.
"""

from __future__ import annotations

import ctypes
import functools
import struct
from typing import Callable, Optional, Tuple

#: The user address space of a 64-bit process (x86-64 and AArch64 use at most 2**48 bytes).
_ADDRESS_SPAN = 1 << 48


def _whole_memory() -> Optional[memoryview]:
    try:
        return memoryview((ctypes.c_char * _ADDRESS_SPAN).from_address(0)).cast("B").toreadonly()
    except (MemoryError, OverflowError, ValueError):  # PyPy: no view of that span
        return None


#: The process's memory as bytes (address = index), or None where it cannot be viewed.
MEMORY = _whole_memory()


def reader(layout: struct.Struct) -> Callable[[int], Tuple]:
    """A function of an address returning ``layout``'s fields read there (on CPython a
    ``partial`` of ``unpack_from``: no Python frame per read)."""
    if MEMORY is not None:
        return functools.partial(layout.unpack_from, MEMORY)
    return lambda address: layout.unpack((ctypes.c_char * layout.size).from_address(address).raw)


if MEMORY is not None:
    def bytes_at(address: int, size: int) -> bytes:
        """``size`` bytes copied from ``address``."""
        return MEMORY[address:address + size].tobytes()
else:
    def bytes_at(address: int, size: int) -> bytes:
        """``size`` bytes copied from ``address``."""
        return (ctypes.c_char * size).from_address(address).raw if size else b""
