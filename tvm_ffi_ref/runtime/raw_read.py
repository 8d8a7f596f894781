"""Reading C memory in bulk: a struct's fields or a run of bytes at an address, in one step.

Walks over large values (structural hash and equality) read two things per element: an
object's header fields and its slot table. Through ctypes each read makes a ctypes object
(``T.from_address(address)``, then ``.raw`` or a field): 0.5-1 us. Here, on CPython, the
process's address space is one read-only ``memoryview`` (:data:`MEMORY`, a view of a
``c_char`` array at address 0; nothing is copied or mapped), so that
reading a struct's fields there (:func:`reader`) or a run of bytes (:func:`bytes_at`) is one C
call (~0.15 us). Only addresses of live objects are ever read, exactly as ``from_address``
would read them.

The view spans every address a ``memoryview`` can index: ``sys.maxsize``, 2**63 - 1 on a
64-bit machine, which holds every user-space address (x86-64 uses up to 57 bits with
5-level paging, AArch64 up to 52). An address the view does not reach (a pointer tagged in
its top bit, say) is still read, through ``from_address``: each read checks that its last
byte lies inside the view, since slicing a ``memoryview`` past its end quietly returns fewer
bytes. PyPy's ctypes cannot make such a view: there every read goes through
``from_address``.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from typing import Callable, Optional, Tuple

#: How many bytes from address 0 :data:`MEMORY` spans: as many as a memoryview can index.
ADDRESS_SPAN = sys.maxsize


def _whole_memory() -> Optional[memoryview]:
    try:
        return memoryview((ctypes.c_char * ADDRESS_SPAN).from_address(0)).cast("B").toreadonly()
    except (MemoryError, OverflowError, ValueError):  # PyPy: no view of that span
        return None


#: The process's memory as bytes (address = index), or None where it cannot be viewed.
MEMORY = _whole_memory()


def _copied(address: int, size: int) -> bytes:
    """``size`` bytes at ``address`` through a ctypes array (any address; one object per read)."""
    return (ctypes.c_char * size).from_address(address).raw if size else b""


def reader(layout: struct.Struct,
           memory: Optional[memoryview] = MEMORY) -> Callable[[int], Tuple]:
    """A function of an address returning ``layout``'s fields read there.

    Fields that lie inside ``memory`` (the process's memory from address 0; a shorter
    view in the tests) are unpacked from it; others are read through ``from_address``.
    """
    unpack, size = layout.unpack, layout.size

    def read_copied(address: int) -> Tuple:
        return unpack(_copied(address, size))

    if memory is None:
        return read_copied
    unpack_from, last = layout.unpack_from, len(memory) - size

    def read(address: int) -> Tuple:
        if address <= last:
            return unpack_from(memory, address)
        return read_copied(address)

    return read


def bytes_at(address: int, size: int, memory: Optional[memoryview] = MEMORY) -> bytes:
    """``size`` bytes copied from ``address`` (through ``memory`` when they lie inside it, as
    :func:`reader` reads)."""
    if memory is not None:
        data = memory[address:address + size].tobytes()
        if len(data) == size:  # (a slice past the view's end is cut short, not refused)
            return data
    return _copied(address, size)
