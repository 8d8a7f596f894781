"""The Python side of the type registry: a :class:`TypeInfo` per type, and their classes.

Three tables map type index, type key and Python class to the
:class:`~.type_records.TypeInfo` of a type; the class each type index is
wrapped in lives in the core's table (``object.register_class``). A class
the core modules registered directly (``Array``, ``String``, ...) gets its
``TypeInfo`` on first request, and every ``Object`` subclass answers
``__tvm_ffi_type_info__`` with the info of the nearest registered class in
its MRO.

A type nobody registered a class for gets one the first time an object of it
reaches Python (:func:`make_fallback_class`): derived from its parent's class,
with the type's reflected fields as properties and its methods as methods.

Also here: type attribute columns (:func:`_lookup_type_attr`,
:func:`_register_type_attr`) and key/index lookups.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Dict, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import upcalls
from .convert import CallScope, borrowed_to_python, set_arg
from .device import Device
from .dtype import dtype
from .function import raise_last_error
from .object import Object, register_class, type_info as runtime_record
from .sentinels import KWARGS, MISSING
from .type_info import TYPE_CLASSES
from .type_records import TypeInfo, read_fields, read_methods

TI = abi.TVMFFITypeIndex

TYPE_INDEX_TO_INFO: Dict[int, TypeInfo] = {}
TYPE_KEY_TO_INFO: Dict[str, TypeInfo] = {}
TYPE_CLS_TO_INFO: Dict[type, TypeInfo] = {}

__all__ = ["KWARGS", "MISSING", "TYPE_CLS_TO_INFO", "TYPE_INDEX_TO_INFO", "TYPE_KEY_TO_INFO"]


def _byte_array(text: str) -> abi.TVMFFIByteArray:
    data = text.encode()
    return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


def _check(status: int) -> None:
    if status != 0:

        raise_last_error()


# ------------------------------------------------------------------ lookups


def _clear_raised() -> None:
    error = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(error))
    if error.value:
        LIB.TVMFFIObjectDecRef(error.value)


def _object_type_key_to_index(type_key: str) -> Optional[int]:
    """The index registered for ``type_key``, or None."""
    out = ctypes.c_int32()
    key = _byte_array(type_key)
    if LIB.TVMFFITypeKeyToIndex(ctypes.byref(key), ctypes.byref(out)) == 0:
        return out.value
    _clear_raised()  # not registered: nothing to report
    return None


def _record_or_none(type_index: int) -> Optional[abi.TVMFFITypeInfo]:
    record = LIB.TVMFFIGetTypeInfo(type_index) if type_index >= 0 else None
    if not record:
        _clear_raised()  # an index nobody registered
        return None
    return record.contents


def type_index_to_key(type_index: int) -> str:
    """The key of a type index (``"<unknown>"`` for one nobody registered)."""
    info = TYPE_INDEX_TO_INFO.get(type_index)
    if info is not None:
        return info.type_key
    record = _record_or_none(type_index)
    if record is None:
        return "<unknown>"
    return ctypes.string_at(record.type_key.data, record.type_key.size).decode()


def type_depth(type_index: int) -> Optional[int]:
    """How many ancestors a type has (None for an unregistered index)."""
    record = _record_or_none(type_index)
    return None if record is None else record.type_depth


def type_ancestor_at(type_index: int, depth: int) -> Optional[int]:
    """The index of a type's ancestor at ``depth`` (None when the type is not that deep)."""
    record = _record_or_none(type_index)
    if record is None or record.type_depth <= depth:
        return None
    return record.type_ancestors[depth].contents.type_index


def class_of_type_index(type_index: int) -> Optional[type]:
    """The Python class registered (or made) for a type index, if any."""
    return TYPE_CLASSES.get(type_index)


def _explicit_index(cls: type) -> Optional[int]:
    """The index ``cls`` was registered for directly by a core module, if any."""
    index = cls.__dict__.get("_tvm_ffi_type_index") if isinstance(cls, type) else None
    return index if index is not None and TYPE_CLASSES.get(index) is cls else None


# ------------------------------------------------------------- the tables


def _type_info_create_from_type_key(type_cls: Optional[type], type_key: str) -> TypeInfo:
    index = _object_type_key_to_index(type_key)
    if index is None:
        raise ValueError(f"Cannot find type key: {type_key}")
    record = runtime_record(index)
    return TypeInfo(
        type_cls=type_cls, type_index=index,
        type_key=ctypes.string_at(record.type_key.data, record.type_key.size).decode(),
        type_ancestors=[record.type_ancestors[d].contents.type_index
                        for d in range(record.type_depth)],
        fields=read_fields(record), methods=read_methods(record), parent_type_info=None)


def _update_registry(type_index: int, type_key: str, info: TypeInfo,
                     type_cls: Optional[type]) -> None:
    TYPE_INDEX_TO_INFO[type_index] = info
    TYPE_KEY_TO_INFO[type_key] = info
    if type_cls is not None:
        TYPE_CLS_TO_INFO[type_cls] = info
        if TYPE_CLASSES.get(type_index) is not type_cls:
            register_class(type_index, type_cls)


