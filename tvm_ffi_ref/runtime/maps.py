"""Map and Dict: one hash-map object layout in two forms, mutated in place by either side.

Map (type index 72) is immutable to its users: C++ ``Map::Set`` copies the
object unless it holds the only reference. Dict (76) is mutated in place by
whoever holds it, and keeps its address even when its table is rebuilt. Both
use the same object, and C++ code compiled from upstream's headers reads,
probes, inserts into and erases from it inline, so every byte below and every
step of the algorithms is ABI: iteration order and in-place mutation must come
out the same on both sides.

The object
----------
::

    offset  0  TVMFFIObject header
           24  void*     data          the entries (see the two forms)
           32  uint64_t  size          number of entries
           40  uint64_t  slots         capacity; bit 63 set = small form
           48  void    (*data_deleter)(void*)   frees ``data``; NULL when inline
           56  uint32_t  fib_shift     \\
           64  uint64_t  iter_list_head }  dense form only
           72  uint64_t  iter_list_tail /

**Small form** (``slots = n | 1 << 63``, n <= 4): ``data`` points at ``n``
key/value pairs (two ``TVMFFIAny``, 32 bytes), the first ``size`` live, in
insertion order. A fresh small map is allocated with its pairs inline right
after offset 56 and at least 2 of them, so the object is always at least 120
bytes: large enough to be rewritten in place into the dense form.
Lookup is a linear scan with AnyEqual (stored key on the left). Erasing moves
the later pairs down bytewise, so the order stays the insertion order.

**Dense form** (bit 63 clear, ``slots`` a power of two >= 8): ``data`` points
at ``ceil(slots / 16)`` blocks of 784 bytes: 16 metadata bytes, then 16 items
of 48 bytes (key, value, ``prev``, ``next``). Slot ``i`` is item ``i % 16`` of
block ``i // 16``. A metadata byte is ``0xFF`` for an empty slot, ``0xFE`` for
a slot being vacated during an insertion, and otherwise ``H J`` with bit 7
``H`` = 0 for the head of a collision chain (1 for a later link) and the low 7
bits ``J`` indexing :data:`PROBE_DISTANCES`: the next link of the chain is
``(i + PROBE_DISTANCES[J]) % slots``, and ``J = 0`` ends the chain.

* A key's chain starts at its home slot ``(AnyHash(key) * 11400714819323198485
  mod 2**64) >> fib_shift`` (Fibonacci hashing; ``fib_shift = 64 - log2(slots)``).
* Inserting a new key: into the home slot if empty; else, if the home slot is
  a link of another chain, that chain's tail from there on moves out (each
  element to the first empty slot probed after its new predecessor) and the
  key takes the home slot; else the key is appended to its chain at the first
  empty slot probed after the chain's tail. The table is full when
  ``size + 1 > slots * 0.99``, or when no probe finds room: then it is rebuilt
  at twice the slots, inserting every entry in iteration order, then the key.
* Iteration follows a doubly linked list through ``prev``/``next`` (slot
  numbers; ``2**64 - 1`` = none) from ``iter_list_head``: insertion order.
  Setting a key that is already present moves it to the end of that list
  (the small form keeps it in place).
* Erasing a chain's last link empties it; erasing an earlier link moves the
  chain's last link into its slot.

**Growth.** Inserting into a full small map of ``n < 4`` pairs makes a small
map of ``min(2n, 4)`` pairs; into a full one of 4 pairs makes a dense map
(the 4 entries are inserted into a table sized for them, 8 slots, then the new
one), even when the key is already present, which then moves to the end. Map (``ffi.Map``) simply continues with the new object. Dict rewrites its
own object from the new one (upstream's ``InplaceSwitchTo``): from a dense one
it takes all fields, and the new object's table; from a small one it takes
``data`` and, since that small map's pairs are inline in *its* object, keeps
that object alive through ``data_deleter`` (a deleter that drops a reference
to the object the pairs live in).

Keys compare and hash with AnyEqual/AnyHash (:mod:`.anyhash`). Tables
allocated here use ``malloc`` and ``data_deleter = free``; tables made by C++
carry C++'s deleter. Whoever frees a table does it through the deleter in the
object. A dying map releases its live entries, then its table.

Helpers for a front end: :func:`map_from_pairs`, :func:`dict_from_pairs`,
:func:`map_items`, :func:`map_size`, :func:`map_lookup`, :func:`dict_set`,
:func:`dict_erase`, :func:`dict_clear`, :func:`missing_object`.
"""

