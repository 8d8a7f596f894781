"""The bytes of a Map or Dict: its fields, the small form's pairs, the dense form's blocks.

Its twin in C: ``tvm_ffi_fast/src/maps.c``.

C++ compiled from upstream's headers reads these bytes inline, so every offset
and every value of a metadata byte here is ABI (the whole layout is described
in :mod:`.maps`). Kept apart from the code that fills the object so that the
layout reads in one place: the ctypes structures, the sizes and tags derived
from them, the metadata byte's encoding with its probe distances, and the
moves of an owned ``TVMFFIAny`` in and out of that storage that both forms use.
"""

from __future__ import annotations

import ctypes
from typing import Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory
from .container_common import ANY_SIZE
from .hashing import MASK64
from .type_index import TI


class MapCell(ctypes.Structure):
    """The fields after the header of a Map/Dict (``MapBaseObj`` + ``DenseMapBaseObj``).

    ``fib_shift`` and the iteration list exist only in the dense form; a
    small-form object keeps room for them (its inline pairs start at 56).
    """

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("size", ctypes.c_uint64),
        ("slots", ctypes.c_uint64),
        ("data_deleter", ctypes.c_void_p),
        ("fib_shift", ctypes.c_uint32),
        ("iter_list_head", ctypes.c_uint64),
        ("iter_list_tail", ctypes.c_uint64),
    ]


class KeyValue(ctypes.Structure):
    """One entry of the small form: ``std::pair<Any, Any>``, 32 bytes."""

    _fields_ = [("first", abi.TVMFFIAny), ("second", abi.TVMFFIAny)]


class DenseItem(ctypes.Structure):
    """One slot of the dense form: the entry plus its iteration-list links (slot numbers)."""

    _fields_ = [("first", abi.TVMFFIAny), ("second", abi.TVMFFIAny),
                ("prev", ctypes.c_uint64), ("next", ctypes.c_uint64)]


MAP_CELL_AT = memory.HEADER_SIZE
#: Where a small map's inline pairs start (header + data, size, slots, data_deleter).
SMALL_PAIRS_AT = MAP_CELL_AT + MapCell.fib_shift.offset
#: Size of a dense-form object: header + every MapCell field.
DENSE_OBJECT_SIZE = MAP_CELL_AT + ctypes.sizeof(MapCell)
PAIR_SIZE = ctypes.sizeof(KeyValue)

#: Bit 63 of ``slots`` marks the small form.
SMALL_TAG = 1 << 63
SMALL_INIT_SLOTS = 2
SMALL_MAX_SLOTS = 4

BLOCK_SLOTS = 16
ITEM_SIZE = ctypes.sizeof(DenseItem)
BLOCK_SIZE = BLOCK_SLOTS + BLOCK_SLOTS * ITEM_SIZE
EMPTY_SLOT = 0xFF
PROTECTED_SLOT = 0xFE
#: Bit 7 of a metadata byte: set on every chain link but the head.
NOT_HEAD = 0x80
JUMP_MASK = 0x7F
#: "No slot" in ``prev``/``next`` and the iteration list's ends.
INVALID_INDEX = MASK64


def _triangle(n: int) -> int:
    return n * (n + 1) // 2


#: Distances from a chain link to the next, by the 7-bit jump index of its
#: metadata: 0 (end of chain), 1..15, then triangle numbers T(6)..T(72) and a
#: sparser run of larger triangle numbers, 126 in all.
PROBE_DISTANCES: Tuple[int, ...] = tuple(
    list(range(16))
    + [_triangle(n) for n in range(6, 73)]
    + [_triangle(n) for n in (
        130, 195, 292, 438, 657, 986, 1478, 2217, 3326, 4988, 7482, 11223, 16835, 25252,
        37877, 56816, 85223, 127835, 191752, 287627, 431440, 647160, 970740, 1456110,
        2184165, 3276247, 4914370, 7371555, 11057333, 16585999, 24878998, 37318497,
        55977745, 83966618, 125949926, 188924889, 283387334, 425081001, 637621501,
        956432251, 1434648376, 2151972564, 3227958845)]
)
assert len(PROBE_DISTANCES) == 126

ZERO_PAIR = bytes(PAIR_SIZE)
ZERO_ANY = bytes(ANY_SIZE)
#: A stored TVMFFIAny's 16 bytes as a char array: reading them through it (``from_buffer_copy``)
#: and clearing them (``.raw``) copy in C, where each ``ctypes.memmove`` is a foreign call
#: costing about twice as much.
AnyBytes = ctypes.c_char * ANY_SIZE


# ------------------------------------------------------------- owned values


def take(address: int) -> abi.TVMFFIAny:
    """Moves the value stored at ``address`` out (it becomes None there)."""
    stored = AnyBytes.from_address(address)
    value = abi.TVMFFIAny.from_buffer_copy(stored)
    stored.raw = ZERO_ANY
    return value


def put(address: int, owned: abi.TVMFFIAny) -> None:
    """Moves an owned value into storage at ``address`` (``owned`` becomes None)."""
    AnyBytes.from_address(address).raw = bytes(owned)
    AnyBytes.from_buffer(owned).raw = ZERO_ANY


def release(address: int) -> None:
    """Releases the value stored at ``address``, leaving None."""
    anyvalue.dec_ref_any(take(address))


def copy_owned(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A new owned copy of an owned value (the object, if any, gains a reference)."""
    copy = abi.TVMFFIAny()
    anyvalue.copy_any(value, copy)
    anyvalue.inc_ref_any(copy)
    return copy


def borrow(address: int) -> abi.TVMFFIAny:
    """A 16-byte copy of the value at ``address`` that takes no reference."""
    return abi.TVMFFIAny.from_buffer_copy(AnyBytes.from_address(address))


# ------------------------------------------------------------ the object


def map_cell(address: int) -> MapCell:
    """The fields of a Map or Dict object."""
    return MapCell.from_address(address + MAP_CELL_AT)


def is_small(cell: MapCell) -> bool:
    """Whether a map is in the small form."""
    return bool(cell.slots & SMALL_TAG)


MAP_TYPES = (TI.kTVMFFIMap, TI.kTVMFFIDict)


def pair_address(cell: MapCell, i: int) -> int:
    return cell.data + i * PAIR_SIZE


def small_capacity(cell: MapCell) -> int:
    """How many pairs a small map has room for."""
    return cell.slots & ~SMALL_TAG