def _register_object_by_index(type_index: int, type_cls: type) -> TypeInfo:
    """Makes ``type_cls`` the class of ``type_index`` and returns the type's fresh info."""
    existing = TYPE_CLASSES.get(type_index)
    # PyPy's classes have no __basicsize__ (no C layout to outgrow): the check is CPython's.
    if (existing is not None and type_cls is not None and existing is not type_cls
            and getattr(type_cls, "__basicsize__", 0) > getattr(existing, "__basicsize__", 0)):
        raise ValueError(
            f"Type '{type_index_to_key(type_index)}' already has a registered class "
            f"({existing!r}); re-registering it with the larger wrapper class {type_cls!r} is "
            "not supported. Register the class before any object of this type is materialized "
            "(which auto-creates a fallback).")
    info = _type_info_create_from_type_key(type_cls, type_index_to_key(type_index))
    _update_registry(type_index, info.type_key, info, type_cls)
    return info


def _set_type_cls(type_info: TypeInfo, type_cls: type) -> None:
    """Binds a class to an info that has none yet."""
    assert type_info.type_cls is None, f"Type already registered for {type_info.type_key}"
    assert TYPE_INDEX_TO_INFO[type_info.type_index] is type_info
    assert TYPE_KEY_TO_INFO[type_info.type_key] is type_info
    type_info.type_cls = type_cls
    TYPE_CLS_TO_INFO[type_cls] = type_info
    register_class(type_info.type_index, type_cls)


def _lookup_or_register_type_info_from_type_key(type_key: str) -> TypeInfo:
    """The info of ``type_key``, made (with the class a core registered, if any) on first use."""
    info = TYPE_KEY_TO_INFO.get(type_key)
    if info is not None:
        return info
    index = _object_type_key_to_index(type_key)
    cls = TYPE_CLASSES.get(index) if index is not None else None
    if cls is not None and _explicit_index(cls) != index:
        cls = None
    info = _type_info_create_from_type_key(cls, type_key)
    _update_registry(info.type_index, type_key, info, cls)
    return info


def _type_cls_to_type_info(type_cls: type) -> Optional[TypeInfo]:
    """The info registered for exactly this class, or None."""
    info = TYPE_CLS_TO_INFO.get(type_cls)
    if info is None and _explicit_index(type_cls) is not None:
        info = _lookup_or_register_type_info_from_type_key(
            type_index_to_key(_explicit_index(type_cls)))
    return info


def _type_index_to_type_info(type_index: int) -> Optional[TypeInfo]:
    """The info of a type index Python has seen, or None."""
    info = TYPE_INDEX_TO_INFO.get(type_index)
    if info is None and type_index in TYPE_CLASSES:
        info = _lookup_or_register_type_info_from_type_key(type_index_to_key(type_index))
    return info


class _TypeInfoOfClass:
    """``cls.__tvm_ffi_type_info__``: the info of the nearest registered class in the MRO."""

    def __get__(self, obj: Any, owner: type) -> TypeInfo:
        for klass in owner.__mro__:
            if "__tvm_ffi_type_info__" in klass.__dict__ and klass is not Object:
                value = klass.__dict__["__tvm_ffi_type_info__"]
                if not isinstance(value, _TypeInfoOfClass):
                    return value
            info = _type_cls_to_type_info(klass)
            if info is not None:
                return info
        raise AttributeError("__tvm_ffi_type_info__")


Object.__tvm_ffi_type_info__ = _TypeInfoOfClass()


def _register_value_classes() -> None:
    """Infos of the value classes that stand for a POD type: ``Device`` and ``DataType``."""

    data_type = getattr(sys.modules[dtype.__module__], "DataType", None)
    for cls, index in ((Device, TI.kTVMFFIDevice), (data_type, TI.kTVMFFIDataType)):
        if cls is None:
            continue
        info = TypeInfo(type_cls=cls, type_index=int(index), type_key=type_index_to_key(index),
                        type_ancestors=[], fields=[], methods=[], parent_type_info=None)
        TYPE_INDEX_TO_INFO[info.type_index] = TYPE_KEY_TO_INFO[info.type_key] = info
        TYPE_CLS_TO_INFO[cls] = info


# ---------------------------------------------------------- fallback classes


def make_fallback_class(type_index: int) -> type:
    """The class of a type nobody registered: made from its record, derived from its parent's."""
    type_key = type_index_to_key(type_index)
    info = _lookup_or_register_type_info_from_type_key(type_key)
    parent = info.parent_type_info
    assert parent is not None, f"{type_key} has no parent type"
    parent_cls = parent.type_cls or TYPE_CLASSES.get(parent.type_index)
    if parent_cls is None:
        parent_cls = make_fallback_class(parent.type_index)
    cls = type(type_key.rsplit(".", 1)[-1], (parent_cls,), {
        "__slots__": (), "__tvm_ffi_type_info__": info, "__qualname__": type_key,
        "__module__": type_key.rpartition(".")[0],
        "__doc__": (f"Auto-generated fallback class for {type_key}.\n"
                    "This class is generated because the class is not registered.\n"
                    "Please do not use this class directly, instead register the class\n"
                    "using `register_object` decorator.")})
    for field in info.fields or ():
        setattr(cls, field.name, field.as_property(cls))
    for method in info.methods:
        setattr(cls, method.name, method.as_callable(cls))
    info.type_cls = cls
    _update_registry(type_index, type_key, info, cls)
    return cls


