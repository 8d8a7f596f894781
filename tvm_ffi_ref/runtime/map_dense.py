"""The dense form's hash table: home slots, probe chains and the iteration list.

Its twin in C: ``tvm_ffi_fast/src/map_dense.c``.

A key's chain starts at its home slot (Fibonacci hashing of its AnyHash) and
follows the jumps its slots' metadata bytes encode; the entries are also linked
in insertion order through ``prev``/``next``. C++ walks and edits these chains
inline, so :class:`DenseTable` takes upstream's steps one for one (the rules
are in :mod:`.maps`). It is the one intricate algorithm of a map, so it stands
alone: it works on a table that exists; making, growing and freeing tables is
:mod:`.map_storage`'s.
"""

from __future__ import annotations

import ctypes
from typing import Optional, Tuple

from tvm_ffi_common import abi

from .any_hash import any_equal, any_hash
from .container_common import ANY_SIZE
from .hashing import MASK64
from .map_layout import (
    BLOCK_SIZE,
    BLOCK_SLOTS,
    EMPTY_SLOT,
    INVALID_INDEX,
    ITEM_SIZE,
    JUMP_MASK,
    NOT_HEAD,
    PAIR_SIZE,
    PROBE_DISTANCES,
    PROTECTED_SLOT,
    ZERO_ANY,
    ZERO_PAIR,
    DenseItem,
    borrow,
    map_cell,
    put,
    release,
)
from .slots import FFIError

MAX_LOAD_FACTOR = 0.99
#: Where an item's ``prev`` and ``next`` are, in 8-byte words from the item's start.
_PREV_WORD = DenseItem.prev.offset // 8
_NEXT_WORD = DenseItem.next.offset // 8
FIB_MULTIPLIER = 11400714819323198485


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


