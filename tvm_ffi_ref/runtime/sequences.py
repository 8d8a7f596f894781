"""Array and List: one object layout that C++ reads and grows in place; reading and making them.

Its twin in C: ``tvm_ffi_fast/src/containers.c``.

Array and List share one cell, ``TVMFFISeqCell``, right after the 24-byte header::

    offset  0  TVMFFIObject header          (type_index 71 Array / 75 List)
           24  void*    data                 -> capacity slots of TVMFFIAny (16 bytes each)
           32  int64_t  size                 slots [0, size) are live and owned
           40  int64_t  capacity
           48  void   (*data_deleter)(void*) frees ``data``; NULL when data is inline
           56  (Array only) the slots themselves

* An **Array** keeps its slots in the same allocation, right after the cell
  (``data = object + 56``, ``data_deleter = NULL``). Its capacity is fixed:
  C++ code that "grows" an Array copies it into a new one (copy-on-write), so
  an Array made here is only ever read, or rewritten in place by a C++ owner
  holding the only reference. ``ffi.Array(a, b, c)`` has capacity 3.
* A **List** keeps its slots in a separate buffer and is mutated in place by
  whoever holds it: C++ ``List::push_back`` beyond the capacity allocates a
  bigger buffer (capacity doubles, or grows to what is needed if that is
  more), moves the slots, frees the old buffer **through the object's
  ``data_deleter``** and stores the new one. So the buffer must always be
  freed through the pointer the object holds, never through a remembered one.
  C++ leaves ``data_deleter`` as it found it, so a buffer and the deleter
  beside it may come from different sides: every List buffer is therefore
  ``operator new``'s and every List deleter ``operator delete`` (libtvm_ffi's
  ``tvm_ffi_runtime_list_buffer_alloc`` / ``_free``, in Lists made here as in
  C++'s). When this runtime regrows a List (ours or C++'s) it frees the old
  buffer with the object's deleter and installs its own buffer and deleter
  (:func:`list_reserve`). ``ffi.List(...)`` starts at capacity ``max(4, n)``;
  an empty C++ ``List()`` has capacity 0 and ``data = NULL``.

Slots are owned ``TVMFFIAny`` values: an object in a live slot holds one
reference. A slot that dies is reset to None (all 16 bytes zero), as C++'s
``Any`` destructor leaves it. When the container dies, its live slots are
released in order, then ``data_deleter(data)`` runs if set.

This module holds the layout, reading (:func:`seq_items`, :func:`seq_slots`,
:func:`seq_get`, :func:`seq_size`) and making (:func:`array_from_anys`,
:func:`list_from_anys`); changing a sequence is :mod:`.sequence_edits`, the
``ffi.Array*``/``ffi.List*`` globals are :mod:`.sequence_globals`, and Shape, the
third sequence-like object, is :mod:`.shapes`.
"""

from __future__ import annotations

import ctypes
import struct
from typing import List, Optional, Sequence

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, memory
from .any_hash import any_equal
from .container_common import (
    ANY_SIZE,
    LIST_BUFFER_FREE_ADDRESS,
    call_data_deleter,
    check_type,
    owned_copy,
    read_pointer,
)
from .raw_read import bytes_at, reader
from .slots import FFIError
from .type_index import TI

SEQ_CELL_AT = memory.HEADER_SIZE
_DELETER_AT = SEQ_CELL_AT + abi.TVMFFISeqCell.data_deleter.offset
#: Where an Array's inline slots start: header + TVMFFISeqCell.
ARRAY_SLOTS_AT = SEQ_CELL_AT + ctypes.sizeof(abi.TVMFFISeqCell)
#: The capacity of an empty C++ ``Array()``.
ARRAY_INIT_CAPACITY = 4
#: The capacity ``ffi.List`` and C++ ``List(first, last)`` start from.
LIST_INIT_CAPACITY = 4

_ZERO_ANY = bytes(ANY_SIZE)

SEQUENCE_TYPES = (TI.kTVMFFIArray, TI.kTVMFFIList)


# ------------------------------------------------------------------- slots


def seq_cell(address: int) -> abi.TVMFFISeqCell:
    """The ``TVMFFISeqCell`` of an Array or List object."""
    return abi.TVMFFISeqCell.from_address(address + SEQ_CELL_AT)


def slot_address(address: int, i: int) -> int:
    """The address of slot ``i`` of an Array or List (wherever its ``data`` points now)."""
    return seq_cell(address).data + i * ANY_SIZE


def reset_slot(at: int) -> None:
    """Releases the value in the live slot at ``at`` and leaves None behind."""
    anyvalue.dec_ref_any(abi.TVMFFIAny.from_address(at))
    ctypes.memmove(at, _ZERO_ANY, ANY_SIZE)


