"""Python wrappers of TVM FFI objects.

An :class:`Object` owns exactly one strong reference to the object at
``handle`` (the address of its header) and drops it when garbage collected
(through ``releases``: never from inside a finalizer where collection is not prompt).
Which Python class wraps an object is decided by its type index: classes
registered with :func:`register_object` for a type key, or, for a type nobody
registered, a class made on first sight from the runtime's type record,
derived from the nearest registered ancestor.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Dict, Optional, Type

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import releases
from .object_methods import ObjectMethods
from .object_protocols import ObjectConvertible, ObjectRValueRef
from .type_info import TYPE_CLASSES, class_for_type_index, type_info, type_key, type_key_to_index

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return ctypes.c_int32.from_address(handle + 8).value


class Object(ObjectMethods):
    """Base class of every TVM FFI object seen from Python.

    Equality and hashing are by identity of the underlying object, unless a
    subclass defines value semantics (containers do).
    """

    __slots__ = ("_handle", "_exchange_api", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any) -> "Object":
        # Every wrapper starts empty, however it is made (``cls.__new__(cls)`` by
        # pickle, a subclass whose ``__init__`` never calls ours, ...).
        self = super().__new__(cls)
        self._handle = None
        return self

    def __init__(self) -> None:
        # A bare Object() holds nothing (__new__ left it empty); subclasses construct through
        # __init_handle_by_constructor__. An object already made is kept, so a subclass
        # __init__ may call super().__init__() after its object was allocated.
        pass

    # -- construction from handles --------------------------------------------

    @classmethod
    def _adopt(cls, handle: int) -> "Object":
        """A wrapper taking over one owned reference to ``handle``."""
        obj = cls.__new__(cls)
        obj._handle = handle
        return obj

    def __init_handle_by_constructor__(self, fconstructor: Any, *args: Any) -> None:
        """Initialises this wrapper with the object ``fconstructor(*args)`` returns.

        The wrapper is empty while the constructor runs; an object it held before
        is released afterwards (so the new object never reuses its address).
        """
        old, self._handle = self._handle, None
        try:
            result = fconstructor(*args)
            if not isinstance(result, Object):
                raise TypeError(f"constructor returned {type(result).__name__}, not an object")
            self.__move_handle_from__(result)
        finally:
            if old:
                LIB.TVMFFIObjectDecRef(old)

    def __move_handle_from__(self, other: "Object") -> None:
        """Takes ``other``'s reference, leaving ``other`` empty."""
        self._handle, other._handle = other._handle, None

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
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

    # -- identity ---------------------------------------------------------------

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
    """The base of ``tensor.Tensor``: an Object that may instead view a borrowed DLTensor.

    ``_view`` holds the ``DLTensor*`` address of a view (a kernel's
    ``kTVMFFIDLTensorPtr``); ``tensor.TensorMethods`` reads the fields.
    """

    __slots__ = ("_view",)


# --------------------------------------------------------------- class registry

def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the wrapper class of ``type_index``."""
    TYPE_CLASSES[type_index] = cls
    cls._tvm_ffi_type_index = type_index  # type: ignore[attr-defined]
    return cls


def wrap_owned(handle: int, type_index: Optional[int] = None) -> Any:
    """The Python value for an owned reference to an object (the wrapper takes it over)."""
    if type_index is None:
        type_index = type_index_of(handle)
    cls = class_for_type_index(type_index)
    from_object = getattr(cls, "_tvm_ffi_from_handle", None)
    if from_object is not None:
        return from_object(handle)
    return cls._adopt(handle)


register_class(TI.kTVMFFIObject, Object)
releases.configure(LIB.TVMFFIObjectDecRef)
