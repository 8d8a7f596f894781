"""Reflection: an object type's registered fields and methods as Python attributes.

A kernel that registers a type with upstream's ``reflection::ObjectDef``
publishes, in the type's ``TVMFFITypeInfo``, one ``TVMFFIFieldInfo`` per field
(offset from the header, getter, setter, flags) and one ``TVMFFIMethodInfo`` per
method (a Function). Python reads them into a
:class:`~.type_records.TypeInfo` (:mod:`.type_registry` keeps one per type):
each field becomes a property calling the getter on ``handle + offset`` (and
the setter, when the field is writable), each method a Python method, and the
type's constructor (``__ffi_init__``) the class's ``__init__``
(:mod:`.class_attrs`, :mod:`._dunder`). This module is the short way in for a class a core
module registers.
"""

from __future__ import annotations

from typing import List

from ._dunder import _install_init
from .class_attrs import _add_class_attrs
from .object import type_info
from .type_records import TypeField, TypeMethod, read_fields, read_methods
from .type_registry import _lookup_type_attr as lookup_type_attr, _register_object_by_index

__all__ = ["TypeField", "TypeMethod", "install_reflection", "lookup_type_attr", "type_fields",
           "type_methods"]


def type_fields(type_index: int) -> List[TypeField]:
    """The fields a type itself registers (not its ancestors')."""
    return read_fields(type_info(type_index))


def type_methods(type_index: int) -> List[TypeMethod]:
    """The methods a type itself registers."""
    return read_methods(type_info(type_index))


def install_reflection(cls: type, type_index: int, init: bool = True) -> None:
    """Makes ``cls`` the class of ``type_index`` with the type's fields, methods and
    ``__init__`` (the type's constructor, when ``init`` and the body defines none)."""
    info = _register_object_by_index(type_index, cls)
    _add_class_attrs(cls, info)
    cls.__tvm_ffi_type_info__ = info
    if init:
        _install_init(cls, info)
