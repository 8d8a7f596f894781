"""Python wrappers of TVM FFI objects: the fast core's ``Object``.

The same interface as ``tvm_ffi_ref.object``, which the shared API modules
use: :class:`Object` owns exactly one strong reference to the object at
``_handle`` and drops it when collected; which Python class wraps an object
is decided by its type index (classes registered with :func:`register_class`,
or a class made on first sight from the runtime's type record).

Here :class:`Object` is an extension type (``tvm_ffi_fast._frontend``): the
handle lives in a C slot and is released in C. The methods that need no speed
are added below in Python; the type-index -> class table is kept both here
(:data:`TYPE_CLASSES`) and in C, where results are wrapped.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, Type

from . import _frontend, abi
from ._frontend import Object
from ._lib import LIB

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return _frontend.type_index_of(handle)


def type_info(type_index: int) -> abi.TVMFFITypeInfo:
    """The runtime's record of a type."""
    return LIB.TVMFFIGetTypeInfo(type_index).contents


def type_key(type_index: int) -> str:
    """The key of a registered type index."""
    key = type_info(type_index).type_key
    return ctypes.string_at(key.data, key.size).decode()


def type_key_to_index(key: str) -> Optional[int]:
    """The index registered for ``key``, or None."""
    data = key.encode()
    index = LIB.TVMFFITypeGetOrAllocIndex(
        ctypes.byref(abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
                                         len(data))),
        -1, 0, 0, 0, -2)
    return None if index == -2 else index


class ObjectRValueRef:
    """Marks an argument whose reference the callee may take over (see :meth:`Object._move`)."""

    __slots__ = ("obj",)

    def __init__(self, obj: "Object"):
        self.obj = obj


class _ObjectMethods:
    """The methods of :class:`Object` written in Python, installed onto the C type below."""

    def __ctypes_handle__(self) -> ctypes.c_void_p:
        """The object's address as a ``ctypes.c_void_p``."""
        return ctypes.c_void_p(self._handle)

    @property
    def type_key(self) -> str:
        """The registered type key of the object, e.g. ``"ffi.Array"``."""
        return type_key(self.type_index)

    def __repr__(self) -> str:
        if not self._handle:
            return f"{type(self).__name__}(chandle=None)"
        try:
            from .function import get_global_func

            return str(get_global_func("ffi.ReprPrint")(self))
        except Exception:  # noqa: BLE001 - repr must never raise
            return f"{type(self).__name__}({self._handle})"

    def _move(self) -> ObjectRValueRef:
        """Passes this object so the callee may take over its reference."""
        return ObjectRValueRef(self)


for _name in ("__ctypes_handle__", "type_key", "__repr__", "_move"):
    setattr(Object, _name, _ObjectMethods.__dict__[_name])
del _name


class ObjectConvertible:
    """Base of Python classes that convert themselves to an object when passed."""

    def asobject(self) -> Object:
        """The object this value stands for."""
        raise NotImplementedError()


# --------------------------------------------------------------- class registry

#: The Python class of each type index.
TYPE_CLASSES: Dict[int, type] = {}

#: Classes whose ``_adopt`` is the C one (``cls.__new__(cls)`` plus the handle).
_C_ADOPTERS = (Object, _frontend.Function)


def _defines(cls: type, name: str) -> Optional[type]:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def _wrap_mode(type_index: int, cls: type) -> int:
    """How the core makes ``cls`` from an owned handle (see decode.c's FxWrapMode)."""
    if getattr(cls, "_tvm_ffi_from_handle", None) is not None:
        # String, Bytes and Shape (string.py, tensor.py): the core does exactly what their
        # _tvm_ffi_from_handle does (tests/test_fast_frontend.py holds it to that).
        if type_index == TI.kTVMFFIStr and issubclass(cls, str):
            return _frontend.MODE_STR
        if type_index == TI.kTVMFFIBytes and issubclass(cls, bytes):
            return _frontend.MODE_BYTES
        if type_index == TI.kTVMFFIShape and issubclass(cls, tuple):
            return _frontend.MODE_SHAPE
        return _frontend.MODE_FROM_HANDLE
    if isinstance(cls, type) and issubclass(cls, Object) and _defines(cls, "_adopt") in _C_ADOPTERS:
        return _frontend.MODE_PLAIN
    return _frontend.MODE_ADOPT


def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the wrapper class of ``type_index``."""
    TYPE_CLASSES[type_index] = cls
    cls._tvm_ffi_type_index = type_index  # type: ignore[attr-defined]
    _frontend.register_class(type_index, cls, _wrap_mode(type_index, cls))
    return cls


def class_for_type_index(type_index: int) -> type:
    """The wrapper class of a type index, made from its record if never registered."""
    cls = TYPE_CLASSES.get(type_index)
    if cls is None:
        cls = _fallback_class(type_index)
    return cls


def _fallback_class(type_index: int) -> type:
    # Derive from the parent's class (made the same way when nobody registered
    # one), so that fields the ancestors reflect are inherited.
    info = type_info(type_index)
    base: Type[Object] = Object
    if info.type_depth > 0:
        base = class_for_type_index(info.type_ancestors[info.type_depth - 1].contents.type_index)
    from .reflection import install_reflection

    key = type_key(type_index)
    cls = type(key.rsplit(".", 1)[-1], (base,), {"__slots__": (), "__module__": __name__,
                                                  "__qualname__": key})
    install_reflection(cls, type_index)
    return register_class(type_index, cls)


def wrap_owned(handle: int, type_index: Optional[int] = None) -> Any:
    """The Python value for an owned reference to an object (the wrapper takes it over)."""
    return _frontend.wrap_owned(handle, type_index)


register_class(TI.kTVMFFIObject, Object)
