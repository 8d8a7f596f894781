"""Sequences: Array, List and Shape, laid out so that C++ reads and grows them in place.

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
  buffer with the object's deleter and installs its own buffer and deleter.
  ``ffi.List(...)`` starts at capacity ``max(4, n)``; an empty C++ ``List()``
  has capacity 0 and ``data = NULL``.

Slots are owned ``TVMFFIAny`` values: an object in a live slot holds one
reference. A slot that dies is reset to None (all 16 bytes zero), as C++'s
``Any`` destructor leaves it. When the container dies, its live slots are
released in order, then ``data_deleter(data)`` runs if set.

A **Shape** is ``TVMFFIObject`` + ``TVMFFIShapeCell`` (``int64_t* data``,
``size_t size``, at 24 and 32); the dims follow inline at 40.

This module also provides the ``ffi.Array*``, ``ffi.List*`` and ``ffi.Shape``
globals, with upstream's semantics and messages (see :mod:`.signatures`), and
helpers for a front end that builds and reads sequences directly:
:func:`array_from_anys`, :func:`list_from_anys`, :func:`seq_items`,
:func:`seq_get`, :func:`seq_size`, :func:`shape_from_ints`, :func:`shape_dims`
and the ``list_*`` mutators.
"""

from __future__ import annotations

import ctypes
import struct
from typing import List, Optional, Sequence

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, memory
from .any_hash import any_equal
from .functions import def_global, set_bool, set_object
from .raw_read import bytes_at, reader
from .registry import TYPES
from .signatures import register_copier, typed_global
from .slots import FFIError
from .strings import store_int
from .type_index import TI

ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)
SEQ_CELL_AT = memory.HEADER_SIZE
_DELETER_AT = SEQ_CELL_AT + abi.TVMFFISeqCell.data_deleter.offset
#: Where an Array's inline slots start: header + TVMFFISeqCell.
ARRAY_SLOTS_AT = SEQ_CELL_AT + ctypes.sizeof(abi.TVMFFISeqCell)
#: Where a Shape's inline dims start: header + TVMFFIShapeCell.
SHAPE_DIMS_AT = memory.HEADER_SIZE + ctypes.sizeof(abi.TVMFFIShapeCell)
#: The capacity ``ffi.List`` and C++ ``List(first, last)`` start from.
LIST_INIT_CAPACITY = 4
#: Factor by which a List's capacity grows when an insertion needs room.
LIST_GROWTH_FACTOR = 2

_libc = ctypes.CDLL(None)
#: The ``data_deleter`` of the Map blocks this runtime allocates: libc ``free``.
FREE_ADDRESS = ctypes.cast(_libc.free, ctypes.c_void_p).value
#: The ``data_deleter`` of every List buffer: ``operator delete`` (see the module's docstring).
LIST_BUFFER_FREE_ADDRESS = ctypes.cast(LIB.tvm_ffi_runtime_list_buffer_free,
                                       ctypes.c_void_p).value
#: ``void (*)(void*)``: the type of ``data_deleter``.
DataDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_ZERO_ANY = bytes(ANY_SIZE)


# ----------------------------------------------------------------- raw access

SEQUENCE_TYPES = (TI.kTVMFFIArray, TI.kTVMFFIList)


def check_type(address: int, allowed: Sequence[int], helper: str) -> None:
    """Raises TypeError unless the object at ``address`` has one of the ``allowed`` type indices.

    The front-end helpers take raw addresses; a wrong one would otherwise be
    read as the wrong layout.
    """
    index = memory.type_index_of(address)
    if index in allowed:
        return
    try:
        got = TYPES.type_key(index)
    except FFIError:
        got = f"type index {index}"
    names = " or ".join(TYPES.type_key(i) for i in allowed)
    raise TypeError(f"{helper}: argument 'address' must be an {names} object, got {got}")


def seq_cell(address: int) -> abi.TVMFFISeqCell:
    """The ``TVMFFISeqCell`` of an Array or List object."""
    return abi.TVMFFISeqCell.from_address(address + SEQ_CELL_AT)


def read_pointer(address: int) -> Optional[int]:
    """The pointer stored at ``address`` (None for NULL)."""
    return ctypes.c_void_p.from_address(address).value


def call_data_deleter(deleter: Optional[int], data: Optional[int]) -> None:
    """Runs a container's ``data_deleter(data)`` (ours called directly, C++'s through a
    function pointer)."""
    if not deleter:
        return
    if deleter == FREE_ADDRESS:
        memory.free(data)
    elif deleter == LIST_BUFFER_FREE_ADDRESS:
        LIB.tvm_ffi_runtime_list_buffer_free(data)
    else:
        DataDeleter(deleter)(data)


