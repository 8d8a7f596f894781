"""Python descriptions of a registered type: ``TypeInfo``, ``TypeField``, ``TypeMethod``.

A :class:`TypeInfo` is what Python knows of one type: its index, key and
ancestors, its Python class, and its own fields and methods as read from the
runtime's ``TVMFFITypeInfo`` record (:mod:`.type_registry` keeps one per
type). A :class:`TypeField` becomes a property of the class
(:meth:`TypeField.as_property`, an :class:`FFIProperty` reading through the
field's getter and writing through its setter), a :class:`TypeMethod` a method
(:meth:`TypeMethod.as_callable`).

A type defined from Python (``@py_class``) starts with ``fields=None``; its
fields are registered once (:meth:`TypeInfo._register_fields`, which
:mod:`.pyclass_fields` implements).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import sys
import warnings
from functools import cached_property
from typing import Any, Dict, List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import shortcuts, upcalls
from .cany import to_py_class_value as _to_py_class_value
from .convert import to_python
from .function import raise_last_error
from .object import type_info as _runtime_record
from .type_schema import TypeSchema

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def _missing() -> Any:
    return upcalls.missing()


#: Whether ``functools.partial`` is compiled (CPython's), and so the quickest callable for a
#: property: PyPy's is Python code that builds a dict on every call, where a closure is
#: inlined by its JIT.
_PARTIAL_IS_COMPILED = sys.implementation.name == "cpython"


class FieldGetter:
    """Reads one field of an object through its ``TVMFFIFieldGetter`` (at handle + offset)."""

    def __init__(self, getter: int, offset: int):
        self.getter = getter
        self.offset = offset
        self._call = shortcuts.field_getter(getter, offset)

    def __call__(self, obj: Any) -> Any:
        return self._call(obj)


class FieldSetter:
    """Writes one field of an object through its setter (a C function or a Function)."""

    def __init__(self, setter: int, offset: int, flags: int):
        self.setter = setter
        self.offset = offset
        self.flags = flags
        if _PARTIAL_IS_COMPILED:
            self._call = functools.partial(shortcuts.field_set, setter, flags, offset)
        else:
            field_set = shortcuts.field_set
            self._call = lambda obj, value: field_set(setter, flags, offset, obj, value)

    def __call__(self, obj: Any, value: Any) -> None:
        self._call(obj, value)


def _named(accessor: Any, cls: type, name: str, doc: Optional[str]) -> Any:
    """``accessor`` (a FieldGetter or FieldSetter) as the C-speed callable a property holds,
    named as a method of ``cls``."""
    call = accessor._call if isinstance(accessor, (FieldGetter, FieldSetter)) else accessor
    for target in {id(x): x for x in (accessor, call)}.values():
        target.__name__ = name
        target.__module__ = cls.__module__
        target.__qualname__ = f"{cls.__qualname__}.{name}"
        target.__doc__ = doc  # (a property takes its getter's doc: not partial's own)
    return call


class FFIProperty(property):
    """The property of a reflected field; without a setter when the field is frozen.

    :meth:`set` writes the field even then (the escape hatch generated code uses).
    """

    def __init__(self, fget, fset, frozen, fdel=None, doc=None):
        super().__init__(fget, None if frozen else fset, fdel, doc)
        self._fset = fset

    def set(self, obj: Any, value: Any) -> None:
        """Writes the field, frozen or not."""
        self._fset(obj, value)


@dataclasses.dataclass(eq=False)
class TypeField:
    """One reflected field of a type: layout, accessors, flags and dataclass options."""

    name: str
    doc: Optional[str]
    size: int
    alignment: int
    offset: int
    field_static_type_index: int
    frozen: bool
    metadata: Dict[str, Any]
    getter: FieldGetter
    setter: FieldSetter
    ty: Any = None
    c_init: bool = True
    c_kw_only: bool = False
    c_has_default: bool = False
    c_default: Any = dataclasses.field(default_factory=_missing)
    c_default_factory: Any = dataclasses.field(default_factory=_missing)
    c_repr: bool = True
    c_compare: bool = True
    c_hash: bool = True
    c_structural_eq: Optional[str] = None
    dataclass_field: Any = None

    def __post_init__(self) -> None:
        assert self.setter is not None
        assert self.getter is not None

    def _is_payload_enum_field(self) -> bool:
        """Whether the field holds a registered IntEnum/StrEnum (given by payload too)."""
        if self.ty is None or self.ty.origin_type_index < _OBJECT_BEGIN:
            return False

        cls = upcalls.class_of_type_index(self.ty.origin_type_index)
        return getattr(cls, "__tvm_ffi_payload_enum__", None) is not None

    def normalize_value(self, value: Any) -> Any:
        """A payload enum field's value as its variant; other values unchanged."""
        if not self._is_payload_enum_field():
            return value

        return _to_py_class_value(self.ty.convert(value))

    def _normalizing_setter(self) -> Any:
        field, fset = self, self.setter

        def normalizing_setter(obj: Any, value: Any) -> None:
            fset(obj, field.normalize_value(value))

        return normalizing_setter

    def as_property(self, cls: type) -> FFIProperty:
        """The :class:`FFIProperty` of this field on ``cls``."""
        fset = self._normalizing_setter() if self._is_payload_enum_field() else self.setter
        prop = FFIProperty(fget=_named(self.getter, cls, self.name, self.doc),
                           fset=_named(fset, cls, self.name, self.doc), frozen=self.frozen)
        if self.doc:
            prop.__doc__ = self.doc
        return prop


