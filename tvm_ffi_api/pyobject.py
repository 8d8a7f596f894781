"""Python objects passed through TVM FFI as opaque objects.

A value with no TVM FFI encoding (an arbitrary class instance) crosses as an
OpaquePyObject: an object whose cell holds the ``PyObject*`` and which owns
one Python reference to it, dropped by its deleter. A kernel can store and
return it but not look inside; when it comes back, Python gets the very same
object. The ``PyObject*`` and its reference come from ``tvm_ffi_common.pycapi``
(on PyPy, ``id()`` is no address and only an extension module makes one).
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from . import upcalls
from .object import CObject, register_class

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)


#: The C deleter of the reference an OpaquePyObject owns (safe from any thread).
release_pyobject = pycapi.RELEASE_REFERENCE


class OpaquePyObject(CObject):
    """An opaque object holding a Python object (see :meth:`pyobject`)."""

    __slots__ = ()

    def pyobject(self) -> Any:
        """The Python object inside."""
        return unwrap_pyobject(self._handle)


register_class(TI.kTVMFFIOpaquePyObject, OpaquePyObject)


def wrap_pyobject(value: Any) -> OpaquePyObject:
    """A new OpaquePyObject owning a reference to ``value``."""
    address = pycapi.new_reference(value)
    handle = ctypes.c_void_p()
    if LIB.TVMFFIObjectCreateOpaque(address, TI.kTVMFFIOpaquePyObject, release_pyobject,
                                    ctypes.byref(handle)):
        pycapi.py_decref(address)

        upcalls.raise_last_error()
    return OpaquePyObject._adopt(handle.value)


def unwrap_pyobject(handle: int) -> Any:
    """The Python object held by the OpaquePyObject at ``handle`` (borrowed from it)."""
    return pycapi.object_at(ctypes.c_void_p.from_address(handle + _CELL_OFFSET).value)
