"""Whether a result is what the function's type schema says it returns (``result-schema``).

A caller that trusts a function's schema converts its result to the declared
type the way upstream's ``TypeTraits<T>::TryCastFromAnyView`` does, so a
result passes when that conversion would: an int or bool for a ``float``, a
bool for an ``int``, an int for a ``bool``, None for an ``Optional``, a
``void*`` or a nullable object type (``ffi.Object``, ``ffi.Function``,
``ffi.Tensor`` and a library's own types, whose nullability the schema does
not say), a List for an Array (and back), a Dict for a Map (and back), a
str for a ``DataType`` or ``Device`` (both parse one), a subclass for an
object type. Keys the checker does not know accept anything: a schema it
cannot read never makes a finding.

:func:`mismatch` runs in the worker, next to the result, where the type
registry tells a subclass from another type.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Optional

from tvm_ffi_common import abi

TI = abi.TVMFFITypeIndex
OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def _set(*names: str) -> FrozenSet[int]:
    return frozenset(int(getattr(TI, "kTVMFFI" + name)) for name in names)


_STR = _set("SmallStr", "Str")
#: Declared type key -> the result type indices its conversion accepts.
ACCEPTS: Dict[str, FrozenSet[int]] = {
    "None": _set("None"),
    "bool": _set("Bool", "Int"),
    "int": _set("Int", "Bool"),
    "float": _set("Float", "Int", "Bool"),
    "void*": _set("OpaquePtr", "None"),
    "DataType": _set("DataType") | _STR,
    "Device": _set("Device") | _STR,
    "DLTensor*": _set("DLTensorPtr", "Tensor"),
    "ffi.String": _STR,
    "std::string": _STR,
    "ffi.SmallStr": _STR,
    "ffi.Bytes": _set("SmallBytes", "Bytes"),
    "ffi.SmallBytes": _set("SmallBytes", "Bytes"),
    "ffi.BigInt": _set("BigInt", "Int", "Bool"),
    "ffi.Error": _set("Error"),
    "ffi.Shape": _set("Shape"),
    "ffi.Tensor": _set("Tensor", "None"),
    "ffi.Function": _set("Function", "None"),
    "ffi.Module": _set("Module"),
    "ffi.Array": _set("Array", "List"),
    "ffi.List": _set("List", "Array"),
    "ffi.Map": _set("Map", "Dict"),
    "ffi.Dict": _set("Dict", "Map"),
}
#: C++ spellings some libraries' schemas use for upstream's keys.
ALIASES = {"std::optional": "Optional", "std::variant": "Variant", "std::tuple": "Tuple",
           "std::vector": "ffi.Array"}
#: Keys that take any result at all.
ANYTHING = {"Any", "AnyView", "Variant", "ObjectRValueRef"}


def describe_index(index: int, name_of: Callable[[int], str]) -> str:
    """``ffi.SmallStr (type index 11)``: a type index as a report names it."""
    return f"{name_of(index)} (type index {index})"


def accepts(schema: Optional[dict], index: int, is_subclass: Callable[[int, str], Optional[bool]]
            ) -> bool:
    """Whether a result of type ``index`` converts to the declared ``schema``.

    ``is_subclass(index, key)`` says whether the registered type ``index`` is
    ``key`` or derives from it (None when ``key`` is no registered type).
    """
    if not schema or not isinstance(schema.get("type"), str) or schema.get("guessed"):
        return True
    key = ALIASES.get(schema["type"], schema["type"])
    args = schema.get("args") or []
    if key in ANYTHING:
        return True
    if key == "Optional":
        return index == int(TI.kTVMFFINone) or accepts(args[0] if args else None, index,
                                                       is_subclass)
    if key == "Tuple":
        return index in ACCEPTS["ffi.Array"]
    if key in ACCEPTS:
        return index in ACCEPTS[key]
    if key == "ffi.Object":
        return index == int(TI.kTVMFFINone) or index >= OBJECT_BEGIN
    if index == int(TI.kTVMFFINone):
        return True  # a library's object type: nullable unless its C++ says otherwise
    verdict = is_subclass(index, key)
    return True if verdict is None else verdict


def registry_subclass(index: int, key: str) -> Optional[bool]:
    """Whether registered type ``index`` is ``key`` or a subclass (None: no such key)."""
    from tvm_ffi_api.type_registry import type_ancestor_at, type_depth
    from tvm_ffi_ref.type_info import type_key_to_index

    wanted = type_key_to_index(key)
    if wanted is None:
        return None
    if wanted == index:
        return True
    if index < OBJECT_BEGIN:
        return False
    depth = type_depth(index)
    return any(type_ancestor_at(index, d) == wanted for d in range(depth or 0))


def mismatch(schema: Optional[dict], index: int, name_of: Callable[[int], str]
             ) -> Optional[str]:
    """Why a result of type ``index`` is not what ``schema`` declares, or None."""
    if accepts(schema, index, registry_subclass):
        return None
    return (f"the function's type schema says it returns {describe_type(schema)}, but the "
            f"result is {describe_index(index, name_of)}, which no conversion to "
            f"{describe_type(schema)} accepts")


def describe_type(schema: Optional[dict]) -> str:
    """``ffi.Array[int]``: a type schema as a short type expression."""
    if schema is None:
        return "?"
    if "shape" in schema:  # a tensor whose shape and dtype a compiled function named
        return f"{schema['type']}[{', '.join(map(str, schema['shape']))}; {schema.get('dtype')}]"
    args = schema.get("args") or []
    if not args:
        return schema["type"]
    return f"{schema['type']}[{', '.join(describe_type(a) for a in args)}]"
