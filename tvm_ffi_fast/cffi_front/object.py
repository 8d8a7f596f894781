"""Python wrappers of TVM FFI objects: the cffi core's ``Object``.

The interface of every core's ``object`` module (``tvm_ffi_ref/object.py``
states its meaning). Here everything is plain Python that PyPy's JIT
compiles: a wrapper is an instance with a ``_handle`` slot (the object's
address, an int), made without running ``__init__``; the runtime is reached
through ``tvm_ffi_fast._core``, the out-of-line cffi module, whose calls the
JIT turns into direct C calls.

A wrapper drops its reference when collected, through ``releases``: on PyPy
the finalizer only queues the handle, and the core drops queued references
before its next call into the runtime (see ``releases.py`` for why).

How a result becomes a Python value depends on its class, decided once per
class by :func:`register_class` (the *wrap mode*): a plain wrapper, a
``str``/``bytes``/``tuple`` that remembers its object (``String``,
``Bytes``, ``Shape``), or the class's own ``_tvm_ffi_from_handle`` /
``_adopt``.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Tuple

from tvm_ffi_common import abi

from . import object_methods, releases
from ._core import ffi, lib
from .object_protocols import ObjectConvertible, ObjectRValueRef  # noqa: F401 - the interface
from .type_info import TYPE_CLASSES, class_for_type_index, type_info, type_key, type_key_to_index  # noqa: F401,E501

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)
_decref = lib.TVMFFIObjectDecRef
_cast = ffi.cast


def decref(handle: int) -> None:
    """Drops one strong reference to the object at ``handle``."""
    _decref(_cast("void*", handle))


def incref(handle: int) -> None:
    """Adds one strong reference to the object at ``handle``."""
    lib.TVMFFIObjectIncRef(_cast("void*", handle))


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return _cast("TVMFFIObject*", handle).type_index


class Object(object_methods.ObjectMethods):
    """Base class of every TVM FFI object seen from Python (identity semantics unless a
    subclass defines value semantics, as containers do)."""

    __slots__ = ("_handle", "_exchange_api", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any) -> "Object":
        self = super().__new__(cls)
        self._handle = None  # every wrapper starts empty, however it is made
        self._exchange_api = 0
        return self

    def __init__(self) -> None:
        pass  # subclasses construct through __init_handle_by_constructor__

    @classmethod
    def _adopt(cls, handle: int) -> "Object":
        """A wrapper taking over one owned reference to ``handle``."""
        obj = cls.__new__(cls)
        obj._handle = handle
        return obj

    def __init_handle_by_constructor__(self, fconstructor: Any, *args: Any) -> None:
        """Initialises this wrapper with the object ``fconstructor(*args)`` returns (an object
        it held before is released afterwards, so the new one never reuses its address)."""
        old, self._handle = self._handle, None
        try:
            result = fconstructor(*args)
            if not isinstance(result, Object):
                raise TypeError(f"constructor returned {type(result).__name__}, not an object")
            self.__move_handle_from__(result)
        finally:
            if old:
                decref(old)

    def __move_handle_from__(self, other: "Object") -> None:
        """Takes ``other``'s reference, leaving ``other`` empty."""
        self._handle, other._handle = other._handle, None

    def __del__(self) -> None:
        handle = self._handle
        if handle and not sys.is_finalizing():
            self._handle = None
            releases.release(handle)

    @property
    def _dlpack_exchange_api(self) -> int:
        """The DLPack exchange table a container result remembers (an address, 0: none)."""
        try:  # the slot itself: a subclass's __getattr__ (Module's) must not see the miss
            return _EXCHANGE_API_SLOT.__get__(self, type(self))
        except AttributeError:
            return 0

    @_dlpack_exchange_api.setter
    def _dlpack_exchange_api(self, address: int) -> None:
        self._exchange_api = address

    def __chandle__(self) -> int:
        """The object's address (0 when empty)."""
        return self._handle or 0

    @property
    def id_(self) -> int:
        """Alias of :meth:`__chandle__`."""
        return self._handle or 0

    @property
    def type_index(self) -> int:
        """The runtime type index of the object."""
        return type_index_of(self._handle)

    def same_as(self, other: object) -> bool:
        """Whether ``other`` wraps the very same object."""
        return isinstance(other, Object) and self._handle == other._handle

    is_ = same_as

    def __eq__(self, other: object) -> bool:
        return self.same_as(other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._handle)