# --------------------------------------------------------- type attributes


def _lookup_type_attr(type_index: int, attr_key: str, ancestor: bool = False) -> Any:
    """The value of type attribute ``attr_key`` for a type (or, with ``ancestor``, its nearest
    ancestor that has one); None when absent."""

    key = _byte_array(attr_key)
    column = LIB.TVMFFIGetTypeAttrColumn(ctypes.byref(key))
    if not column:
        return None
    column = column.contents

    def entry(index: int) -> Any:
        offset = index - column.begin_index
        if not 0 <= offset < column.size:
            return None
        value = column.data[offset]
        return None if value.type_index == TI.kTVMFFINone else borrowed_to_python(value)

    value = entry(type_index)
    if value is not None or not ancestor:
        return value
    record = runtime_record(type_index)
    for depth in range(record.type_depth - 1, -1, -1):
        value = entry(record.type_ancestors[depth].contents.type_index)
        if value is not None:
            return value
    return None


def _register_type_attr(type_index: int, attr_key: str, value: Any) -> None:
    """Registers ``value`` as type attribute ``attr_key`` of a type (once per slot)."""

    scope = CallScope()
    try:
        packed = abi.TVMFFIAny()
        set_arg(packed, value, scope)
        key = _byte_array(attr_key)
        _check(LIB.TVMFFITypeRegisterAttr(type_index, ctypes.byref(key), ctypes.byref(packed)))
    finally:
        scope.close()


# ------------------------------------------------------ Python-defined types


def _register_py_class(parent_type_info: TypeInfo, type_key: str, type_cls: type) -> TypeInfo:
    """Allocates a type for a Python-defined class under ``parent_type_info``; its info has
    ``fields=None`` until :meth:`TypeInfo._register_fields`. ``ValueError`` for a taken key:
    one a Python class was registered for, or one the runtime knows (a built-in such as
    ``ffi.Array``, whose class is made on first use, or a type C++ registered), since
    allocating under a taken key would hand back that type's index."""
    known_index = _object_type_key_to_index(type_key)
    retried = known_index is not None and _ROLLED_BACK.get(type_key) == (
        known_index, parent_type_info.type_index)
    if type_key in TYPE_KEY_TO_INFO or (known_index is not None and not retried):
        raise ValueError(f"Type key '{type_key}' is already registered")
    _ROLLED_BACK.pop(type_key, None)
    key = _byte_array(type_key)
    depth = len(parent_type_info.type_ancestors) + 1
    type_index = LIB.TVMFFITypeGetOrAllocIndex(ctypes.byref(key), -1, depth, 0, 1,
                                               parent_type_info.type_index)
    if type_index < 0:
        _check(-1)
    info = TypeInfo(type_cls=type_cls, type_index=type_index, type_key=type_key,
                    type_ancestors=[*parent_type_info.type_ancestors,
                                    parent_type_info.type_index],
                    fields=None, methods=[], parent_type_info=parent_type_info)
    _update_registry(type_index, type_key, info, type_cls)
    return info


#: Keys whose py_class registration failed and was rolled back: key -> (type index, parent's
#: index). The runtime cannot free a type index, so a retry under the same parent takes the
#: index back (``TVMFFITypeGetOrAllocIndex`` returns it) instead of finding the key taken.
_ROLLED_BACK: Dict[str, tuple] = {}


def _rollback_py_class(type_info: TypeInfo) -> None:
    """Forgets a :func:`_register_py_class` on the Python side (the index stays allocated), so
    the key may be registered again."""
    _ROLLED_BACK[type_info.type_key] = (type_info.type_index, type_info.type_ancestors[-1])
    TYPE_KEY_TO_INFO.pop(type_info.type_key, None)
    if type_info.type_cls is not None:
        TYPE_CLS_TO_INFO.pop(type_info.type_cls, None)
    TYPE_INDEX_TO_INFO.pop(type_info.type_index, None)
    TYPE_CLASSES.pop(type_info.type_index, None)


_register_value_classes()

upcalls.install("type_registry", make_fallback_class=make_fallback_class,
                class_of_type_index=class_of_type_index, type_index_to_key=type_index_to_key,
                object_type_key_to_index=_object_type_key_to_index,
                lookup_type_attr=_lookup_type_attr, type_index_to_type_info=_type_index_to_type_info,
                lookup_or_register_type_info_from_type_key=(
                    _lookup_or_register_type_info_from_type_key))
