"""``String`` and ``Bytes``: str and bytes that remember the object they came from.

Short values (at most 7 bytes) travel inline and come back as plain ``str``
and ``bytes``. Longer ones are objects; when a kernel returns one, Python gets
a :class:`String` or :class:`Bytes` that behaves exactly like ``str``/``bytes``
and keeps the object, so passing it back to a kernel hands over the same
object instead of copying the text again.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from tvm_ffi_common import abi

from .object import CObject, Object, register_class

TI = abi.TVMFFITypeIndex


def object_content(handle: int) -> bytes:
    """The bytes of a String or Bytes object."""
    cell = abi.TVMFFIByteArray.from_address(handle + ctypes.sizeof(abi.TVMFFIObject))
    return ctypes.string_at(cell.data, cell.size) if cell.size else b""


class PyNativeObject:
    """Mixin of the Python values that keep the object they came from (``String``,
    ``Bytes``, ``Shape``): a ``str``/``bytes``/``tuple`` plus ``_tvm_ffi_cached_object``."""

    __slots__ = ()

    def __init_cached_object_by_constructor__(self, fconstructor: Any, *args: Any) -> None:
        """Keeps the object ``fconstructor(*args)`` returns as this value's object."""
        made = fconstructor(*args)
        if not isinstance(made, CObject):
            made = getattr(made, "_tvm_ffi_cached_object", None)
        if not isinstance(made, CObject):
            raise TypeError("the constructor returned no object")
        self._tvm_ffi_cached_object = made


class String(str, PyNativeObject):
    """A ``str`` backed by a TVM FFI String object (when one exists)."""

    _tvm_ffi_cached_object: Optional[Object]

    def __new__(cls, value: str) -> "String":
        self = super().__new__(cls, value)
        self._tvm_ffi_cached_object = None
        return self

    @classmethod
    def _tvm_ffi_from_handle(cls, handle: int) -> "String":
        self = super().__new__(cls, object_content(handle).decode("utf-8", "surrogateescape"))
        self._tvm_ffi_cached_object = Object._adopt(handle)
        return self

    def __reduce_ex__(self, protocol):
        return (str, (str(self),))


class Bytes(bytes, PyNativeObject):
    """A ``bytes`` backed by a TVM FFI Bytes object (when one exists)."""

    _tvm_ffi_cached_object: Optional[Object]

    def __new__(cls, value: bytes) -> "Bytes":
        self = super().__new__(cls, value)
        self._tvm_ffi_cached_object = None
        return self

    @classmethod
    def _tvm_ffi_from_handle(cls, handle: int) -> "Bytes":
        self = super().__new__(cls, object_content(handle))
        self._tvm_ffi_cached_object = Object._adopt(handle)
        return self

    def __reduce_ex__(self, protocol):
        return (bytes, (bytes(self),))


register_class(TI.kTVMFFIStr, String)
register_class(TI.kTVMFFIBytes, Bytes)
