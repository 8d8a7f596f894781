"""Reading and writing a reflected field of an object (the properties' bodies).

A field lives at ``handle + offset``. Its getter is a C function
``int getter(void* field, TVMFFIAny* result)`` returning an owned value; its
setter is either a C function ``int setter(void* field, const TVMFFIAny* value)``
or, when the field's flags have ``kTVMFFIFieldFlagBitSetterIsFunctionObj``, a
Function called as ``setter(field address, value)`` (how ``@py_class`` fields
convert what they are given).
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import abi

from .convert import CallScope, set_arg, to_python
from .function import Function, raise_last_error

FLAGS = abi.TVMFFIFieldFlagBitMask
_SETTER_IS_FUNCTION = int(FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj)


def _address(obj: Any, offset: int) -> int:
    handle = obj._handle
    if not handle:
        raise ValueError(f"cannot access a field of an empty {type(obj).__name__} (no object)")
    return handle + offset


def read_field(getter: Any, obj: Any) -> Any:
    """The value of the field ``getter`` (a FieldGetter) reads, of ``obj``."""
    if getter._fn is None:
        raise TypeError("the field has no getter")
    result = abi.TVMFFIAny()
    if getter._fn(_address(obj, getter.offset), ctypes.byref(result)) != 0:
        raise_last_error()
    return to_python(result)


def _setter_function(setter: Any) -> Function:
    function = setter.__dict__.get("_function")
    if function is None:
        from tvm_ffi_common.capi import LIB

        LIB.TVMFFIObjectIncRef(setter.setter)  # the wrapper owns one reference
        function = setter.__dict__["_function"] = Function._adopt(setter.setter)
    return function


def write_field(setter: Any, obj: Any, value: Any) -> None:
    """Writes ``value`` into the field ``setter`` (a FieldSetter) writes, of ``obj``."""
    address = _address(obj, setter.offset)
    if not setter.setter:
        raise AttributeError(f"field {getattr(setter, '__name__', '?')!r} has no setter")
    if setter.flags & _SETTER_IS_FUNCTION:
        _setter_function(setter)(ctypes.c_void_p(address), value)
        return
    scope = CallScope()
    try:
        view = abi.TVMFFIAny()
        set_arg(view, value, scope)
        status = abi.TVMFFIFieldSetter(setter.setter)(address, ctypes.byref(view))
    finally:
        scope.close()
    if status != 0:
        raise_last_error()
