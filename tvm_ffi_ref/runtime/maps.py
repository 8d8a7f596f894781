"""Map and Dict: one hash-map object layout in two forms, mutated in place by either side.

Its twin in C: ``tvm_ffi_fast/src/maps.c``.

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
bits ``J`` indexing :data:`.map_layout.PROBE_DISTANCES`: the next link of the chain is
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

Keys compare and hash with AnyEqual/AnyHash (:mod:`.any_hash`). Tables
this runtime allocates use ``malloc`` and ``data_deleter = free``; tables made by C++
carry C++'s deleter. Whoever frees a table does it through the deleter in the
object. A dying map releases its live entries, then its table.

The code
--------
* :mod:`.map_layout`: the bytes above as ctypes structures and constants;
* :mod:`.map_dense`: Fibonacci hashing and :class:`~.map_dense.DenseTable`,
  the dense form's chains and iteration list;
* :mod:`.map_storage`: making objects of either form, inserting and growing,
  reading entries, freeing tables, a Dict's in-place switch;
* this module: the helpers a front end calls, type-checked, keys and values
  given as borrowed views (:func:`map_from_pairs`, :func:`dict_from_pairs`,
  :func:`map_size`, :func:`map_lookup`, :func:`dict_set`, :func:`dict_erase`,
  :func:`dict_clear`, :func:`missing_object`, and from :mod:`.map_storage`
  :func:`map_items` and :func:`map_find`), and the ``ffi.Map*``, ``ffi.Dict*``,
  ``ffi.GetInvalidObject`` and ``ffi.ContainerFindFirstNonCPUDevice`` globals.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory
from .container_common import ANY_SIZE, check_type, owned_copy
from .container_locks import hold_all, release_all
from .functions import def_global, new_python_function, set_object
from .map_dense import DenseTable
from .map_layout import INVALID_INDEX, MAP_TYPES, borrow, is_small, map_cell, pair_address
from .map_storage import (
    create_from_items,
    map_find,
    map_insert,
    map_items,
    new_small_map,
    small_clear,
    small_erase,
    small_find,
    switch_to,
)
from .sequences import seq_items
from .signatures import Signature, register_copier, typed_global
from .slots import FFIError
from .strings import store_int
from .type_index import TI

# ------------------------------------------------------ helpers for a front end


def map_size(address: int) -> int:
    """How many entries a Map or Dict holds."""
    check_type(address, MAP_TYPES, "map_size")
    return map_cell(address).size


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
                grown = map_insert(address, owned_copy(key), owned_copy(value))
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


def map_from_range(pairs: Sequence[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]) -> int:
    """A new Map made from ``pairs`` at once, as C++'s ``Map(first, last)`` builds it
    (``CreateFromRange``: sized for the count up front); owned address."""
    return create_from_items(TI.kTVMFFIMap, pairs)


def dict_from_pairs(pairs: Sequence[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]]) -> int:
    """A new Dict holding owned copies of ``pairs``, as ``ffi.Dict`` builds it; owned address."""
    return _build(TI.kTVMFFIDict, pairs)


def dict_set(address: int, key_view: abi.TVMFFIAny, value_view: abi.TVMFFIAny) -> None:
    """Sets ``key -> value`` in a Dict in place (owned copies of both views are stored)."""
    check_type(address, (TI.kTVMFFIDict,), "dict_set")
    grown = map_insert(address, owned_copy(key_view), owned_copy(value_view))
    if grown is not None:
        switch_to(address, grown)


def dict_erase(address: int, key_view: abi.TVMFFIAny) -> None:
    """Removes ``key`` from a Dict in place; nothing happens when it is absent."""
    check_type(address, (TI.kTVMFFIDict,), "dict_erase")
    key = owned_copy(key_view)
    try:
        if is_small(map_cell(address)):
            small_erase(address, small_find(address, key))
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
        small_clear(address)
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
        return pair_address(cell, index)
    if index == INVALID_INDEX:
        raise FFIError("IndexError", "map iterator is past the end of the map")
    return DenseTable(address).item_address(index)


def new_forward_iter(address: int) -> int:
    """A Function stepping through a map: ``f(0)`` key, ``f(1)`` value, ``f(2)`` advance.

    ``f(2)`` returns whether an entry remains. Like upstream's functor it holds
    no reference to the map: the caller keeps the map alive while iterating.
    Unlike upstream's, it survives the map changing under it, which another
    thread may do to a Dict: each call holds the Dict, and once the map's size
    or storage differs from when the functor was made, or its position no
    longer names an entry, every call raises Python's ``RuntimeError``
    instead of reading freed or moved entries. Owned function address.
    """
    cell = map_cell(address)
    small = is_small(cell)
    made_as = (cell.size, cell.data, cell.slots)
    state = {"index": 0 if small else cell.iter_list_head}
    end = cell.size if small else INVALID_INDEX
    locked = memory.type_index_of(address) == TI.kTVMFFIDict

    def check(index: int) -> None:
        now = map_cell(address)
        if (now.size, now.data, now.slots) != made_as:
            raise FFIError("RuntimeError", "dictionary changed size during iteration")
        if not small and index != INVALID_INDEX and (
                index >= now.slots or DenseTable(address).is_empty(index)):
            raise FFIError("RuntimeError", "dictionary keys changed during iteration")

    def step(args, result):
        _ITER_SIGNATURE.check_count(args)
        command = _ITER_SIGNATURE.convert(args, 0, [], [])
        held = hold_all([address] if locked else [])
        try:
            index = state["index"]
            check(index)
            if command == 0:
                _return_copy(result, borrow(_item_address(address, index)))
            elif command == 1:
                _return_copy(result, borrow(_item_address(address, index) + ANY_SIZE))
            else:
                if small:
                    index = index + 1 if index + 1 < end else end
                elif index != INVALID_INDEX:
                    index = DenseTable(address).next(index)
                state["index"] = index
                result.type_index = TI.kTVMFFIBool
                result.zero_padding = 0
                result.v_int64 = int(index != end)
        finally:
            release_all(held)

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