_EXCHANGE_API_SLOT = Object.__dict__["_exchange_api"]


class TensorBase(Object):
    """The base of ``tensor.Tensor``: an Object that may instead view a borrowed DLTensor
    (``_view``, its address); ``tensor.TensorMethods`` reads the fields."""

    __slots__ = ("_view",)


# --------------------------------------------------------------- class registry

#: How a class is made from an owned handle (its wrap mode, see the module docstring).
MODE_PLAIN, MODE_STR, MODE_BYTES, MODE_SHAPE, MODE_FROM_HANDLE, MODE_ADOPT = range(6)

#: type index -> (class, wrap mode), filled by register_class and on first sight.
_WRAPPERS: Dict[int, Tuple[type, int]] = {}


def _wrap_mode(type_index: int, cls: type) -> int:
    if getattr(cls, "_tvm_ffi_from_handle", None) is not None:
        # String, Bytes and Shape: what their _tvm_ffi_from_handle does, done here
        if type_index == TI.kTVMFFIStr and issubclass(cls, str):
            return MODE_STR
        if type_index == TI.kTVMFFIBytes and issubclass(cls, bytes):
            return MODE_BYTES
        if type_index == TI.kTVMFFIShape and issubclass(cls, tuple):
            return MODE_SHAPE
        return MODE_FROM_HANDLE
    adopt = next((k for k in cls.__mro__ if "_adopt" in k.__dict__), None)
    return MODE_PLAIN if adopt is Object and cls.__new__ is Object.__new__ else MODE_ADOPT


def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the wrapper class of ``type_index``."""
    TYPE_CLASSES[type_index] = cls
    cls._tvm_ffi_type_index = type_index  # type: ignore[attr-defined]
    _WRAPPERS[type_index] = (cls, _wrap_mode(type_index, cls))
    return cls


def _wrapper(type_index: int) -> Tuple[type, int]:
    cls = class_for_type_index(type_index)  # registers a fallback class on first sight
    found = _WRAPPERS.get(type_index)
    if found is None or found[0] is not cls:
        found = _WRAPPERS[type_index] = (cls, _wrap_mode(type_index, cls))
    return found


def _text(handle: int) -> bytes:
    cell = _cast("TVMFFIByteArray*", handle + 24)
    return ffi.unpack(cell.data, cell.size)


def wrap_owned(handle: int, type_index: Optional[int] = None) -> Any:
    """The Python value for an owned reference to an object (the wrapper takes it over)."""
    if type_index is None:
        type_index = type_index_of(handle)
    found = _WRAPPERS.get(type_index)
    if found is None:
        found = _wrapper(type_index)
    cls, mode = found
    if mode == MODE_PLAIN:
        obj = _new_object(cls)
        obj._handle = handle
        obj._exchange_api = 0
        return obj
    if mode == MODE_STR:
        value = str.__new__(cls, _text(handle).decode("utf-8", "surrogateescape"))
    elif mode == MODE_BYTES:
        value = bytes.__new__(cls, _text(handle))
    elif mode == MODE_SHAPE:
        cell = _cast("TVMFFIShapeCell*", handle + 24)
        value = tuple.__new__(cls, [cell.data[i] for i in range(cell.size)])
    elif mode == MODE_FROM_HANDLE:
        return cls._tvm_ffi_from_handle(handle)
    else:
        return cls._adopt(handle)
    cached = _new_object(Object)
    cached._handle = handle
    cached._exchange_api = 0
    value._tvm_ffi_cached_object = cached
    return value


_new_object = object.__new__  # a wrapper of a class in MODE_PLAIN: no __init__, no __new__
register_class(TI.kTVMFFIObject, Object)
releases.configure(decref)
