"""A Map or Dict object in its two forms, and how it moves from one to the other.

Its twin in C: ``tvm_ffi_fast/src/maps.c``.

Making small and dense objects; inserting into either form (a full small map
grows into a bigger or a dense one, a full dense table is rebuilt at twice the
slots); erasing from a small map; reading the entries of either form; freeing
tables through the deleter the object holds; and a Dict taking over a grown
object's content in place (the rules are in :mod:`.maps`). Everything here
works on raw addresses and owned values; :mod:`.maps` builds the checked
operations and the ``ffi.*`` globals on it, :mod:`.map_dense` does the
probing inside one dense table.
"""

from __future__ import annotations

import ctypes
import sys
import traceback
from typing import List, Optional, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory
from .any_hash import any_equal
from .container_common import ANY_SIZE, FREE_ADDRESS, DataDeleter, call_data_deleter, check_type
from .map_dense import DenseTable, calc_table_size
from .map_layout import (
    BLOCK_SIZE,
    BLOCK_SLOTS,
    DENSE_OBJECT_SIZE,
    EMPTY_SLOT,
    INVALID_INDEX,
    MAP_TYPES,
    PAIR_SIZE,
    SMALL_INIT_SLOTS,
    SMALL_MAX_SLOTS,
    SMALL_PAIRS_AT,
    SMALL_TAG,
    KeyValue,
    MapCell,
    borrow,
    copy_owned,
    is_small,
    map_cell,
    pair_address,
    put,
    release,
    small_capacity,
    take,
)
from .slots import FFIError

# ------------------------------------------------------------ the object


@DataDeleter
def _release_adopted_small_map(data):
    # data_deleter of a Dict whose pairs live inline in another small map object.
    try:
        memory.dec_ref(data - SMALL_PAIRS_AT)
    except BaseException:  # pragma: no cover - never let an exception reach C
        print("tvm_ffi_ref: error while releasing a map's storage:", file=sys.stderr)
        traceback.print_exc()


#: The deleter a Dict gets when it adopts the inline pairs of another small map.
ADOPTED_SMALL_DELETER = ctypes.cast(_release_adopted_small_map, ctypes.c_void_p).value


def _free_table(cell: MapCell) -> None:
    """Frees a map's separate storage through its own deleter."""
    if cell.data_deleter == ADOPTED_SMALL_DELETER:
        memory.dec_ref(cell.data - SMALL_PAIRS_AT)
    else:
        call_data_deleter(cell.data_deleter, cell.data)


def _destroy_map(address: int) -> None:
    """Releases a dying map's entries and storage (whichever form it is in now)."""
    if is_small(map_cell(address)):
        _small_reset(address)
    else:
        _dense_reset(address)


# ------------------------------------------------------------- small form


def new_small_map(type_index: int, slots: int = SMALL_INIT_SLOTS) -> int:
    """An empty small-form map with inline room for ``max(slots, 2)`` pairs."""
    slots = max(slots, SMALL_INIT_SLOTS)
    address = memory.new_object(type_index, SMALL_PAIRS_AT + slots * PAIR_SIZE, _destroy_map)
    cell = map_cell(address)
    cell.data = address + SMALL_PAIRS_AT
    cell.size = 0
    cell.slots = slots | SMALL_TAG
    return address


def small_find(address: int, key: abi.TVMFFIAny) -> int:
    """The position of ``key`` in a small map, or its size when absent."""
    cell = map_cell(address)
    for i in range(cell.size):
        if any_equal(KeyValue.from_address(pair_address(cell, i)).first, key):
            return i
    return cell.size


def _small_from_items(type_index: int, slots: int, items) -> int:
    """A small map of ``slots`` pairs holding copies of ``items`` as given (no dedup)."""
    address = new_small_map(type_index, slots)
    cell = map_cell(address)
    for key, value in items:
        pair = pair_address(cell, cell.size)
        put(pair, copy_owned(key))
        put(pair + ANY_SIZE, copy_owned(value))
        cell.size += 1
    return address


