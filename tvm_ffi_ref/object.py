"""Python wrappers of TVM FFI objects.

An :class:`Object` owns exactly one strong reference to the object at
``handle`` (the address of its header) and drops it when garbage collected.
Which Python class wraps an object is decided by its type index: classes
registered with :func:`register_object` for a type key, or, for a type nobody
registered, a class made on first sight from the runtime's type record,
derived from the nearest registered ancestor.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Dict, Optional, Type

from . import abi
from ._lib import LIB

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return ctypes.c_int32.from_address(handle + 8).value


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


class Object:
    """Base class of every TVM FFI object seen from Python.

    Equality and hashing are by identity of the underlying object, unless a
    subclass defines value semantics (containers do).
    """

    __slots__ = ("_handle", "__weakref__")

    def __init__(self) -> None:
        # Subclasses construct through __init_handle_by_constructor__;
        # a bare Object() holds nothing.
        self._handle = None

    # -- construction from handles --------------------------------------------

    @classmethod
    def _adopt(cls, handle: int) -> "Object":
        """A wrapper taking over one owned reference to ``handle``."""
        obj = cls.__new__(cls)
        obj._handle = handle
        return obj

    def __init_handle_by_constructor__(self, fconstructor: Any, *args: Any) -> None:
        """Initialises this wrapper with the object ``fconstructor(*args)`` returns."""
        self._handle = None
        result = fconstructor(*args)
        if not isinstance(result, Object):
            raise TypeError(f"constructor returned {type(result).__name__}, not an object")
        self.__move_handle_from__(result)

    def __move_handle_from__(self, other: "Object") -> None:
        """Takes ``other``'s reference, leaving ``other`` empty."""
        self._handle, other._handle = other._handle, None

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and not sys.is_finalizing():
            self._handle = None
            LIB.TVMFFIObjectDecRef(handle)

    # -- identity ---------------------------------------------------------------

    def __chandle__(self) -> int:
        """The object's address (0 when empty)."""
        return self._handle or 0

    @property
    def id_(self) -> int:
        """Alias of :meth:`__chandle__`."""
        return self._handle or 0

    def __ctypes_handle__(self) -> ctypes.c_void_p:
        """The object's address as a ``ctypes.c_void_p``."""
        return ctypes.c_void_p(self._handle)

    @property
    def type_index(self) -> int:
        """The runtime type index of the object."""
        return type_index_of(self._handle)

    @property
    def type_key(self) -> str:
        """The registered type key of the object, e.g. ``"ffi.Array"``."""
        return type_key(self.type_index)

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


class ObjectConvertible:
    """Base of Python classes that convert themselves to an object when passed."""

    def asobject(self) -> Object:
        """The object this value stands for."""
        raise NotImplementedError()


# --------------------------------------------------------------- class registry

#: The Python class of each type index.
TYPE_CLASSES: Dict[int, type] = {}


def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the wrapper class of ``type_index``."""
    TYPE_CLASSES[type_index] = cls
    cls._tvm_ffi_type_index = type_index  # type: ignore[attr-defined]
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
    if type_index is None:
        type_index = type_index_of(handle)
    cls = class_for_type_index(type_index)
    from_object = getattr(cls, "_tvm_ffi_from_handle", None)
    if from_object is not None:
        return from_object(handle)
    return cls._adopt(handle)


register_class(TI.kTVMFFIObject, Object)