@dataclasses.dataclass(eq=False)
class TypeMethod:
    """One reflected method of a type (a Function; static or taking the object first)."""

    name: str
    doc: Optional[str]
    func: Any
    metadata: Dict[str, Any]
    is_static: bool

    def __post_init__(self) -> None:
        assert callable(self.func)

    def as_callable(self, cls: type) -> Any:
        """The Python method (or staticmethod) calling this Function on ``cls``."""
        function = self.func
        if self.is_static:
            def method(*args: Any) -> Any:
                return function(*args)
        else:
            def method(self: Any, *args: Any) -> Any:
                return function(self, *args)
        method.__module__ = cls.__module__
        method.__name__ = self.name
        method.__qualname__ = f"{cls.__qualname__}.{self.name}"
        if self.doc:
            method.__doc__ = self.doc
        return staticmethod(method) if self.is_static else method


def _text(array: abi.TVMFFIByteArray) -> str:
    return ctypes.string_at(array.data, array.size).decode() if array.size else ""


def _metadata(array: abi.TVMFFIByteArray) -> Dict[str, Any]:
    return json.loads(_text(array)) if array.size else {}


def _owned_value(view: abi.TVMFFIAny) -> Any:

    owned = abi.TVMFFIAny()
    if LIB.TVMFFIAnyViewToOwnedAny(ctypes.byref(view), ctypes.byref(owned)) != 0:

        raise_last_error()
    return to_python(owned)


def read_fields(record: abi.TVMFFITypeInfo) -> List[TypeField]:
    """The :class:`TypeField` of each field a runtime record lists."""

    fields = []
    for i in range(record.num_fields):
        f = record.fields[i]
        flags = f.flags
        metadata = _metadata(f.metadata)
        schema_json = metadata.get("type_schema")
        default, factory = _missing(), _missing()
        if flags & FLAGS.kTVMFFIFieldFlagBitMaskHasDefault:
            value = _owned_value(f.default_value_or_factory)
            if flags & FLAGS.kTVMFFIFieldFlagBitMaskDefaultFromFactory:
                factory = value
            else:
                default = value
        structural = ("ignore" if flags & FLAGS.kTVMFFIFieldFlagBitMaskSEqHashIgnore else
                      "def-pattern" if flags & FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefPattern else
                      "def-simple" if flags & FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefSimple else
                      None)
        fields.append(TypeField(
            name=_text(f.name), doc=_text(f.doc) or None, size=f.size, alignment=f.alignment,
            offset=f.offset, field_static_type_index=f.field_static_type_index,
            frozen=not flags & FLAGS.kTVMFFIFieldFlagBitMaskWritable, metadata=metadata,
            getter=FieldGetter(ctypes.cast(f.getter, ctypes.c_void_p).value or 0, f.offset),
            setter=FieldSetter(f.setter or 0, f.offset, flags),
            ty=TypeSchema.from_json_str(schema_json) if schema_json is not None else None,
            c_init=not flags & FLAGS.kTVMFFIFieldFlagBitMaskInitOff,
            c_kw_only=bool(flags & FLAGS.kTVMFFIFieldFlagBitMaskKwOnly),
            c_has_default=bool(flags & FLAGS.kTVMFFIFieldFlagBitMaskHasDefault),
            c_default=default, c_default_factory=factory,
            c_repr=not flags & FLAGS.kTVMFFIFieldFlagBitMaskReprOff,
            c_compare=not flags & FLAGS.kTVMFFIFieldFlagBitMaskCompareOff,
            c_hash=not flags & FLAGS.kTVMFFIFieldFlagBitMaskHashOff,
            c_structural_eq=structural))
    return fields


