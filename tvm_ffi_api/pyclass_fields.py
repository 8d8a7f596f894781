"""Laying out a Python-defined type: its fields, constructor and methods, in the runtime.

For each ``Field`` of a ``@py_class`` (in order), :func:`register_fields`
chooses storage from the field's schema (:data:`NATIVE_LAYOUT`: int, float,
bool, pointers, dtype and Device are stored natively; str, bytes, ``Any``,
``Optional`` and ``Union`` as a 16-byte Any; everything else as an object
pointer), places it at the next aligned offset after the parent's fields,
and registers a ``TVMFFIFieldInfo`` whose getter comes from
``ffi.MakeFieldGetter`` and whose setter Function from ``ffi.MakeFieldSetter``.
The setter calls back (through the core's ``FIELD_CONVERT_CALLBACK``) a Python
converter that checks and converts the value against the field's schema. Then
``ffi._PyClassRegisterTypeAttrColumns`` gives the type its ``__ffi_new__``,
``__ffi_shallow_copy__`` and generated ``__ffi_init__``. So a C++ kernel sees
an ordinary reflected type: it can read and write the fields through their
records and construct objects with ``__ffi_init__``.

Fields are placed as a C++ compiler of this platform would place them in a
subclass (Itanium ABI: from the parent's unpadded end; Windows: from its
padded size).
"""

from __future__ import annotations

import ctypes
import json
import sys
from typing import Any, Dict, List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import shortcuts, upcalls
from .convert import CallScope, set_arg
from .converter_base import ConvertError
from .function import get_global_func, raise_last_error
from .sentinels import MISSING
from .type_converter import dispatch
from .type_records import FieldGetter, FieldSetter, TypeField, TypeInfo

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask
HEADER_SIZE = ctypes.sizeof(abi.TVMFFIObject)

#: Storage of each schema origin: (size, alignment, field_static_type_index).
NATIVE_LAYOUT: Dict[str, tuple] = {
    "int": (8, 8, TI.kTVMFFIInt), "float": (8, 8, TI.kTVMFFIFloat), "bool": (1, 1, TI.kTVMFFIBool),
    "ctypes.c_void_p": (8, 8, TI.kTVMFFIOpaquePtr), "dtype": (4, 2, TI.kTVMFFIDataType),
    "Device": (8, 4, TI.kTVMFFIDevice),
    # A str or bytes may be inline (SmallStr/SmallBytes); Optional and Union may hold scalars.
    **{origin: (16, 8, TI.kTVMFFIAny) for origin in ("Any", "str", "bytes", "Optional", "Union")},
}
OBJECT_LAYOUT = (8, 8, TI.kTVMFFIObject)

def _field_converter(converter: Any) -> Any:
    """The callable a field's setter calls back: the value converted, or ``TypeError``."""
    def convert(value: Any) -> Any:
        try:
            return dispatch(converter, value)[0]
        except ConvertError as err:
            raise TypeError(err.message) from None

    return convert


def _subclass_offset(type_info: Optional[TypeInfo]) -> int:
    """Where a compiler starts the fields of a direct subclass of this type."""
    if type_info is None:
        return HEADER_SIZE
    if sys.platform == "win32":  # MSVC does not reuse a base's tail padding
        return type_info.total_size
    end = _subclass_offset(type_info.parent_type_info)
    for field in type_info.fields or ():
        end = max(end, field.offset + field.size)
    return end


def _flags(field: Any) -> int:
    flags = FLAGS.kTVMFFIFieldFlagBitMaskWritable | FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj
    if field.default is not MISSING or field.default_factory is not MISSING:
        flags |= FLAGS.kTVMFFIFieldFlagBitMaskHasDefault
    for condition, bit in ((field.default_factory is not MISSING, "DefaultFromFactory"),
                           (not field.init, "InitOff"), (not field.repr, "ReprOff"),
                           (not field.hash, "HashOff"), (not field.compare, "CompareOff"),
                           (field.kw_only, "KwOnly")):
        if condition:
            flags |= getattr(FLAGS, f"kTVMFFIFieldFlagBitMask{bit}")
    structural = getattr(field, "structural_eq", None)
    if structural == "ignore":
        flags |= FLAGS.kTVMFFIFieldFlagBitMaskSEqHashIgnore
    elif structural in ("def-pattern", "def"):  # "def" is the older spelling
        flags |= FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefPattern
    elif structural == "def-simple":
        flags |= FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefSimple
    return int(flags)


def _text(text: Optional[str], keep: list) -> abi.TVMFFIByteArray:
    if text is None:
        return abi.TVMFFIByteArray(None, 0)
    data = text.encode()
    keep.append(data)
    return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


def _check(status: int) -> None:
    if status != 0:

        raise_last_error()