from __future__ import annotations

import ctypes
import sys
import traceback
from typing import List, Optional, Sequence, Tuple

from tvm_ffi_common import abi
from . import anyvalue, memory
from .anyhash import any_equal, any_hash
from .containers import (ANY_SIZE, FREE_ADDRESS, DataDeleter, call_data_deleter, check_type,
                         owned_copy, seq_items)
from .functions import def_global, new_python_function, set_object
from .hashing import MASK64
from .signatures import Signature, register_copier, typed_global
from .slots import FFIError
from .strings import store_int

TI = abi.TVMFFITypeIndex


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
MAX_LOAD_FACTOR = 0.99
FIB_MULTIPLIER = 11400714819323198485


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

_ZERO_PAIR = bytes(PAIR_SIZE)
_ZERO_ANY = bytes(ANY_SIZE)


# ------------------------------------------------------------- owned values


def _take(address: int) -> abi.TVMFFIAny:
    """Moves the value stored at ``address`` out (it becomes None there)."""
    value = abi.TVMFFIAny()
    ctypes.memmove(ctypes.addressof(value), address, ANY_SIZE)
    ctypes.memmove(address, _ZERO_ANY, ANY_SIZE)
    return value


def _put(address: int, owned: abi.TVMFFIAny) -> None:
    """Moves an owned value into storage at ``address`` (``owned`` becomes None)."""
    ctypes.memmove(address, ctypes.addressof(owned), ANY_SIZE)
    ctypes.memmove(ctypes.addressof(owned), _ZERO_ANY, ANY_SIZE)


def _release(address: int) -> None:
    """Releases the value stored at ``address``, leaving None."""
    anyvalue.dec_ref_any(_take(address))


