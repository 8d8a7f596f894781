"""Python objects passed through TVM FFI as opaque objects.

A value with no TVM FFI encoding (an arbitrary class instance) crosses as an
OpaquePyObject: an object whose cell holds the ``PyObject*`` and which owns
one Python reference to it, dropped by its deleter. A kernel can store and
return it but not look inside; when it comes back, Python gets the very same
object.
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB
from .object import Object, register_class

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)


def incref_pyobject(value: Any) -> None:
    """One more reference to the Python object ``value``, for C to own."""
    pycapi.py_incref(id(value))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def release_pyobject(address):
    """Drops a reference C owned to the Python object at ``address`` (a C deleter).

    ctypes holds the GIL while a callback runs, so this is safe from any thread.
    """
    pycapi.py_decref(address)


class OpaquePyObject(Object):
    """An opaque object holding a Python object (see :meth:`pyobject`)."""

    __slots__ = ()

    def pyobject(self) -> Any:
        """The Python object inside."""
        return unwrap_pyobject(self._handle)


register_class(TI.kTVMFFIOpaquePyObject, OpaquePyObject)


def wrap_pyobject(value: Any) -> OpaquePyObject:
    """A new OpaquePyObject owning a reference to ``value``."""
    incref_pyobject(value)
    handle = ctypes.c_void_p()
    if LIB.TVMFFIObjectCreateOpaque(id(value), TI.kTVMFFIOpaquePyObject, release_pyobject,
                                    ctypes.byref(handle)):
        pycapi.py_decref(id(value))
        from .function import raise_last_error

        raise_last_error()
    return OpaquePyObject._adopt(handle.value)


def unwrap_pyobject(handle: int) -> Any:
    """The Python object held by the OpaquePyObject at ``handle`` (borrowed from it)."""
    pointer = ctypes.c_void_p.from_address(handle + _CELL_OFFSET).value
    return ctypes.cast(pointer, ctypes.py_object).value
