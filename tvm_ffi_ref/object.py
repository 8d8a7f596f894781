"""Python wrappers of TVM FFI objects.

An :class:`Object` owns exactly one strong reference to the object at
``handle`` (the address of its header) and drops it when garbage collected
(through ``releases``: never from inside a finalizer where collection is not prompt);
the class itself is shared with the cffi core (``object_wrapper.py``). Which Python class wraps an object is decided by its type index: classes
registered with :func:`register_object` for a type key, or, for a type nobody
registered, a class made on first sight from the runtime's type record,
derived from the nearest registered ancestor.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import releases, upcalls
from .object_protocols import ObjectConvertible, ObjectRValueRef  # noqa: F401 - the core contract (tvm_ffi_api/object.pyi)
from .object_wrapper import CObject, Object, TensorBase  # noqa: F401 - the interface
from .type_info import TYPE_CLASSES, class_for_type_index, type_info, type_key_to_index  # noqa: F401 - the core contract

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return ctypes.c_int32.from_address(handle + 8).value


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

upcalls.install("object", type_index_of=type_index_of)