def _set_data_deleter(address: int, deleter: Optional[int]) -> None:
    ctypes.c_void_p.from_address(address + _DELETER_AT).value = deleter


def _slot_address(address: int, i: int) -> int:
    return seq_cell(address).data + i * ANY_SIZE


def _slot(address: int, i: int) -> abi.TVMFFIAny:
    return abi.TVMFFIAny.from_address(_slot_address(address, i))


def _reset_slot(slot_address: int) -> None:
    """Releases the value in a live slot and leaves None behind."""
    anyvalue.dec_ref_any(abi.TVMFFIAny.from_address(slot_address))
    ctypes.memmove(slot_address, _ZERO_ANY, ANY_SIZE)


def _move_into(slot_address: int, owned: abi.TVMFFIAny) -> None:
    """Moves an owned value into an empty slot; ``owned`` is left None."""
    ctypes.memmove(slot_address, ctypes.addressof(owned), ANY_SIZE)
    ctypes.memmove(ctypes.addressof(owned), _ZERO_ANY, ANY_SIZE)


def owned_copy(view: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A new owned value equal to ``view`` (see ``anyvalue.view_to_owned``)."""
    owned = abi.TVMFFIAny()
    anyvalue.view_to_owned(view, owned)
    return owned


def _copy_any(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    copy = abi.TVMFFIAny()
    anyvalue.copy_any(value, copy)
    return copy


def _index_error(i: int, size: int) -> FFIError:
    return FFIError("IndexError", f"Index {i} out of bounds {size}")


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
        raise _index_error(i, size)
    return _copy_any(_slot(address, i))


# ---------------------------------------------------------------- lifetime


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
    _fill(address, values)
    return address


#: The capacity of an empty C++ ``Array()``.
ARRAY_INIT_CAPACITY = 4


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
        _fill(grown, seq_items(address))
        memory.dec_ref(address)
        address = grown
    _fill(address, [value])
    return address


# read per slot, as module globals (TI's members are already plain ints: type_index.py)
_BORROWED_ONLY_KINDS = frozenset((TI.kTVMFFIRawStr, TI.kTVMFFIByteArrayPtr,
                                  TI.kTVMFFIObjectRValueRef))
_OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin
_FIRST_NEEDING_WORK = min(min(_BORROWED_ONLY_KINDS), _OBJECT_BEGIN)


def _fill(address: int, values: Sequence[abi.TVMFFIAny]) -> None:
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
                _move_into(slot, owned_copy(abi.TVMFFIAny.from_address(slot)))
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
    _set_data_deleter(address, LIST_BUFFER_FREE_ADDRESS)
    return address


def list_from_anys(values: Sequence[abi.TVMFFIAny]) -> int:
    """A new List holding owned copies of ``values``, capacity ``max(4, n)`` as ``ffi.List``."""
    address = new_list()
    list_reserve(address, len(values))
    _fill(address, values)
    return address


# ----------------------------------------------------------------- mutation


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
    _set_data_deleter(address, LIST_BUFFER_FREE_ADDRESS)


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
    _move_into(cell.data + cell.size * ANY_SIZE, owned)
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
        _move_into(start + k * ANY_SIZE, value)
    cell.size = size + count


def seq_set(address: int, index: int, value: abi.TVMFFIAny) -> None:
    """Replaces element ``index`` with an owned copy of ``value``, releasing the old one."""
    check_type(address, SEQUENCE_TYPES, "seq_set")
    size = seq_size(address)
    if index < 0 or index >= size:
        raise _index_error(index, size)
    owned = owned_copy(value)
    slot = _slot_address(address, index)
    old = _copy_any(abi.TVMFFIAny.from_address(slot))
    _move_into(slot, owned)
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
    removed = [_copy_any(abi.TVMFFIAny.from_address(data + i * ANY_SIZE))
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
        raise _index_error(index, size)
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
        _reset_slot(cell.data + cell.size * ANY_SIZE)


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


def seq_contains(address: int, value: abi.TVMFFIAny) -> bool:
    """Whether some element is AnyEqual to ``value`` (element on the left)."""
    return any(any_equal(element, value) for element in seq_items(address))


# ------------------------------------------------------------------- shapes


def shape_from_ints(dims: Sequence[int]) -> int:
    """A new Shape object holding ``dims`` inline; returns an owned address."""
    address = memory.new_object(TI.kTVMFFIShape, SHAPE_DIMS_AT + 8 * len(dims))
    cell = abi.TVMFFIShapeCell.from_address(memory.cell_address(address))
    cell.data = ctypes.cast(address + SHAPE_DIMS_AT, ctypes.POINTER(ctypes.c_int64))
    cell.size = len(dims)
    (ctypes.c_int64 * len(dims)).from_address(address + SHAPE_DIMS_AT)[:] = list(dims)
    return address


def shape_dims(address: int) -> List[int]:
    """The dims of a Shape object (wherever its cell points)."""
    check_type(address, (TI.kTVMFFIShape,), "shape_dims")
    cell = abi.TVMFFIShapeCell.from_address(memory.cell_address(address))
    return [cell.data[i] for i in range(cell.size)]


# ---------------------------------------------------------------- ffi.* globals


def _return_copy(result: abi.TVMFFIAny, value: abi.TVMFFIAny) -> None:
    anyvalue.copy_any(value, result)
    anyvalue.inc_ref_any(result)


def _list_copy_of_array(address: int) -> int:
    """What C++ makes when an Array is passed for a ``List<Any>`` parameter: a List copy."""
    items = seq_items(address)
    copy = new_list(0)
    list_reserve(copy, len(items))
    _fill(copy, items)
    return copy


register_copier("List<Any>", _list_copy_of_array)


@def_global("ffi.Array")
def _ffi_array(args, result):
    set_object(result, array_from_anys(args))


@typed_global("ffi.ArrayGetItem", ["ffi.Array", "int"], "Any")
def _array_get_item(result, array, index):
    _return_copy(result, seq_get(array, index))


@typed_global("ffi.ArraySize", ["ffi.Array"], "int")
def _array_size(result, array):
    store_int(result, seq_size(array))


@typed_global("ffi.ArrayContains", ["ffi.Array", "Any"], "bool")
def _array_contains(result, array, value):
    set_bool(result, seq_contains(array, value))


@def_global("ffi.List")
def _ffi_list(args, result):
    set_object(result, list_from_anys(args))


@typed_global("ffi.ListGetItem", ["ffi.List", "int"], "Any")
def _list_get_item(result, lst, index):
    _return_copy(result, seq_get(lst, index))


@typed_global("ffi.ListSetItem", ["List<Any>", "int", "Any"], "void")
def _list_set_item(result, lst, index, value):
    seq_set(lst, index, value)


@typed_global("ffi.ListSize", ["ffi.List"], "int")
def _list_size(result, lst):
    store_int(result, seq_size(lst))


@typed_global("ffi.ListContains", ["ffi.List", "Any"], "bool")
def _list_contains(result, lst, value):
    set_bool(result, seq_contains(lst, value))


@typed_global("ffi.ListAppend", ["List<Any>", "Any"], "void")
def _list_append(result, lst, value):
    list_append(lst, value)


@typed_global("ffi.ListInsert", ["List<Any>", "int", "Any"], "void")
def _list_insert(result, lst, index, value):
    list_insert(lst, index, value)


@typed_global("ffi.ListPop", ["List<Any>", "int"], "Any")
def _list_pop(result, lst, index):
    value = list_pop(lst, index)
    anyvalue.copy_any(value, result)


@typed_global("ffi.ListErase", ["List<Any>", "int"], "void")
def _list_erase(result, lst, index):
    seq_erase(lst, index)


@typed_global("ffi.ListEraseRange", ["List<Any>", "int", "int"], "void")
def _list_erase_range(result, lst, start, stop):
    seq_erase_range(lst, start, stop)


@typed_global("ffi.ListReplaceSlice", ["List<Any>", "int", "int", "List<Any>"], "void")
def _list_replace_slice(result, lst, start, stop, replacement):
    list_replace_slice(lst, start, stop, replacement)


@typed_global("ffi.ListReverse", ["List<Any>"], "void")
def _list_reverse(result, lst):
    seq_reverse(lst)


@typed_global("ffi.ListClear", ["List<Any>"], "void")
def _list_clear(result, lst):
    seq_clear(lst)


@typed_global("ffi.ListReserve", ["List<Any>", "int"], "void")
def _list_reserve(result, lst, capacity):
    list_reserve(lst, capacity)


@def_global("ffi.Shape")
def _ffi_shape(args, result):
    dims = []
    for value in args:
        if value.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise FFIError("ValueError", "Expect shape to take list of int arguments")
        dims.append(value.v_int64)
    set_object(result, shape_from_ints(dims))