def _small_insert(type_index: int, address: int, key, value) -> Optional[int]:
    """Inserts an owned key/value into a small map; returns the new map if it had to grow.

    An existing key keeps its place and gets the new value. A full map of ``n``
    pairs is copied into one of ``min(2n, 4)`` pairs, which gets the entry.
    """
    cell = map_cell(address)
    i = small_find(address, key)
    if i < cell.size:
        value_address = pair_address(cell, i) + ANY_SIZE
        old = take(value_address)
        put(value_address, value)
        anyvalue.dec_ref_any(old)
        anyvalue.dec_ref_any(key)
        return None
    capacity = small_capacity(cell)
    if cell.size < capacity:
        pair = pair_address(cell, cell.size)
        put(pair, key)
        put(pair + ANY_SIZE, value)
        cell.size += 1
        return None
    grown = min(max(capacity * 2, SMALL_INIT_SLOTS), SMALL_MAX_SLOTS)
    if grown <= capacity:
        anyvalue.dec_ref_any(key)
        anyvalue.dec_ref_any(value)
        raise FFIError("InternalError", f"Check failed: next_size > map_node->NumSlots() "
                       f"({grown} vs. {capacity}) : ")
    new = _small_from_items(type_index, grown, map_items(address))
    rehashed = _small_insert(type_index, new, key, value)
    if rehashed is not None:
        memory.dec_ref(new)
        new = rehashed
    return new


def small_erase(address: int, i: int) -> None:
    """Removes pair ``i`` of a small map, moving the later pairs down (bytewise)."""
    cell = map_cell(address)
    if i >= cell.size:
        return
    pair = pair_address(cell, i)
    release(pair)
    release(pair + ANY_SIZE)
    if i + 1 < cell.size:
        ctypes.memmove(pair, pair + PAIR_SIZE, (cell.size - i - 1) * PAIR_SIZE)
    cell.size -= 1


def small_clear(address: int) -> None:
    cell = map_cell(address)
    for i in range(cell.size):
        pair = pair_address(cell, i)
        release(pair)
        release(pair + ANY_SIZE)
    cell.size = 0


def _small_reset(address: int) -> None:
    """Releases a small map's entries and, if separate, its storage (then it has no slots)."""
    small_clear(address)
    cell = map_cell(address)
    if cell.data_deleter:
        _free_table(cell)
        cell.slots = 0
        cell.data = None
        cell.data_deleter = None


# ------------------------------------------------------------- dense form


def new_dense_map(type_index: int, fib_shift: int, slots: int) -> int:
    """An empty dense-form map with a ``malloc`` table of ``slots`` slots, all empty."""
    address = memory.new_object(type_index, DENSE_OBJECT_SIZE, _destroy_map)
    blocks = (slots + BLOCK_SLOTS - 1) // BLOCK_SLOTS
    data = memory.malloc(blocks * BLOCK_SIZE)
    for b in range(blocks):
        ctypes.memset(data + b * BLOCK_SIZE, EMPTY_SLOT, BLOCK_SLOTS)
    cell = map_cell(address)
    cell.data = data
    cell.data_deleter = FREE_ADDRESS
    cell.slots = slots
    cell.size = 0
    cell.fib_shift = fib_shift
    cell.iter_list_head = INVALID_INDEX
    cell.iter_list_tail = INVALID_INDEX
    return address



def _dense_release_memory(address: int) -> None:
    """Frees a dense map's table without touching entries (they were moved or released)."""
    cell = map_cell(address)
    if cell.data:
        if not cell.data_deleter:
            raise FFIError("InternalError", "Check failed: data_deleter_ != nullptr is false: ")
        _free_table(cell)
    cell.data = None
    cell.data_deleter = None
    cell.slots = 0
    cell.size = 0
    cell.fib_shift = 63


def _dense_reset(address: int) -> None:
    DenseTable(address).clear()
    _dense_release_memory(address)


