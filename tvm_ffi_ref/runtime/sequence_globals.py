"""The ``ffi.Array*`` and ``ffi.List*`` globals: upstream's semantics, signatures and messages.

Its twin in C: ``tvm_ffi_fast/src/sequence_globals.c``.

Each global is a few lines over :mod:`.sequences` (reading and making) and
:mod:`.sequence_edits` (changing); the argument checks and upstream's error texts
come from the typed signatures (:mod:`.signatures`). A ``List<Any>`` parameter given
an Array receives a List copy of it, as C++ converts one (the copier registered here).
"""

from __future__ import annotations

from tvm_ffi_common import abi

from . import anyvalue
from .functions import def_global, set_bool, set_object
from .sequence_edits import (
    list_append,
    list_insert,
    list_pop,
    list_replace_slice,
    seq_clear,
    seq_erase,
    seq_erase_range,
    seq_reverse,
    seq_set,
)
from .sequences import (
    array_from_anys,
    fill_slots,
    list_from_anys,
    list_reserve,
    new_list,
    seq_contains,
    seq_get,
    seq_items,
    seq_size,
)
from .signatures import register_copier, typed_global
from .strings import store_int


def _return_copy(result: abi.TVMFFIAny, value: abi.TVMFFIAny) -> None:
    anyvalue.copy_any(value, result)
    anyvalue.inc_ref_any(result)


def _list_copy_of_array(address: int) -> int:
    """What C++ makes when an Array is passed for a ``List<Any>`` parameter: a List copy."""
    items = seq_items(address)
    copy = new_list(0)
    list_reserve(copy, len(items))
    fill_slots(copy, items)
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

