"""Reflection: an object type's registered fields and methods as Python attributes.

A kernel that registers a type with upstream's ``reflection::ObjectDef``
publishes, in the type's ``TVMFFITypeInfo``, one ``TVMFFIFieldInfo`` per field
(offset from the header, getter, setter, flags) and one ``TVMFFIMethodInfo`` per
method (a Function). Here each field becomes a property that calls the getter
on ``handle + offset`` (and the setter, when the field is writable), each
method a Python method, and a ``__ffi_init__`` method the class constructor.
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import Any, List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB
from .convert import CallScope, set_arg, to_python
from .object import type_info

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask


def _text(array: abi.TVMFFIByteArray) -> str:
    return ctypes.string_at(array.data, array.size).decode() if array.size else ""


@dataclass
class TypeField:
    """One reflected field of a type."""

    name: str
    doc: str
    metadata: dict
    flags: int
    offset: int
    getter: Any
    setter: int
    static_type_index: int

    @property
    def writable(self) -> bool:
        """Whether the field may be assigned from Python."""
        return bool(self.flags & FLAGS.kTVMFFIFieldFlagBitMaskWritable)

    def get(self, handle: int) -> Any:
        """Reads the field of the object at ``handle``."""
        result = abi.TVMFFIAny()
        if self.getter(handle + self.offset, ctypes.byref(result)):
            from .function import raise_last_error

            raise_last_error()
        return to_python(result)

    def set(self, handle: int, value: Any) -> None:
        """Writes the field of the object at ``handle``."""
        scope = CallScope()
        try:
            view = abi.TVMFFIAny()
            set_arg(view, value, scope)
            if self.flags & FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj:
                from .function import Function

                setter_fn = Function._adopt(self.setter)
                LIB.TVMFFIObjectIncRef(self.setter)  # _adopt took a reference we do not own
                status = 0
                setter_fn(ctypes.c_void_p(handle + self.offset), value)
            else:
                status = abi.TVMFFIFieldSetter(self.setter)(handle + self.offset,
                                                            ctypes.byref(view))
        finally:
            scope.close()
        if status:
            from .function import raise_last_error

            raise_last_error()

    def as_property(self) -> property:
        """A property reading (and, if writable, writing) this field."""
        field = self

        def fget(obj):
            return field.get(obj._handle)

        def fset(obj, value):
            if not field.writable:
                raise AttributeError(f"field '{field.name}' is read-only")
            field.set(obj._handle, value)

        return property(fget, fset, doc=self.doc or None)


@dataclass
class TypeMethod:
    """One reflected method of a type."""

    name: str
    doc: str
    is_static: bool
    func: Any

    def as_callable(self) -> Any:
        """A Python method (or staticmethod) calling the registered Function."""
        func = self.func
        if self.is_static:
            return staticmethod(lambda *args: func(*args))

        def method(obj, *args):
            return func(obj, *args)

        method.__name__ = self.name
        method.__doc__ = self.doc or None
        return method


def type_fields(type_index: int) -> List[TypeField]:
    """The fields a type itself registers (not its ancestors')."""
    info = type_info(type_index)
    fields = []
    for i in range(info.num_fields):
        f = info.fields[i]
        metadata = _text(f.metadata)
        fields.append(TypeField(_text(f.name), _text(f.doc),
                                json.loads(metadata) if metadata else {}, f.flags, f.offset,
                                f.getter, f.setter or 0, f.field_static_type_index))
    return fields


def type_methods(type_index: int) -> List[TypeMethod]:
    """The methods a type itself registers."""
    from .convert import borrowed_to_python

    info = type_info(type_index)
    methods = []
    for i in range(info.num_methods):
        m = info.methods[i]
        methods.append(TypeMethod(_text(m.name), _text(m.doc),
                                  bool(m.flags & FLAGS.kTVMFFIFieldFlagBitMaskIsStaticMethod),
                                  borrowed_to_python(m.method)))
    return methods


def lookup_type_attr(type_index: int, name: str) -> Optional[Any]:
    """The value of type attribute ``name`` for ``type_index``, or None."""
    from .convert import borrowed_to_python

    data = name.encode()
    array = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
    column = LIB.TVMFFIGetTypeAttrColumn(ctypes.byref(array))
    if not column:
        return None
    column = column.contents
    offset = type_index - column.begin_index
    if not 0 <= offset < column.size:
        return None
    value = column.data[offset]
    return None if value.type_index == TI.kTVMFFINone else borrowed_to_python(value)


def install_reflection(cls: type, type_index: int) -> None:
    """Adds ``type_index``'s fields, methods and ``__ffi_init__`` constructor to ``cls``."""
    for field in type_fields(type_index):
        if field.name not in cls.__dict__:
            setattr(cls, field.name, field.as_property())
    ffi_init = None
    for method in type_methods(type_index):
        if method.name == "__ffi_init__":
            ffi_init = method.func
        elif not hasattr(cls, method.name):
            setattr(cls, method.name, method.as_callable())
    if ffi_init is None:
        ffi_init = lookup_type_attr(type_index, "__ffi_init__")
    if ffi_init is not None and "__init__" not in cls.__dict__:
        def __init__(self, *args):
            self.__init_handle_by_constructor__(ffi_init, *args)

        cls.__init__ = __init__
    elif "__init__" not in cls.__dict__:
        name = cls.__name__

        def __init__(self, *args, **kwargs):
            raise TypeError(f"`{name}` cannot be constructed directly. "
                            "Define a custom __init__ or use a factory method.")

        cls.__init__ = __init__