def _table_insert(table: DenseTable, key, value) -> bool:
    """Inserts an owned key/value into a dense table; False (nothing taken) when it is full.

    A new key is appended to the iteration list; an existing one gets the new value and
    moves to the end (``key`` is then released).
    """
    found = table.try_insert(key)
    if found is None:
        return False
    is_new, slot = found
    value_address = table.item_address(slot) + ANY_SIZE
    old = take(value_address)
    put(value_address, value)
    anyvalue.dec_ref_any(old)
    if not is_new:
        anyvalue.dec_ref_any(key)
    table.push_back(slot)
    return True


def _dense_insert(type_index: int, address: int, key, value) -> Optional[int]:
    """Inserts an owned key/value into a dense map; returns a rebuilt map when it was full.

    The rebuilt map has twice the slots and receives every entry (moved) in
    iteration order, then the new one; the old table is freed.
    """
    table = DenseTable(address)
    if _table_insert(table, key, value):
        return None
    cell = table.cell
    new = new_dense_map(type_index, cell.fib_shift - 1, cell.slots * 2)
    new_table = DenseTable(new)
    index = cell.iter_list_head
    while index != INVALID_INDEX:
        item_address = table.item_address(index)
        moved_key, moved_value = take(item_address), take(item_address + ANY_SIZE)
        if not _table_insert(new_table, moved_key, moved_value):  # full again: rebuilt again
            rehashed = _dense_insert(type_index, new, moved_key, moved_value)
            memory.dec_ref(new)
            new, new_table = rehashed, DenseTable(rehashed)
        index = table.next(index)
    rehashed = _dense_insert(type_index, new, key, value)
    if rehashed is not None:
        memory.dec_ref(new)
        new = rehashed
    _dense_release_memory(address)
    return new


# ------------------------------------------------------------- both forms


def entry_addresses(address: int) -> List[int]:
    """Where each entry (key, then value 16 bytes on) of a Map or Dict lives, in iteration order."""
    check_type(address, MAP_TYPES, "map_items")
    cell = map_cell(address)
    if is_small(cell):
        return [pair_address(cell, i) for i in range(cell.size)]
    table, entries = DenseTable(address), []
    index = cell.iter_list_head
    while index != INVALID_INDEX:
        entries.append(table.item_address(index))
        index = table.next(index)
    return entries


def map_items(address: int) -> List[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]:
    """The entries of a Map or Dict in iteration order, as borrowed ``(key, value)`` pairs.

    Each value is a 16-byte copy that holds no reference of its own: valid
    while the map keeps the entry (``anyvalue.view_to_owned`` to keep it).
    """
    return [(borrow(entry), borrow(entry + ANY_SIZE)) for entry in entry_addresses(address)]


def _entry_address(address: int, key: abi.TVMFFIAny) -> Optional[int]:
    """Where the entry (key, then value) for an owned ``key`` is stored, or None."""
    cell = map_cell(address)
    if is_small(cell):
        i = small_find(address, key)
        return pair_address(cell, i) if i < cell.size else None
    table = DenseTable(address)
    slot = table.search(key)
    return None if slot is None else table.item_address(slot)


def map_find(address: int, key: abi.TVMFFIAny) -> Optional[abi.TVMFFIAny]:
    """The value stored for an owned ``key`` (borrowed), or None when absent."""
    check_type(address, MAP_TYPES, "map_find")
    entry = _entry_address(address, key)
    return None if entry is None else borrow(entry + ANY_SIZE)



def create_from_items(type_index: int, items) -> int:
    """A new map holding copies of ``items`` (upstream's ``CreateFromRange``).

    Fewer than 2: a small map as given; fewer than 4: a small map filled by
    insertion; otherwise a dense map sized by :func:`calc_table_size`.
    """
    count = len(items)
    if count < SMALL_MAX_SLOTS:
        if count < SMALL_INIT_SLOTS:
            return _small_from_items(type_index, count, items)
        address, insert = new_small_map(type_index, count), _small_insert
    else:
        fib_shift, slots = calc_table_size(count)
        address, insert = new_dense_map(type_index, fib_shift, slots), _dense_insert
    for key, value in items:
        rehashed = insert(type_index, address, copy_owned(key), copy_owned(value))
        if rehashed is not None:
            memory.dec_ref(address)
            address = rehashed
    return address


