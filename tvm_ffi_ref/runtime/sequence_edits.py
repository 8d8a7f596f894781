"""Changing an Array or List in place: appending, inserting, setting, erasing, reversing, clearing.

Its twin in C: ``tvm_ffi_fast/src/containers.c``.

A List is changed in place by whoever holds it; when it needs room its buffer
grows as C++ grows it (doubling, or to what is needed if that is more), through
:func:`.sequences.list_reserve`, which frees the old buffer with the object's own
``data_deleter``. An Array is copy-on-write: :func:`array_push_back` adds in place
only for the holder of its only reference. The setters, erasers and
:func:`seq_reverse`/:func:`seq_clear` take either kind, as the ``ffi.List*``
globals and the runtime's own walks use them (the layout and the ownership rule of a
slot are in :mod:`.sequences`).
"""

from __future__ import annotations

import ctypes
from typing import Sequence

from tvm_ffi_common import abi

from . import anyvalue, memory
from .container_common import ANY_SIZE, check_type, owned_copy
from .sequences import (
    SEQUENCE_TYPES,
    copy_any,
    fill_slots,
    index_error,
    list_reserve,
    move_into,
    new_array,
    reset_slot,
    seq_cell,
    seq_get,
    seq_items,
    seq_size,
    slot_address,
)
from .slots import FFIError
from .type_index import TI

#: Factor by which a List's capacity grows when an insertion needs room.
LIST_GROWTH_FACTOR = 2


def array_push_back(address: int, value: abi.TVMFFIAny) -> int:
    """C++ ``Array::push_back`` on the holder of one reference: returns the Array to hold after.

    An Array is copy-on-write: when the holder's is the only reference and it
    has room, the element goes in place (same address back). Otherwise the
    elements are copied into a new Array -- with twice the capacity (at least
    one more) when the old one was full -- the element is added there, and
    the holder's reference to the old Array is dropped.
    """
    check_type(address, (TI.kTVMFFIArray,), "array_push_back")
    cell = seq_cell(address)
    if memory.strong_count(address) != 1 or cell.size >= cell.capacity:
        capacity = cell.capacity
        if cell.size >= capacity:
            capacity = max(capacity * 2, capacity + 1)
        grown = new_array(capacity)
        fill_slots(grown, seq_items(address))
        memory.dec_ref(address)
        address = grown
    fill_slots(address, [value])
    return address


def _ensure_room(address: int, extra: int) -> None:
    cell = seq_cell(address)
    if cell.capacity >= cell.size + extra:
        return
    list_reserve(address, max(cell.capacity * LIST_GROWTH_FACTOR, cell.size + extra))


def list_append(address: int, value: abi.TVMFFIAny) -> None:
    """Appends an owned copy of ``value`` to a List, growing its buffer as C++ would."""
    check_type(address, (TI.kTVMFFIList,), "list_append")
    owned = owned_copy(value)
    _ensure_room(address, 1)
    cell = seq_cell(address)
    move_into(cell.data + cell.size * ANY_SIZE, owned)
    cell.size += 1


def list_insert(address: int, index: int, value: abi.TVMFFIAny) -> None:
    """Inserts an owned copy of ``value`` before ``index`` (0 <= index <= size).

    As in C++, room is made before the index is checked, so a failed insert may
    still have grown the buffer.
    """
    list_insert_range(address, index, [value])


def list_insert_range(address: int, index: int, values: Sequence[abi.TVMFFIAny]) -> None:
    """Inserts owned copies of ``values`` before ``index``; nothing happens for no values."""
    check_type(address, (TI.kTVMFFIList,), "list_insert_range")
    if not values:
        return
    owned = [owned_copy(v) for v in values]
    count = len(owned)
    try:
        _ensure_room(address, count)
        cell = seq_cell(address)
        size = cell.size
        if index < 0 or index > size:
            raise FFIError("IndexError", f"Index {index} out of bounds [0, {size}]")
    except BaseException:
        for value in owned:
            anyvalue.dec_ref_any(value)
        raise
    start = cell.data + index * ANY_SIZE
    ctypes.memmove(start + count * ANY_SIZE, start, (size - index) * ANY_SIZE)
    for k, value in enumerate(owned):
        move_into(start + k * ANY_SIZE, value)
    cell.size = size + count


def seq_set(address: int, index: int, value: abi.TVMFFIAny) -> None:
    """Replaces element ``index`` with an owned copy of ``value``, releasing the old one."""
    check_type(address, SEQUENCE_TYPES, "seq_set")
    size = seq_size(address)
    if index < 0 or index >= size:
        raise index_error(index, size)
    owned = owned_copy(value)
    slot = slot_address(address, index)
    old = copy_any(abi.TVMFFIAny.from_address(slot))
    move_into(slot, owned)
    anyvalue.dec_ref_any(old)


def seq_erase_range(address: int, first: int, last: int) -> None:
    """Removes elements ``[first, last)``; nothing for an empty range (even out of bounds)."""
    check_type(address, SEQUENCE_TYPES, "seq_erase_range")
    if first == last:
        return
    cell = seq_cell(address)
    size = cell.size
    if first < 0 or last > size or first >= last:
        raise FFIError("IndexError", f"Erase range [{first}, {last}) out of bounds {size}")
    data = cell.data
    removed = [copy_any(abi.TVMFFIAny.from_address(data + i * ANY_SIZE))
               for i in range(first, last)]
    ctypes.memmove(data + first * ANY_SIZE, data + last * ANY_SIZE, (size - last) * ANY_SIZE)
    count = last - first
    ctypes.memmove(data + (size - count) * ANY_SIZE, bytes(count * ANY_SIZE), count * ANY_SIZE)
    cell.size = size - count
    for value in removed:
        anyvalue.dec_ref_any(value)


def seq_erase(address: int, index: int) -> None:
    """Removes element ``index``; IndexError (upstream's message) when out of range."""
    size = seq_size(address)
    if index < 0 or index >= size:
        raise index_error(index, size)
    seq_erase_range(address, index, index + 1)


def list_pop(address: int, index: int) -> abi.TVMFFIAny:
    """Removes element ``index`` and returns it as an owned value (``ffi.ListPop``)."""
    value = seq_get(address, index)
    anyvalue.inc_ref_any(value)
    seq_erase(address, index)
    return value


def seq_reverse(address: int) -> None:
    """Reverses the elements in place."""
    check_type(address, SEQUENCE_TYPES, "seq_reverse")
    cell = seq_cell(address)
    raw = [ctypes.string_at(cell.data + i * ANY_SIZE, ANY_SIZE) for i in range(cell.size)]
    for i, value in enumerate(reversed(raw)):
        ctypes.memmove(cell.data + i * ANY_SIZE, value, ANY_SIZE)


def seq_clear(address: int) -> None:
    """Releases every element, last first; the capacity stays."""
    check_type(address, SEQUENCE_TYPES, "seq_clear")
    cell = seq_cell(address)
    while cell.size > 0:
        cell.size -= 1
        reset_slot(cell.data + cell.size * ANY_SIZE)


def list_replace_slice(address: int, start: int, stop: int, replacement: int) -> None:
    """``ffi.ListReplaceSlice``: erase ``[start, stop)``, then insert ``replacement``'s elements.

    The replacement is read before anything changes, so a List may replace a
    slice of itself with itself.
    """
    items = seq_items(replacement)
    for value in items:
        anyvalue.inc_ref_any(value)
    try:
        seq_erase_range(address, start, stop)
        list_insert_range(address, start, items)
    finally:
        for value in items:
            anyvalue.dec_ref_any(value)
