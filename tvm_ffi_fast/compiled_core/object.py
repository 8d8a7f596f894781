"""Python wrappers of TVM FFI objects: the fast core's ``CObject`` and ``Object``.

The same interface as ``tvm_ffi_ref.object``, which the shared API modules
use: a :class:`CObject` owns exactly one strong reference to the object at
``_handle`` and drops it when collected (:class:`Object` is its subclass for
every object type but functions, tensors, errors and opaque Python objects); which Python class wraps an object
is decided by its type index (classes registered with :func:`register_class`,
or a class made on first sight from the runtime's type record).

Here both are extension types (``tvm_ffi_fast._frontend``): the
handle lives in a C slot and is released in C. The methods that need no speed
are added below in Python; the type-index -> class table is kept both here
(:data:`TYPE_CLASSES`) and in C, where results are wrapped.
"""

from __future__ import annotations

from typing import Any, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB  # noqa: F401 - kept for its load order (the bound library)

from . import _frontend, object_methods, releases, upcalls
from ._frontend import CObject, Object, TensorBase  # noqa: F401 - TensorBase: tensor.py's base
from .object_meta import ObjectMeta
from .object_protocols import ObjectConvertible, ObjectRValueRef  # noqa: F401 - the core contract (tvm_ffi_api/object.pyi)
from .type_info import TYPE_CLASSES, class_for_type_index, type_info, type_key_to_index  # noqa: F401 - the core contract

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


def type_index_of(handle: int) -> int:
    """The type index stored in an object's header."""
    return _frontend.type_index_of(handle)


# Before any Python subclass exists: a subclass takes its metaclass from its bases.
_frontend.set_object_metaclass(ObjectMeta)
for _type in (CObject, Object, _frontend.Function, TensorBase):
    ObjectMeta.adopt_extension_type(_type)
object_methods.install_onto(CObject, object_methods.CObjectMethods)
object_methods.install_onto(Object, object_methods.ObjectMethods)

# Wrappers are released in C; what else holds a reference for a finalizer to drop (a CAny)
# drops it through the front end's decref (releases.py, shared with the other cores).
releases.configure(_frontend.decref)


# --------------------------------------------------------------- class registry

#: Classes whose ``_adopt`` is the C one (``cls.__new__(cls)`` plus the handle).
_C_ADOPTERS = (CObject, _frontend.Function)


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
    if isinstance(cls, type) and issubclass(cls, CObject) and _defines(cls, "_adopt") in _C_ADOPTERS:
        return _frontend.MODE_PLAIN
    return _frontend.MODE_ADOPT


def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the wrapper class of ``type_index``."""
    TYPE_CLASSES[type_index] = cls
    cls._tvm_ffi_type_index = type_index  # type: ignore[attr-defined]
    _frontend.register_class(type_index, cls, _wrap_mode(type_index, cls))
    return cls


def wrap_owned(handle: int, type_index: Optional[int] = None) -> Any:
    """The Python value for an owned reference to an object (the wrapper takes it over)."""
    return _frontend.wrap_owned(handle, type_index)


register_class(TI.kTVMFFIObject, Object)

upcalls.install("object", type_index_of=type_index_of)