def copy_map(address: int) -> int:
    """A copy of a Map or Dict in the same form (upstream's ``CopyFrom``): a small map as
    many slots as entries; a dense one the same table, slot for slot, links included."""
    type_index = memory.type_index_of(address)
    cell = map_cell(address)
    if is_small(cell):
        return _small_from_items(type_index, cell.size, map_items(address))
    copy = new_dense_map(type_index, cell.fib_shift, cell.slots)
    blocks = (cell.slots + BLOCK_SLOTS - 1) // BLOCK_SLOTS
    target = map_cell(copy)
    ctypes.memmove(target.data, cell.data, blocks * BLOCK_SIZE)
    table = DenseTable(copy)
    for i in range(cell.slots):
        if not table.is_empty(i):
            anyvalue.inc_ref_any(table.key(i))
            anyvalue.inc_ref_any(borrow(table.item_address(i) + ANY_SIZE))
    target.size, target.iter_list_head, target.iter_list_tail = \
        cell.size, cell.iter_list_head, cell.iter_list_tail
    return copy


def map_insert(address: int, key, value) -> Optional[int]:
    """Inserts an owned key/value (upstream's ``MapBaseObj::InsertMaybeReHash``).

    Returns None when the entry went into ``address``, else the new map that
    holds everything (the caller switches to it).
    """
    type_index = memory.type_index_of(address)
    cell = map_cell(address)
    if not is_small(cell):
        return _dense_insert(type_index, address, key, value)
    capacity = small_capacity(cell)
    if capacity < SMALL_MAX_SLOTS or (capacity == SMALL_MAX_SLOTS and cell.size < capacity):
        return _small_insert(type_index, address, key, value)
    if capacity == SMALL_MAX_SLOTS:
        new = create_from_items(type_index, map_items(address))
        rehashed = _dense_insert(type_index, new, key, value)
        if rehashed is not None:
            memory.dec_ref(new)
            new = rehashed
        return new
    anyvalue.dec_ref_any(key)  # upstream drops an entry offered to an oversized small map
    anyvalue.dec_ref_any(value)
    return None


_DENSE_FIELDS = ("size", "slots", "data", "data_deleter", "fib_shift", "iter_list_head",
                 "iter_list_tail")


def switch_to(address: int, other: int) -> None:
    """Rewrites map ``address`` in place to hold ``other``'s content; consumes ``other``.

    Upstream's ``InplaceSwitchTo``: the old content is released first. A small
    ``other`` whose pairs are inline stays alive as their storage, released by
    :data:`ADOPTED_SMALL_DELETER` when this map lets the pairs go.
    """
    this, that = map_cell(address), map_cell(other)
    keep_other = False
    if is_small(this):
        _small_reset(address)
        if is_small(that):
            this.size, this.slots, this.data = that.size, that.slots, that.data
            if that.data_deleter:
                this.data_deleter = that.data_deleter
                that.data_deleter = None
            else:
                this.data_deleter = ADOPTED_SMALL_DELETER
                keep_other = True
        else:
            for field in _DENSE_FIELDS:
                setattr(this, field, getattr(that, field))
            that.data_deleter = None
    else:
        _dense_reset(address)
        if is_small(that):
            raise FFIError("InternalError", "Check failed: (!other_map->IsSmallMap()) is false: ")
        for field in _DENSE_FIELDS:
            setattr(this, field, getattr(that, field))
        that.data_deleter = None
    that.data = None
    that.size = 0
    that.slots = 0
    if not keep_other:
        memory.dec_ref(other)