class DenseTable:
    """The slot table of a dense-form map, with upstream's chain and list operations.

    Reads the object's ``size`` and list ends on every use, so it stays valid while entries
    come and go; not across a rebuild, which replaces the table (its address ``data``, its
    ``slots`` and ``fib_shift`` are read once). The table is seen through two ctypes arrays
    over its memory, as bytes (the metadata) and as 8-byte words (an item's ``prev`` and
    ``next``): a read or write is an index into one of them, not a new ctypes object.
    """

    def __init__(self, address: int):
        self.address = address
        self.cell = map_cell(address)
        self.data = self.cell.data
        self.slots = self.cell.slots
        self.fib_shift = self.cell.fib_shift
        size = (self.slots + BLOCK_SLOTS - 1) // BLOCK_SLOTS * BLOCK_SIZE if self.data else 0
        self.bytes = (ctypes.c_uint8 * size).from_address(self.data or 0)
        self.words = (ctypes.c_uint64 * (size // 8)).from_address(self.data or 0)

    # --- geometry
    @staticmethod
    def _item_offset(i: int) -> int:
        """Where slot ``i``'s item (key, value, prev, next) starts, from the table's start."""
        return (i // BLOCK_SLOTS) * BLOCK_SIZE + BLOCK_SLOTS + (i % BLOCK_SLOTS) * ITEM_SIZE

    def meta(self, i: int) -> int:
        """The metadata byte of slot ``i``."""
        return self.bytes[(i // BLOCK_SLOTS) * BLOCK_SIZE + i % BLOCK_SLOTS]

    def set_meta(self, i: int, meta: int) -> None:
        self.bytes[(i // BLOCK_SLOTS) * BLOCK_SIZE + i % BLOCK_SLOTS] = meta

    def item_address(self, i: int) -> int:
        """Where slot ``i``'s item (key, value, prev, next) lives."""
        return self.data + self._item_offset(i)

    def item(self, i: int) -> DenseItem:
        """Slot ``i``'s item as a structure (for readers; the operations use the views)."""
        return DenseItem.from_address(self.item_address(i))

    def key(self, i: int) -> abi.TVMFFIAny:
        """Slot ``i``'s key, borrowed."""
        return borrow(self.data + self._item_offset(i))

    def prev(self, i: int) -> int:
        """The slot before ``i`` in iteration order (:data:`INVALID_INDEX` for none)."""
        return self.words[self._item_offset(i) // 8 + _PREV_WORD]

    def next(self, i: int) -> int:
        """The slot after ``i`` in iteration order (:data:`INVALID_INDEX` for none)."""
        return self.words[self._item_offset(i) // 8 + _NEXT_WORD]

    def set_prev(self, i: int, prev: int) -> None:
        self.words[self._item_offset(i) // 8 + _PREV_WORD] = prev

    def set_next(self, i: int, next_: int) -> None:
        self.words[self._item_offset(i) // 8 + _NEXT_WORD] = next_

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
        return None if distance == 0 else (i + distance) % self.slots

    def set_jump(self, i: int, jump: int) -> None:
        self.set_meta(i, (self.meta(i) & NOT_HEAD) | jump)

    def home(self, hash_value: int) -> int:
        return fib_hash(hash_value, self.fib_shift)

    def search(self, key: abi.TVMFFIAny) -> Optional[int]:
        """The slot holding ``key``, or None."""
        if self.cell.size == 0:
            return None
        i = self.home(any_hash(key))
        if not self.is_head(i):
            return None
        while i is not None:
            if any_equal(key, self.key(i)):
                return i
            i = self.next_link(i)
        return None

    def find_prev(self, i: int) -> int:
        """The link before slot ``i`` on its chain (``i`` must not be a head)."""
        link = self.home(any_hash(self.key(i)))
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
            candidate = (i + PROBE_DISTANCES[jump]) % self.slots
            if self.is_empty(candidate):
                return jump, candidate
        return None

    def is_full(self) -> bool:
        return self.cell.size + 1 > self.slots * MAX_LOAD_FACTOR

    def _new_link(self, i: int, meta: int, key: abi.TVMFFIAny) -> None:
        """Makes slot ``i`` a chain link holding ``key`` (moved in) and a None value."""
        self.set_meta(i, meta)
        item_address = self.item_address(i)
        put(item_address, key)
        ctypes.memmove(item_address + ANY_SIZE, ZERO_ANY, ANY_SIZE)
        self.set_prev(i, INVALID_INDEX)
        self.set_next(i, INVALID_INDEX)

    # --- the iteration list
    def unlink(self, i: int) -> None:
        prev, next_, cell = self.prev(i), self.next(i), self.cell
        if prev == INVALID_INDEX:
            cell.iter_list_head = next_
        else:
            self.set_next(prev, next_)
        if next_ == INVALID_INDEX:
            cell.iter_list_tail = prev
        else:
            self.set_prev(next_, prev)

    def push_back(self, i: int) -> None:
        cell = self.cell
        tail = cell.iter_list_tail
        self.set_prev(i, tail)
        self.set_next(i, INVALID_INDEX)
        if tail != INVALID_INDEX:
            self.set_next(tail, i)
        if cell.iter_list_head == INVALID_INDEX:
            cell.iter_list_head = i
        cell.iter_list_tail = i

    def replace_in_list(self, src: int, dst: int) -> None:
        """Puts slot ``dst`` where slot ``src`` was in the iteration list."""
        prev, next_, cell = self.prev(src), self.next(src), self.cell
        self.set_prev(dst, prev)
        self.set_next(dst, next_)
        if prev == INVALID_INDEX:
            cell.iter_list_head = dst
        else:
            self.set_next(prev, dst)
        if next_ == INVALID_INDEX:
            cell.iter_list_tail = dst
        else:
            self.set_prev(next_, dst)

    # --- insertion and removal
    def try_insert(self, key: abi.TVMFFIAny) -> Optional[Tuple[bool, int]]:
        """Finds or makes the slot for ``key``: ``(is_new, slot)``, or None when the table is full.

        A new slot holds ``key`` (moved in) and a None value; an existing one is
        unlinked from the iteration list (its caller re-appends it) and ``key``
        stays with the caller.
        """
        if self.slots == 0:
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
            if any_equal(key, self.key(link)):
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
            ctypes.memmove(self.item_address(moving), ZERO_PAIR, PAIR_SIZE)
            self.set_prev(empty, INVALID_INDEX)
            self.set_next(empty, INVALID_INDEX)
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
            release(self.item_address(i))
            release(self.item_address(i) + ANY_SIZE)
            self.set_meta(i, EMPTY_SLOT)
            return
        prev, last = i, self.next_link(i)
        while self.has_next(last):
            prev, last = last, self.next_link(last)
        self.unlink(i)
        release(self.item_address(i))
        release(self.item_address(i) + ANY_SIZE)
        ctypes.memmove(self.item_address(i), self.item_address(last), PAIR_SIZE)
        ctypes.memmove(self.item_address(last), ZERO_PAIR, PAIR_SIZE)
        self.replace_in_list(last, i)
        self.set_meta(last, EMPTY_SLOT)
        self.set_jump(prev, 0)

    def clear(self) -> None:
        """Releases every entry; protected slots stay protected, as upstream leaves them."""
        blocks = (self.slots + BLOCK_SLOTS - 1) // BLOCK_SLOTS
        for block in range(blocks):
            # a block's metadata bytes read at once (one slice, not one read per slot)
            start = block * BLOCK_SIZE
            for offset, meta in enumerate(self.bytes[start:start + BLOCK_SLOTS]):
                if meta not in (PROTECTED_SLOT, EMPTY_SLOT):
                    i = block * BLOCK_SLOTS + offset
                    self.set_meta(i, EMPTY_SLOT)
                    release(self.item_address(i))
                    release(self.item_address(i) + ANY_SIZE)
        self.cell.size = 0
        self.cell.iter_list_head = INVALID_INDEX
        self.cell.iter_list_tail = INVALID_INDEX