def move_into(at: int, owned: abi.TVMFFIAny) -> None:
    """Moves an owned value into the empty slot at ``at``; ``owned`` is left None."""
    ctypes.memmove(at, ctypes.addressof(owned), ANY_SIZE)
    ctypes.memmove(ctypes.addressof(owned), _ZERO_ANY, ANY_SIZE)


def copy_any(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A 16-byte copy of ``value`` that holds no reference of its own (a borrowed view)."""
    copy = abi.TVMFFIAny()
    anyvalue.copy_any(value, copy)
    return copy


def index_error(i: int, size: int) -> FFIError:
    """The IndexError of an element index out of range, in upstream's words."""
    return FFIError("IndexError", f"Index {i} out of bounds {size}")


def set_data_deleter(address: int, deleter: Optional[int]) -> None:
    """Stores ``deleter`` as the ``data_deleter`` of an Array or List."""
    ctypes.c_void_p.from_address(address + _DELETER_AT).value = deleter


# ------------------------------------------------------------------- reading


def seq_size(address: int) -> int:
    """How many elements an Array or List holds."""
    check_type(address, SEQUENCE_TYPES, "seq_size")
    return seq_cell(address).size


def seq_capacity(address: int) -> int:
    """How many slots an Array or List has room for."""
    check_type(address, SEQUENCE_TYPES, "seq_capacity")
    return seq_cell(address).capacity


def seq_items(address: int) -> List[abi.TVMFFIAny]:
    """The elements of an Array or List, in order, as borrowed values.

    Each is a 16-byte copy of a slot that holds no reference of its own: it is
    valid while the container keeps the element (copy it with
    ``anyvalue.view_to_owned``/``inc_ref_any`` to keep it longer).
    """
    slots = seq_slots(address)
    # Each element is a view of that private copy of the table.
    return list((abi.TVMFFIAny * (len(slots) // ANY_SIZE)).from_buffer_copy(slots))


#: A slot's three fields, for ``SLOT_FIELDS.iter_unpack(seq_slots(address))``: the type
#: index, the 4 bytes after it (a small string's length) and the payload as uint64.
SLOT_FIELDS = struct.Struct("<iIQ")


#: An Array or List object's type index, ``data`` and ``size``, read in one step: the
#: header's ``type_index`` (at 8) and the ``TVMFFISeqCell``'s first two fields (at 24, 32).
_SEQ_HEAD = struct.Struct("<8xi12xQq")
_read_seq_head = reader(_SEQ_HEAD)
assert abi.TVMFFIObject.type_index.offset == 8 and SEQ_CELL_AT == 24
assert abi.TVMFFISeqCell.data.offset == 0 and abi.TVMFFISeqCell.size.offset == 8


def seq_slots(address: int) -> bytes:
    """The slot table of an Array or List, copied in one step: 16 bytes per element.

    Walks that only read values (hashing, comparing) unpack it with :data:`SLOT_FIELDS`
    instead of making a ``TVMFFIAny`` per element; the same borrowing rule as
    :func:`seq_items` holds.
    """
    type_index, data, size = _read_seq_head(address)
    if type_index not in SEQUENCE_TYPES:
        check_type(address, SEQUENCE_TYPES, "seq_items")  # raises
    return bytes_at(data, size * ANY_SIZE)


def seq_get(address: int, i: int) -> abi.TVMFFIAny:
    """Element ``i`` as a borrowed value; IndexError (upstream's message) when out of range."""
    size = seq_size(address)
    if i < 0 or i >= size:
        raise index_error(i, size)
    return copy_any(abi.TVMFFIAny.from_address(slot_address(address, i)))


def seq_contains(address: int, value: abi.TVMFFIAny) -> bool:
    """Whether some element is AnyEqual to ``value`` (element on the left)."""
    return any(any_equal(element, value) for element in seq_items(address))


# -------------------------------------------------------------------- making


# Arrays and Lists die in C (``tvm_ffi_runtime_free_sequence``): the dying
# object releases each live element, then frees its buffer through the cell's
# ``data_deleter`` (NULL for an Array, whose slots are inline), then itself.


def new_array(capacity: int) -> int:
    """An empty Array object with ``capacity`` inline slots."""
    address = memory.new_object(TI.kTVMFFIArray, ARRAY_SLOTS_AT + capacity * ANY_SIZE,
                                memory.RELEASE_ELEMENTS)
    cell = seq_cell(address)
    cell.data = address + ARRAY_SLOTS_AT
    cell.size = 0
    cell.capacity = capacity
    return address


def array_from_anys(values: Sequence[abi.TVMFFIAny], capacity: Optional[int] = None) -> int:
    """A new Array holding owned copies of ``values`` (borrowed views); returns an owned address.

    Raw C strings become str and byte-array pointers bytes, as when C++ stores
    an AnyView in an Array. The capacity equals the length, as in ``ffi.Array``,
    unless ``capacity`` (at least the length) is given.
    """
    address = new_array(len(values) if capacity is None else capacity)
    fill_slots(address, values)
    return address


# read per slot, as module globals (TI's members are already plain ints: type_index.py)
_BORROWED_ONLY_KINDS = frozenset((TI.kTVMFFIRawStr, TI.kTVMFFIByteArrayPtr,
                                  TI.kTVMFFIObjectRValueRef))
_OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin
_FIRST_NEEDING_WORK = min(min(_BORROWED_ONLY_KINDS), _OBJECT_BEGIN)


def fill_slots(address: int, values: Sequence[abi.TVMFFIAny]) -> None:
    """Appends owned copies of ``values`` (borrowed views) to an Array or List with room
    for them: the capacity is the caller's to ensure."""
    # Copy the 16 bytes of every value into the free slots, then make each copy
    # owned in place: objects gain a reference, borrowed-only kinds are converted.
    cell = seq_cell(address)
    start, count = cell.data + cell.size * ANY_SIZE, len(values)
    if isinstance(values, ctypes.Array):
        ctypes.memmove(start, ctypes.addressof(values), count * ANY_SIZE)
    else:
        for i, value in enumerate(values):
            ctypes.memmove(start + i * ANY_SIZE, ctypes.addressof(value), ANY_SIZE)
    # each slot's type index is its first 4 bytes: every 4th int32 of the slots, read at once
    type_indices = (ctypes.c_int32 * (4 * count)).from_address(start)[::4]
    if not type_indices or max(type_indices) < _FIRST_NEEDING_WORK:
        type_indices = []  # inline values only (ints, floats, ...): owned as they are
    for i, type_index in enumerate(type_indices):
        slot = start + i * ANY_SIZE
        if type_index >= _OBJECT_BEGIN:
            memory.inc_ref(ctypes.c_void_p.from_address(slot + 8).value)
        elif type_index in _BORROWED_ONLY_KINDS:
            try:
                move_into(slot, owned_copy(abi.TVMFFIAny.from_address(slot)))
            except BaseException:
                ctypes.memset(slot, 0, (count - i) * ANY_SIZE)  # never owned: drop them
                cell.size += i
                raise
    cell.size += count


def _list_buffer(capacity: int) -> int:
    """A zeroed List buffer of ``capacity`` slots from ``operator new``."""
    data = LIB.tvm_ffi_runtime_list_buffer_alloc(capacity * ANY_SIZE)
    if not data:
        raise MemoryError(f"could not allocate a List buffer of {capacity} slots")
    ctypes.memset(data, 0, capacity * ANY_SIZE)
    return data


def new_list(capacity: int = LIST_INIT_CAPACITY) -> int:
    """An empty List with a separate buffer of ``capacity`` slots (NULL when 0)."""
    if capacity < 0:
        raise FFIError("ValueError", "cannot construct a List of negative size")
    address = memory.new_object(TI.kTVMFFIList, ARRAY_SLOTS_AT, memory.RELEASE_ELEMENTS)
    cell = seq_cell(address)
    cell.data = _list_buffer(capacity) if capacity else None
    cell.size = 0
    cell.capacity = capacity
    set_data_deleter(address, LIST_BUFFER_FREE_ADDRESS)
    return address


def list_reserve(address: int, capacity: int) -> None:
    """Makes room for ``capacity`` slots; a List's buffer is replaced when it is too small.

    The live slots move bytewise to a new buffer, the old buffer goes to the
    object's own ``data_deleter`` and ``operator delete`` becomes the deleter.
    """
    check_type(address, (TI.kTVMFFIList,), "list_reserve")
    cell = seq_cell(address)
    if capacity <= cell.capacity:
        return
    old_data = cell.data
    old_deleter = read_pointer(address + _DELETER_AT)
    new_data = _list_buffer(capacity)
    if cell.size:
        ctypes.memmove(new_data, old_data, cell.size * ANY_SIZE)
    call_data_deleter(old_deleter, old_data)
    cell.data = new_data
    cell.capacity = capacity
    set_data_deleter(address, LIST_BUFFER_FREE_ADDRESS)


def list_from_anys(values: Sequence[abi.TVMFFIAny]) -> int:
    """A new List holding owned copies of ``values``, capacity ``max(4, n)`` as ``ffi.List``."""
    address = new_list()
    list_reserve(address, len(values))
    fill_slots(address, values)
    return address
