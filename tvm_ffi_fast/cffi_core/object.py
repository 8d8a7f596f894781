"""Python wrappers of TVM FFI objects: the cffi core's ``Object``.

The interface of every core's ``object`` module (``tvm_ffi_ref/object.py``
states its meaning). Here everything is plain Python that PyPy's JIT
compiles: a wrapper is an instance of the shared ``object_wrapper.Object``
with a ``_handle`` slot (the object's address, an int), made here without
running ``__init__``; the runtime is reached
through ``tvm_ffi_fast._core``, the out-of-line cffi module, whose calls the
JIT turns into direct C calls.

A wrapper drops its reference when collected, through ``releases``: on PyPy
the finalizer only queues the handle, and the core drops queued references
before its next call into the runtime (see ``releases.py`` for why).

How a result becomes a Python value depends on its class, decided once per
class by :func:`register_class` (the *wrap mode*): a plain wrapper, a
``str``/``bytes``/``tuple`` (``String``, ``Bytes``, ``Shape``: a Shape
remembers its object, a String or Bytes only when its content could not
make the same object again, see :func:`wrap_owned`), or the class's own
``_tvm_ffi_from_handle`` / ``_adopt``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from tvm_ffi_common import abi

from . import releases, upcalls
from ._core import ffi, lib
from .object_protocols import ObjectConvertible, ObjectRValueRef  # noqa: F401 - the interface
from .object_wrapper import CObject, Object, TensorBase  # noqa: F401 - the interface
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
    # a plain int key, never the IntEnum: one enum key makes PyPy store the whole dict as
    # objects, and every lookup boxes its int (a wrap was a forcing call and two allocations)
    type_index = int(type_index)
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


#: The longest text a String or Bytes argument carries inline (TVMFFISmallStr/SmallBytes).
_INLINE_TEXT = 7


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
    if mode == MODE_STR or mode == MODE_BYTES:
        cell = _cast("TVMFFIByteArray*", handle + 24)
        text = ffi.unpack(cell.data, cell.size)
        # Copied, the object released at once: the value is a String (or Bytes) with no
        # object behind it, as one made in Python, and passed back it becomes the same kind
        # of object again. On PyPy a wrapper kept for the object costs the GC a finalizer,
        # 300 to 1,500 ns per value in a sustained loop: more than that copy. Content that
        # would not come back the same (inline when short, or not UTF-8) keeps its object.
        copied = cell.size > _INLINE_TEXT
        if mode == MODE_BYTES:
            value = bytes.__new__(cls, text)
        else:
            try:
                value = str.__new__(cls, text.decode("utf-8"))
            except UnicodeDecodeError:
                value = str.__new__(cls, text.decode("utf-8", "surrogateescape"))
                copied = False
        if copied:
            _decref(_cast("void*", handle))
            value._tvm_ffi_cached_object = None
            return value
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

upcalls.install("object", type_index_of=type_index_of)