def _copy(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A new owned copy of an owned value (the object, if any, gains a reference)."""
    copy = abi.TVMFFIAny()
    anyvalue.copy_any(value, copy)
    anyvalue.inc_ref_any(copy)
    return copy


def _borrow(address: int) -> abi.TVMFFIAny:
    """A 16-byte copy of the value at ``address`` that takes no reference."""
    value = abi.TVMFFIAny()
    ctypes.memmove(ctypes.addressof(value), address, ANY_SIZE)
    return value


# ------------------------------------------------------------ the object


def map_cell(address: int) -> MapCell:
    """The fields of a Map or Dict object."""
    return MapCell.from_address(address + MAP_CELL_AT)


def is_small(cell: MapCell) -> bool:
    """Whether a map is in the small form."""
    return bool(cell.slots & SMALL_TAG)


MAP_TYPES = (TI.kTVMFFIMap, TI.kTVMFFIDict)


def map_size(address: int) -> int:
    """How many entries a Map or Dict holds."""
    check_type(address, MAP_TYPES, "map_size")
    return map_cell(address).size


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


def _pair_address(cell: MapCell, i: int) -> int:
    return cell.data + i * PAIR_SIZE


def small_capacity(cell: MapCell) -> int:
    """How many pairs a small map has room for."""
    return cell.slots & ~SMALL_TAG


def new_small_map(type_index: int, slots: int = SMALL_INIT_SLOTS) -> int:
    """An empty small-form map with inline room for ``max(slots, 2)`` pairs."""
    slots = max(slots, SMALL_INIT_SLOTS)
    address = memory.new_object(type_index, SMALL_PAIRS_AT + slots * PAIR_SIZE, _destroy_map)
    cell = map_cell(address)
    cell.data = address + SMALL_PAIRS_AT
    cell.size = 0
    cell.slots = slots | SMALL_TAG
    return address


def _small_find(address: int, key: abi.TVMFFIAny) -> int:
    """The position of ``key`` in a small map, or its size when absent."""
    cell = map_cell(address)
    for i in range(cell.size):
        if any_equal(KeyValue.from_address(_pair_address(cell, i)).first, key):
            return i
    return cell.size


def _small_from_items(type_index: int, slots: int, items) -> int:
    """A small map of ``slots`` pairs holding copies of ``items`` as given (no dedup)."""
    address = new_small_map(type_index, slots)
    cell = map_cell(address)
    for key, value in items:
        pair = _pair_address(cell, cell.size)
        _put(pair, _copy(key))
        _put(pair + ANY_SIZE, _copy(value))
        cell.size += 1
    return address


def _small_insert(type_index: int, address: int, key, value) -> Optional[int]:
    """Inserts an owned key/value into a small map; returns the new map if it had to grow.

    An existing key keeps its place and gets the new value. A full map of ``n``
    pairs is copied into one of ``min(2n, 4)`` pairs, which gets the entry.
    """
    cell = map_cell(address)
    i = _small_find(address, key)
    if i < cell.size:
        value_address = _pair_address(cell, i) + ANY_SIZE
        old = _take(value_address)
        _put(value_address, value)
        anyvalue.dec_ref_any(old)
        anyvalue.dec_ref_any(key)
        return None
    capacity = small_capacity(cell)
    if cell.size < capacity:
        pair = _pair_address(cell, cell.size)
        _put(pair, key)
        _put(pair + ANY_SIZE, value)
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


def _small_erase(address: int, i: int) -> None:
    """Removes pair ``i`` of a small map, moving the later pairs down (bytewise)."""
    cell = map_cell(address)
    if i >= cell.size:
        return
    pair = _pair_address(cell, i)
    _release(pair)
    _release(pair + ANY_SIZE)
    if i + 1 < cell.size:
        ctypes.memmove(pair, pair + PAIR_SIZE, (cell.size - i - 1) * PAIR_SIZE)
    cell.size -= 1


def _small_clear(address: int) -> None:
    cell = map_cell(address)
    for i in range(cell.size):
        pair = _pair_address(cell, i)
        _release(pair)
        _release(pair + ANY_SIZE)
    cell.size = 0


def _small_reset(address: int) -> None:
    """Releases a small map's entries and, if separate, its storage (then it has no slots)."""
    _small_clear(address)
    cell = map_cell(address)
    if cell.data_deleter:
        _free_table(cell)
        cell.slots = 0
        cell.data = None
        cell.data_deleter = None


# ------------------------------------------------------------- dense form


def fib_hash(hash_value: int, fib_shift: int) -> int:
    """Fibonacci hashing: the home slot of a hash in a table of ``2**(64 - fib_shift)`` slots."""
    return ((FIB_MULTIPLIER * hash_value) & MASK64) >> fib_shift


def calc_table_size(capacity: int) -> Tuple[int, int]:
    """``(fib_shift, slots)`` of the table a dense map built for ``capacity`` entries gets.

    ``slots`` is the smallest power of two above ``capacity``, doubled unless
    it is at least twice ``capacity``.
    """
    shift, slots = 64, 1
    remaining = capacity
    while remaining:
        shift -= 1
        slots <<= 1
        remaining >>= 1
    if slots < capacity * 2:
        return shift - 1, slots << 1
    return shift, slots


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


class DenseTable:
    """The slot table of a dense-form map, with upstream's chain and list operations.

    Reads the object's fields on every use, so it stays valid while entries
    come and go (not across a rebuild, which replaces the table).
    """

    def __init__(self, address: int):
        self.address = address
        self.cell = map_cell(address)

    # --- geometry
    def _block(self, i: int) -> int:
        return self.cell.data + (i // BLOCK_SLOTS) * BLOCK_SIZE

    def meta(self, i: int) -> int:
        """The metadata byte of slot ``i``."""
        return ctypes.c_uint8.from_address(self._block(i) + i % BLOCK_SLOTS).value

    def set_meta(self, i: int, meta: int) -> None:
        ctypes.c_uint8.from_address(self._block(i) + i % BLOCK_SLOTS).value = meta

    def item_address(self, i: int) -> int:
        """Where slot ``i``'s item (key, value, prev, next) lives."""
        return self._block(i) + BLOCK_SLOTS + (i % BLOCK_SLOTS) * ITEM_SIZE

    def item(self, i: int) -> DenseItem:
        return DenseItem.from_address(self.item_address(i))

    # --- chains
    def is_head(self, i: int) -> bool:
        return not self.meta(i) & NOT_HEAD

    def is_empty(self, i: int) -> bool:
        return self.meta(i) == EMPTY_SLOT

    def has_next(self, i: int) -> bool:
        return PROBE_DISTANCES[self.meta(i) & JUMP_MASK] != 0

    def next_link(self, i: int, meta: Optional[int] = None) -> Optional[int]:
        """The slot after ``i`` on its chain (by ``meta``, default slot i's), or None."""
        if meta is None:
            meta = self.meta(i)
        distance = PROBE_DISTANCES[meta & JUMP_MASK]
        return None if distance == 0 else (i + distance) % self.cell.slots

    def set_jump(self, i: int, jump: int) -> None:
        self.set_meta(i, (self.meta(i) & NOT_HEAD) | jump)

    def home(self, hash_value: int) -> int:
        return fib_hash(hash_value, self.cell.fib_shift)

    def search(self, key: abi.TVMFFIAny) -> Optional[int]:
        """The slot holding ``key``, or None."""
        if self.cell.size == 0:
            return None
        i = self.home(any_hash(key))
        if not self.is_head(i):
            return None
        while i is not None:
            if any_equal(key, self.item(i).first):
                return i
            i = self.next_link(i)
        return None

    def find_prev(self, i: int) -> int:
        """The link before slot ``i`` on its chain (``i`` must not be a head)."""
        link = self.home(any_hash(self.item(i).first))
        prev = link
        link = self.next_link(link)
        while link != i:
            if link is None:
                raise FFIError("InternalError", "corrupt map: slot is not on its key's chain")
            prev = link
            link = self.next_link(link)
        return prev

    def next_empty(self, i: int) -> Optional[Tuple[int, int]]:
        """``(jump, slot)`` of the first empty slot probed after ``i``, or None."""
        for jump in range(1, len(PROBE_DISTANCES)):
            candidate = (i + PROBE_DISTANCES[jump]) % self.cell.slots
            if self.is_empty(candidate):
                return jump, candidate
        return None

    def is_full(self) -> bool:
        return self.cell.size + 1 > self.cell.slots * MAX_LOAD_FACTOR

    def _new_link(self, i: int, meta: int, key: abi.TVMFFIAny) -> None:
        """Makes slot ``i`` a chain link holding ``key`` (moved in) and a None value."""
        self.set_meta(i, meta)
        item_address = self.item_address(i)
        _put(item_address, key)
        ctypes.memmove(item_address + ANY_SIZE, _ZERO_ANY, ANY_SIZE)
        item = self.item(i)
        item.prev = INVALID_INDEX
        item.next = INVALID_INDEX

    # --- the iteration list
    def unlink(self, i: int) -> None:
        item, cell = self.item(i), self.cell
        if item.prev == INVALID_INDEX:
            cell.iter_list_head = item.next
        else:
            self.item(item.prev).next = item.next
        if item.next == INVALID_INDEX:
            cell.iter_list_tail = item.prev
        else:
            self.item(item.next).prev = item.prev

    def push_back(self, i: int) -> None:
        item, cell = self.item(i), self.cell
        item.prev = cell.iter_list_tail
        item.next = INVALID_INDEX
        if cell.iter_list_tail != INVALID_INDEX:
            self.item(cell.iter_list_tail).next = i
        if cell.iter_list_head == INVALID_INDEX:
            cell.iter_list_head = i
        cell.iter_list_tail = i

    def replace_in_list(self, src: int, dst: int) -> None:
        """Puts slot ``dst`` where slot ``src`` was in the iteration list."""
        source, target, cell = self.item(src), self.item(dst), self.cell
        target.prev = source.prev
        target.next = source.next
        if target.prev == INVALID_INDEX:
            cell.iter_list_head = dst
        else:
            self.item(target.prev).next = dst
        if target.next == INVALID_INDEX:
            cell.iter_list_tail = dst
        else:
            self.item(target.next).prev = dst

    # --- insertion and removal
    def try_insert(self, key: abi.TVMFFIAny) -> Optional[Tuple[bool, int]]:
        """Finds or makes the slot for ``key``: ``(is_new, slot)``, or None when the table is full.

        A new slot holds ``key`` (moved in) and a None value; an existing one is
        unlinked from the iteration list (its caller re-appends it) and ``key``
        stays with the caller.
        """
        if self.cell.slots == 0:
            return None
        i = self.home(any_hash(key))
        if self.is_empty(i):
            self._new_link(i, 0, key)
            self.cell.size += 1
            return True, i
        if not self.is_head(i):
            return None if self.is_full() else self._spare_list_head(i, key)
        link = i
        while True:
            if any_equal(key, self.item(link).first):
                self.unlink(link)
                return False, link
            tail = link
            link = self.next_link(link)
            if link is None:
                break
        if self.is_full():
            return None
        found = self.next_empty(tail)
        if found is None:
            return None
        jump, empty = found
        self._new_link(empty, NOT_HEAD, key)
        self.set_jump(tail, jump)
        self.cell.size += 1
        return True, empty

    def _spare_list_head(self, target: int, key: abi.TVMFFIAny) -> Optional[Tuple[bool, int]]:
        """Moves the foreign chain links from ``target`` on elsewhere; ``key`` takes ``target``."""
        moving, writer, first = target, self.find_prev(target), True
        while True:
            found = self.next_empty(writer)
            if found is None:
                return None
            jump, empty = found
            self.set_meta(empty, NOT_HEAD)
            ctypes.memmove(self.item_address(empty), self.item_address(moving), PAIR_SIZE)
            ctypes.memmove(self.item_address(moving), _ZERO_PAIR, PAIR_SIZE)
            moved = self.item(empty)
            moved.prev = INVALID_INDEX
            moved.next = INVALID_INDEX
            self.replace_in_list(moving, empty)
            moving_meta = self.meta(moving)
            self.set_meta(moving, PROTECTED_SLOT if first else EMPTY_SLOT)
            first = False
            self.set_jump(writer, jump)
            writer = empty
            moving = self.next_link(moving, moving_meta)
            if moving is None:
                break
        self._new_link(target, 0, key)
        self.cell.size += 1
        return True, target

    def erase(self, i: int) -> None:
        """Removes the entry in slot ``i`` (upstream's ``DenseMapBaseObj::Erase``)."""
        self.cell.size -= 1
        if not self.has_next(i):
            if not self.is_head(i):
                self.set_jump(self.find_prev(i), 0)
            self.unlink(i)
            _release(self.item_address(i))
            _release(self.item_address(i) + ANY_SIZE)
            self.set_meta(i, EMPTY_SLOT)
            return
        prev, last = i, self.next_link(i)
        while self.has_next(last):
            prev, last = last, self.next_link(last)
        self.unlink(i)
        _release(self.item_address(i))
        _release(self.item_address(i) + ANY_SIZE)
        ctypes.memmove(self.item_address(i), self.item_address(last), PAIR_SIZE)
        ctypes.memmove(self.item_address(last), _ZERO_PAIR, PAIR_SIZE)
        self.replace_in_list(last, i)
        self.set_meta(last, EMPTY_SLOT)
        self.set_jump(prev, 0)

    def clear(self) -> None:
        """Releases every entry; protected slots stay protected, as upstream leaves them."""
        blocks = (self.cell.slots + BLOCK_SLOTS - 1) // BLOCK_SLOTS
        for i in range(blocks * BLOCK_SLOTS):
            if self.meta(i) not in (PROTECTED_SLOT, EMPTY_SLOT):
                self.set_meta(i, EMPTY_SLOT)
                _release(self.item_address(i))
                _release(self.item_address(i) + ANY_SIZE)
        self.cell.size = 0
        self.cell.iter_list_head = INVALID_INDEX
        self.cell.iter_list_tail = INVALID_INDEX


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


def _dense_insert(type_index: int, address: int, key, value) -> Optional[int]:
    """Inserts an owned key/value into a dense map; returns a rebuilt map when it was full.

    The rebuilt map has twice the slots and receives every entry (moved) in
    iteration order, then the new one; the old table is freed.
    """
    table = DenseTable(address)
    found = table.try_insert(key)
    if found is not None:
        is_new, slot = found
        value_address = table.item_address(slot) + ANY_SIZE
        old = _take(value_address)
        _put(value_address, value)
        anyvalue.dec_ref_any(old)
        if not is_new:
            anyvalue.dec_ref_any(key)
        table.push_back(slot)
        return None
    cell = table.cell
    new = new_dense_map(type_index, cell.fib_shift - 1, cell.slots * 2)
    index = cell.iter_list_head
    while index != INVALID_INDEX:
        item_address = table.item_address(index)
        moved_key, moved_value = _take(item_address), _take(item_address + ANY_SIZE)
        rehashed = _dense_insert(type_index, new, moved_key, moved_value)
        if rehashed is not None:
            memory.dec_ref(new)
            new = rehashed
        index = table.item(index).next
    rehashed = _dense_insert(type_index, new, key, value)
    if rehashed is not None:
        memory.dec_ref(new)
        new = rehashed
    _dense_release_memory(address)
    return new


# ------------------------------------------------------------- both forms


def map_items(address: int) -> List[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]:
    """The entries of a Map or Dict in iteration order, as borrowed ``(key, value)`` pairs.

    Each value is a 16-byte copy that holds no reference of its own: valid
    while the map keeps the entry (``anyvalue.view_to_owned`` to keep it).
    """
    check_type(address, MAP_TYPES, "map_items")
    cell = map_cell(address)
    if is_small(cell):
        return [(_borrow(_pair_address(cell, i)), _borrow(_pair_address(cell, i) + ANY_SIZE))
                for i in range(cell.size)]
    table, items = DenseTable(address), []
    index = cell.iter_list_head
    while index != INVALID_INDEX:
        item_address = table.item_address(index)
        items.append((_borrow(item_address), _borrow(item_address + ANY_SIZE)))
        index = table.item(index).next
    return items


def _entry_address(address: int, key: abi.TVMFFIAny) -> Optional[int]:
    """Where the entry (key, then value) for an owned ``key`` is stored, or None."""
    cell = map_cell(address)
    if is_small(cell):
        i = _small_find(address, key)
        return _pair_address(cell, i) if i < cell.size else None
    slot = DenseTable(address).search(key)
    return None if slot is None else DenseTable(address).item_address(slot)


def map_find(address: int, key: abi.TVMFFIAny) -> Optional[abi.TVMFFIAny]:
    """The value stored for an owned ``key`` (borrowed), or None when absent."""
    check_type(address, MAP_TYPES, "map_find")
    entry = _entry_address(address, key)
    return None if entry is None else _borrow(entry + ANY_SIZE)


def map_lookup(address: int, key_view: abi.TVMFFIAny) -> Optional[abi.TVMFFIAny]:
    """The value stored for ``key_view`` (any encoding, e.g. a raw C string), or None.

    The key is made owned first, as C++ does when it converts an AnyView key to
    Any; the returned value is borrowed from the map.
    """
    key = owned_copy(key_view)
    try:
        return map_find(address, key)
    finally:
        anyvalue.dec_ref_any(key)


def _create_from_items(type_index: int, items) -> int:
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
        rehashed = insert(type_index, address, _copy(key), _copy(value))
        if rehashed is not None:
            memory.dec_ref(address)
            address = rehashed
    return address


def _insert(address: int, key, value) -> Optional[int]:
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
        new = _create_from_items(type_index, map_items(address))
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


def _switch_to(address: int, other: int) -> None:
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


def _build(type_index: int, pairs: Sequence[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]) -> int:
    """A new Map or Dict made by setting ``pairs`` (borrowed views) one by one from empty.

    A Map continues with each grown object; a Dict rewrites itself in place. The
    two end in the same layout.
    """
    address = new_small_map(type_index)
    try:
        for key, value in pairs:
            if type_index == TI.kTVMFFIDict:
                dict_set(address, key, value)
            else:
                grown = _insert(address, owned_copy(key), owned_copy(value))
                if grown is not None:
                    memory.dec_ref(address)
                    address = grown
    except BaseException:
        memory.dec_ref(address)
        raise
    return address


def map_from_pairs(pairs: Sequence[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]) -> int:
    """A new Map holding owned copies of ``pairs`` (borrowed views), as ``ffi.Map`` builds it.

    Later duplicates replace the value of an earlier equal key. Returns an owned address.
    """
    return _build(TI.kTVMFFIMap, pairs)


def dict_from_pairs(pairs: Sequence[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]) -> int:
    """A new Dict holding owned copies of ``pairs``, as ``ffi.Dict`` builds it; owned address."""
    return _build(TI.kTVMFFIDict, pairs)


def dict_set(address: int, key_view: abi.TVMFFIAny, value_view: abi.TVMFFIAny) -> None:
    """Sets ``key -> value`` in a Dict in place (owned copies of both views are stored)."""
    check_type(address, (TI.kTVMFFIDict,), "dict_set")
    grown = _insert(address, owned_copy(key_view), owned_copy(value_view))
    if grown is not None:
        _switch_to(address, grown)


def dict_erase(address: int, key_view: abi.TVMFFIAny) -> None:
    """Removes ``key`` from a Dict in place; nothing happens when it is absent."""
    check_type(address, (TI.kTVMFFIDict,), "dict_erase")
    key = owned_copy(key_view)
    try:
        if is_small(map_cell(address)):
            _small_erase(address, _small_find(address, key))
        else:
            table = DenseTable(address)
            slot = table.search(key)
            if slot is not None:
                table.erase(slot)
    finally:
        anyvalue.dec_ref_any(key)


def dict_clear(address: int) -> None:
    """Releases every entry of a Dict; it keeps its form and storage."""
    check_type(address, (TI.kTVMFFIDict,), "dict_clear")
    if is_small(map_cell(address)):
        _small_clear(address)
    else:
        DenseTable(address).clear()


_missing = None


def missing_object() -> int:
    """The process's "missing" sentinel (a bare ``ffi.Object``), borrowed; lives forever.

    ``ffi.MapGetItemOrMissing`` returns it for an absent key and
    ``ffi.GetInvalidObject`` returns it, so a front end compares addresses.
    """
    global _missing
    if _missing is None:
        _missing = memory.new_object(TI.kTVMFFIObject, memory.HEADER_SIZE)
    return _missing


# ---------------------------------------------------------------- ffi.* globals


def _return_copy(result: abi.TVMFFIAny, value: abi.TVMFFIAny) -> None:
    anyvalue.copy_any(value, result)
    anyvalue.inc_ref_any(result)


def _check_pairs(args) -> None:
    if len(args) % 2:
        raise FFIError("InternalError", "Check failed: args.size() % 2 == 0 (1 vs. 0) : ")


def _dict_copy_of_map(address: int) -> int:
    """What C++ makes when a Map is passed for a ``Dict<Any, Any>`` parameter: a Dict copy."""
    return dict_from_pairs(map_items(address))


register_copier("Dict<Any, Any>", _dict_copy_of_map)

_ITER_SIGNATURE = Signature("", ["int"], "Any")


def _item_address(address: int, index: int) -> int:
    cell = map_cell(address)
    if is_small(cell):
        if index >= cell.size:
            raise FFIError("IndexError", "map iterator is past the end of the map")
        return _pair_address(cell, index)
    if index == INVALID_INDEX:
        raise FFIError("IndexError", "map iterator is past the end of the map")
    return DenseTable(address).item_address(index)


def new_forward_iter(address: int) -> int:
    """A Function stepping through a map: ``f(0)`` key, ``f(1)`` value, ``f(2)`` advance.

    ``f(2)`` returns whether an entry remains. Like upstream's functor it holds
    no reference to the map: the caller keeps the map alive and unchanged
    while iterating. Owned function address.
    """
    cell = map_cell(address)
    small = is_small(cell)
    state = {"index": 0 if small else cell.iter_list_head}
    end = cell.size if small else INVALID_INDEX

    def step(args, result):
        _ITER_SIGNATURE.check_count(args)
        command = _ITER_SIGNATURE.convert(args, 0, [], [])
        index = state["index"]
        if command == 0:
            _return_copy(result, _borrow(_item_address(address, index)))
        elif command == 1:
            _return_copy(result, _borrow(_item_address(address, index) + ANY_SIZE))
        else:
            if small:
                size = map_cell(address).size
                index = index + 1 if index + 1 < size else size
            elif index != INVALID_INDEX:
                index = DenseTable(address).item(index).next
            state["index"] = index
            result.type_index = TI.kTVMFFIBool
            result.zero_padding = 0
            result.v_int64 = int(index != end)

    return new_python_function(step)


def _get_item(result, address, key) -> None:
    value = map_find(address, key)
    if value is None:
        raise FFIError("KeyError", "key is not in Map")
    _return_copy(result, value)


def _get_item_or_missing(result, address, key) -> None:
    value = map_find(address, key)
    if value is None:
        set_object(result, missing_object())
        memory.inc_ref(missing_object())
    else:
        _return_copy(result, value)


@def_global("ffi.Map")
def _ffi_map(args, result):
    _check_pairs(args)
    set_object(result, map_from_pairs([(args[i], args[i + 1]) for i in range(0, len(args), 2)]))


@typed_global("ffi.MapSize", ["ffi.Map"], "int")
def _map_size(result, address):
    store_int(result, map_size(address))


@typed_global("ffi.MapGetItem", ["ffi.Map", "Any"], "Any")
def _map_get_item(result, address, key):
    _get_item(result, address, key)


@typed_global("ffi.MapCount", ["ffi.Map", "Any"], "int")
def _map_count(result, address, key):
    store_int(result, int(map_find(address, key) is not None))


@typed_global("ffi.MapForwardIterFunctor", ["ffi.Map"], "ffi.Function")
def _map_forward_iter(result, address):
    set_object(result, new_forward_iter(address))


@typed_global("ffi.MapGetItemOrMissing", ["ffi.Map", "Any"], "Any")
def _map_get_item_or_missing(result, address, key):
    _get_item_or_missing(result, address, key)


@def_global("ffi.Dict")
def _ffi_dict(args, result):
    _check_pairs(args)
    set_object(result, dict_from_pairs([(args[i], args[i + 1]) for i in range(0, len(args), 2)]))


@typed_global("ffi.DictSize", ["ffi.Dict"], "int")
def _dict_size(result, address):
    store_int(result, map_size(address))


@typed_global("ffi.DictGetItem", ["ffi.Dict", "Any"], "Any")
def _dict_get_item(result, address, key):
    _get_item(result, address, key)


@typed_global("ffi.DictSetItem", ["Dict<Any, Any>", "Any", "Any"], "void")
def _dict_set_item(result, address, key, value):
    dict_set(address, key, value)


@typed_global("ffi.DictCount", ["ffi.Dict", "Any"], "int")
def _dict_count(result, address, key):
    store_int(result, int(map_find(address, key) is not None))


@typed_global("ffi.DictErase", ["Dict<Any, Any>", "Any"], "void")
def _dict_erase(result, address, key):
    dict_erase(address, key)


@typed_global("ffi.DictClear", ["Dict<Any, Any>"], "void")
def _dict_clear(result, address):
    dict_clear(address)


@typed_global("ffi.DictForwardIterFunctor", ["ffi.Dict"], "ffi.Function")
def _dict_forward_iter(result, address):
    set_object(result, new_forward_iter(address))


@typed_global("ffi.DictGetItemOrMissing", ["ffi.Dict", "Any"], "Any")
def _dict_get_item_or_missing(result, address, key):
    _get_item_or_missing(result, address, key)


@typed_global("ffi.GetInvalidObject", [], "ffi.Object")
def _get_invalid_object(result):
    memory.inc_ref(missing_object())
    set_object(result, missing_object())


# ------------------------------------------- devices inside nested containers


def first_non_cpu_device(value: abi.TVMFFIAny) -> Optional[abi.DLDevice]:
    """The device of the first non-CPU Tensor in ``value``, searched depth-first through
    Array/List elements and Map/Dict values; None when there is none."""
    index = value.type_index
    if index == TI.kTVMFFITensor:
        tensor = abi.DLTensor.from_address(memory.cell_address(value.v_ptr))
        if tensor.device.device_type != abi.DLDeviceType.kDLCPU:
            return abi.DLDevice(tensor.device.device_type, tensor.device.device_id)
        return None
    if index in (TI.kTVMFFIArray, TI.kTVMFFIList):
        children = seq_items(value.v_ptr)
    elif index in (TI.kTVMFFIMap, TI.kTVMFFIDict):
        children = [item for _, item in map_items(value.v_ptr)]
    else:
        return None
    for child in children:
        found = first_non_cpu_device(child)
        if found is not None:
            return found
    return None


@typed_global("ffi.ContainerFindFirstNonCPUDevice", ["Any"], "Device")
def _find_first_non_cpu_device(result, value):
    device = first_non_cpu_device(value) or abi.DLDevice(abi.DLDeviceType.kDLCPU, 0)
    result.type_index = TI.kTVMFFIDevice
    result.zero_padding = 0
    result.v_device = device
