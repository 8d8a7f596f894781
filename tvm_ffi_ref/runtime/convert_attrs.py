"""``__ffi_convert__``: how a value becomes an object of a built-in type.

Its twin in C: ``tvm_ffi_fast/src/convert_attrs.c``.

Upstream registers, for the built-in object types, a type attribute
``__ffi_convert__``: a Function ``(AnyView) -> T`` applying C++'s cast rules
(``TypeTraits<T>::TryCastFromAnyView``). A front end's type converter calls it
when a value is not already of the field's type (a list given for a Shape
field, say). The rules, by type:

====================  ======================================================
type                  accepts (anything else: ``TypeError``
                      "Cannot cast from `<key>` to `<type>`")
====================  ======================================================
``ffi.Object``        None, any object
``ffi.String``        a string (SmallStr or String)
``ffi.Bytes``         bytes (SmallBytes or Bytes)
``ffi.Error``         an Error
``ffi.Function``      None, a Function
``ffi.Shape``         a Shape; an Array or List of ints (a new Shape)
``ffi.Tensor``        None, a Tensor
``ffi.Array``         an Array; a List (copied into a new Array)
``ffi.List``          a List; an Array (copied into a new List)
``ffi.Map``           a Map; a Dict (copied into a new Map)
``ffi.Dict``          a Dict; a Map (copied into a new Dict)
``ffi.IntEnum``,      an object of that type or one derived from it
``ffi.StrEnum``
====================  ======================================================

Each Function is named ``<type key>.__ffi_convert__`` and spells its result
type as C++ does (``str``, ``Array<Any>``, ...) in its argument errors.
"""

from __future__ import annotations

from typing import Callable, Optional

from tvm_ffi_common import abi

from . import anyvalue, maps, memory, sequences, shapes
from .functions import new_python_function, set_object
from .registry import TYPES
from .signatures import type_key_of
from .slots import FFIError

TI = abi.TVMFFITypeIndex
OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def _same(value: abi.TVMFFIAny, result: abi.TVMFFIAny) -> None:
    anyvalue.view_to_owned(value, result)


def _instance_of(type_index: int, nullable: bool = False) -> Callable:
    """Accepts objects of ``type_index`` (or derived) unchanged, and None when ``nullable``."""

    def cast(value: abi.TVMFFIAny, result: abi.TVMFFIAny) -> bool:
        if value.type_index == TI.kTVMFFINone and nullable:
            result.type_index, result.v_int64 = TI.kTVMFFINone, 0
            return True
        if value.type_index >= OBJECT_BEGIN and TYPES.is_instance(value.type_index, type_index):
            _same(value, result)
            return True
        return False

    return cast


def _one_of(*type_indices: int) -> Callable:
    def cast(value: abi.TVMFFIAny, result: abi.TVMFFIAny) -> bool:
        if value.type_index in type_indices:
            _same(value, result)
            return True
        return False

    return cast


def _copied(same: int, other: int, copy: Callable[[int], int]) -> Callable:
    """Accepts ``same`` unchanged and ``other`` copied into a new ``same``."""

    def cast(value: abi.TVMFFIAny, result: abi.TVMFFIAny) -> bool:
        if value.type_index == same:
            _same(value, result)
            return True
        if value.type_index == other:
            set_object(result, copy(value.v_ptr))
            return True
        return False

    return cast


def _shape(value: abi.TVMFFIAny, result: abi.TVMFFIAny) -> bool:
    if value.type_index == TI.kTVMFFIShape:
        _same(value, result)
        return True
    if value.type_index not in (TI.kTVMFFIArray, TI.kTVMFFIList):
        return False
    items = sequences.seq_items(value.v_ptr)
    if any(item.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool) for item in items):
        return False
    set_object(result, shapes.shape_from_ints([item.v_int64 for item in items]))
    return True


def _seq_copy(build: Callable) -> Callable[[int], int]:
    return lambda address: build(sequences.seq_items(address))


def _map_copy(build: Callable) -> Callable[[int], int]:
    return lambda address: build(maps.map_items(address))


def _register(type_key: str, returns: str, cast: Callable) -> None:
    name = f"{type_key}.__ffi_convert__"
    signature = f"{name}(0: AnyView) -> {returns}"

    def convert(args, result) -> None:
        if len(args) != 1:
            raise FFIError("TypeError", f"Mismatched number of arguments when calling: "
                                        f"`{signature}`. Expected 1 but got {len(args)} arguments")
        if not cast(args[0], result):
            raise FFIError("TypeError", f"Cannot cast from `{type_key_of(args[0])}` to "
                                        f"`{returns}`")

    function = new_python_function(convert)
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction)
    value.v_ptr = function
    try:
        TYPES.register_attr(TYPES.key_to_index(type_key.encode()), b"__ffi_convert__", value)
    finally:
        memory.dec_ref(function)  # the column keeps its own reference


def _enum_index(key: str) -> Optional[int]:
    return TYPES.key_to_index(key.encode())


def register_convert_attrs() -> None:
    """Registers ``__ffi_convert__`` for the built-in types, in upstream's order."""
    for type_key, returns, cast in (
            ("ffi.Object", "ffi.Object", _instance_of(TI.kTVMFFIObject, nullable=True)),
            ("ffi.String", "str", _one_of(TI.kTVMFFISmallStr, TI.kTVMFFIStr)),
            ("ffi.Bytes", "bytes", _one_of(TI.kTVMFFISmallBytes, TI.kTVMFFIBytes)),
            ("ffi.Error", "ffi.Error", _instance_of(TI.kTVMFFIError)),
            ("ffi.Function", "ffi.Function", _instance_of(TI.kTVMFFIFunction, nullable=True)),
            ("ffi.Shape", "ffi.Shape", _shape),
            ("ffi.Tensor", "ffi.Tensor", _instance_of(TI.kTVMFFITensor, nullable=True)),
            ("ffi.Array", "Array<Any>", _copied(TI.kTVMFFIArray, TI.kTVMFFIList,
                                                _seq_copy(sequences.array_from_anys))),
            ("ffi.Map", "Map<Any, Any>", _copied(TI.kTVMFFIMap, TI.kTVMFFIDict,
                                                 _map_copy(maps.map_from_pairs))),
            ("ffi.List", "List<Any>", _copied(TI.kTVMFFIList, TI.kTVMFFIArray,
                                              _seq_copy(sequences.list_from_anys))),
            ("ffi.Dict", "Dict<Any, Any>", _copied(TI.kTVMFFIDict, TI.kTVMFFIMap,
                                                   _map_copy(maps.dict_from_pairs))),
            ("ffi.IntEnum", "ffi.IntEnum", _instance_of(_enum_index("ffi.IntEnum"))),
            ("ffi.StrEnum", "ffi.StrEnum", _instance_of(_enum_index("ffi.StrEnum")))):
        _register(type_key, returns, cast)


register_convert_attrs()