def read_methods(record: abi.TVMFFITypeInfo) -> List[TypeMethod]:
    """The :class:`TypeMethod` of each method a runtime record lists."""
    methods = []
    for i in range(record.num_methods):
        m = record.methods[i]
        methods.append(TypeMethod(
            name=_text(m.name), doc=_text(m.doc) or None, func=_owned_value(m.method),
            is_static=bool(m.flags & FLAGS.kTVMFFIFieldFlagBitMaskIsStaticMethod),
            metadata=_metadata(m.metadata)))
    return methods


@dataclasses.dataclass(eq=False)
class TypeInfo:
    """What Python knows of one registered type (see the module docstring)."""

    type_cls: Optional[type]
    type_index: int
    type_key: str
    type_ancestors: List[int]
    fields: Optional[List[TypeField]]
    methods: List[TypeMethod]
    parent_type_info: Optional["TypeInfo"]

    def __post_init__(self) -> None:
        if self.fields is not None:
            names = [f.name for f in self.fields]
            duplicates = {n for n in names if names.count(n) > 1}
            assert not duplicates, (
                f"duplicate field name {sorted(duplicates)[0]!r} in TypeInfo for "
                f"{self.type_key!r}; TypeInfo.fields must only contain the type's own fields")
        if not self.type_ancestors:
            return

        self.parent_type_info = upcalls.lookup_or_register_type_info_from_type_key(
            upcalls.type_index_to_key(self.type_ancestors[-1]))
        if self.fields and self.parent_type_info is not None:
            inherited = set()
            ancestor = self.parent_type_info
            while ancestor is not None:
                inherited.update(f.name for f in ancestor.fields or ())
                ancestor = ancestor.parent_type_info
            for f in self.fields:
                if f.name in inherited:
                    warnings.warn(f"Field {f.name!r} in {self.type_key!r} duplicates an "
                                  "ancestor field. Child types should not re-register "
                                  "inherited fields.", stacklevel=2)

    @cached_property
    def total_size(self) -> int:
        """The object's size in bytes: the registered metadata's, else computed from fields."""
        record = _runtime_record(self.type_index)
        if record.metadata:
            return record.metadata.contents.total_size
        if self.parent_type_info is None:
            raise ValueError(f"Cannot find parent type of {type(self)}")
        end = self.parent_type_info.total_size
        for f in self.fields or ():
            end = max(end, f.offset + f.size)
        return (end + 7) & ~7

    @property
    def _has_type_metadata(self) -> bool:
        """Whether the runtime record carries ``TVMFFITypeMetadata`` (native size)."""
        return bool(_runtime_record(self.type_index).metadata)

    def _register_fields(self, fields: List[Any], structure_kind: Optional[int] = None) -> None:
        """Registers the fields of a Python-defined type (once), then re-reads its methods."""
        assert self.fields is None, f"_register_fields already called for {self.type_key!r}"

        self.fields = upcalls.register_fields(self, fields, structure_kind)
        self._read_back_methods()

    def _register_py_methods(self, py_methods: Optional[List[tuple]] = None,
                             type_attr_names: frozenset = frozenset()) -> None:
        """Registers Python methods and type attributes, then re-reads the method table."""
        if py_methods:
            upcalls.register_py_methods(self.type_index, py_methods, type_attr_names)
        self._read_back_methods()

    def _read_back_methods(self) -> None:
        self.methods = read_methods(_runtime_record(self.type_index))