def _register_one(type_index: int, field: Any, layout: tuple, offset: int, getter: int,
                  setter: Any, flags: int) -> None:

    keep: list = []
    info = abi.TVMFFIFieldInfo()
    info.name = _text(field.name, keep)
    info.doc = _text(field.doc, keep)
    info.metadata = _text(json.dumps({"type_schema": field._ty_schema.to_json()}), keep)
    info.flags = flags
    info.size, info.alignment, info.offset = layout[0], layout[1], offset
    info.getter = abi.TVMFFIFieldGetter(getter)
    info.setter = setter._handle
    info.field_static_type_index = layout[2]
    scope = CallScope()
    try:
        default = field.default if field.default is not MISSING else field.default_factory
        if default is not MISSING:
            set_arg(info.default_value_or_factory, default, scope)
        _check(LIB.TVMFFITypeRegisterField(type_index, ctypes.byref(info)))
    finally:
        scope.close()


def register_fields(type_info: TypeInfo, fields: List[Any],
                    structure_kind: Optional[int] = None) -> List[TypeField]:
    """Registers ``fields`` (``Field`` objects with name and schema) for a Python-defined type,
    then its ``__ffi_new__``/``__ffi_init__``/``__ffi_shallow_copy__``; returns their TypeFields."""
    make_getter = get_global_func("ffi.MakeFieldGetter")
    make_setter = get_global_func("ffi.MakeFieldSetter")
    offset = _subclass_offset(type_info.parent_type_info)
    type_fields = []
    for field in fields:
        layout = NATIVE_LAYOUT.get(field._ty_schema.origin, OBJECT_LAYOUT)
        size, alignment, static_index = layout
        offset = (offset + alignment - 1) & ~(alignment - 1)
        convert = _field_converter(field._ty_schema._converter)
        getter = make_getter(static_index)
        # the converter lives for the process: a type, once registered, is never unregistered
        setter = make_setter(static_index, shortcuts.converter_address(convert),
                             shortcuts.FIELD_CONVERT_CALLBACK)
        flags = _flags(field)
        _register_one(type_info.type_index, field, layout, offset, getter, setter, flags)
        type_fields.append(TypeField(
            name=field.name, doc=field.doc, size=size, alignment=alignment, offset=offset,
            field_static_type_index=static_index, frozen=field.frozen,
            metadata={"type_schema": field._ty_schema.to_json()},
            getter=FieldGetter(getter, offset),
            setter=FieldSetter(setter._handle, offset, int(
                FLAGS.kTVMFFIFieldFlagBitMaskWritable
                | FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj)),
            ty=field._ty_schema, c_init=field.init, c_kw_only=field.kw_only,
            c_has_default=field.default is not MISSING or field.default_factory is not MISSING,
            c_default=field.default, c_default_factory=field.default_factory,
            c_repr=field.repr, c_compare=field.compare, c_hash=bool(field.hash),
            c_structural_eq=field.structural_eq))
        offset += size
    total_size = max((offset + 7) & ~7, HEADER_SIZE)
    get_global_func("ffi._PyClassRegisterTypeAttrColumns")(type_info.type_index, total_size)
    if structure_kind:
        metadata = abi.TVMFFITypeMetadata(total_size=total_size,
                                          structural_eq_hash_kind=structure_kind)
        _check(LIB.TVMFFITypeRegisterMetadata(type_info.type_index, ctypes.byref(metadata)))
    return type_fields


def register_py_methods(type_index: int, py_methods: List[tuple],
                        type_attr_names: frozenset) -> None:
    """Registers ``(name, value, is_static, metadata_json)`` entries: type attributes for names
    in ``type_attr_names``, else methods (``TVMFFITypeRegisterMethod``)."""

    none = abi.TVMFFIAny()
    for name, value, is_static, metadata_json in py_methods:
        keep: list = []
        scope = CallScope()
        try:
            packed = abi.TVMFFIAny()
            set_arg(packed, value, scope)
            key = _text(name, keep)
            if name in type_attr_names:
                # The None entry makes sure the column exists before this type's entry.
                _check(LIB.TVMFFITypeRegisterAttr(TI.kTVMFFINone, ctypes.byref(key),
                                                  ctypes.byref(none)))
                _check(LIB.TVMFFITypeRegisterAttr(type_index, ctypes.byref(key),
                                                  ctypes.byref(packed)))
            else:
                info = abi.TVMFFIMethodInfo()
                info.name = key
                info.doc = abi.TVMFFIByteArray(None, 0)
                info.flags = int(FLAGS.kTVMFFIFieldFlagBitMaskIsStaticMethod) if is_static else 0
                info.method = packed
                info.metadata = _text(metadata_json, keep)
                _check(LIB.TVMFFITypeRegisterMethod(type_index, ctypes.byref(info)))
        finally:
            scope.close()

upcalls.install("pyclass_fields", register_fields=register_fields,
                register_py_methods=register_py_methods)
