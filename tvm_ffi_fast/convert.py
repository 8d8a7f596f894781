"""Python values to TVMFFIAny and back: the fast core's side of the encoding.

The rules are ``tvm_ffi_ref.convert``'s (its table is the spec, first match
wins) and a kernel cannot tell the two front ends apart. The work is done in
C (``tvm_ffi_fast/src/frontend/encode.c`` and ``decode.c``); what stays here:

* :func:`_choose_setter`, the reference's dispatch order, asked once per
  Python type by the C encoder: it returns one of the kinds the C encodes
  itself (``_frontend.KIND_*``), or, for the rare kinds (rvalue references,
  the ``__tvm_ffi_*__`` and DLPack dtype/device protocols, ``numpy.dtype``,
  exceptions, ``ObjectConvertible`` and opaque objects), a setter below that
  writes into the ``TVMFFIAny`` through ctypes, exactly as the reference's;
* :class:`CallScope`, which such a setter records what it made in;
* the names the shared API modules import (``set_arg``, ``to_python``, ...),
  each one call into the core.
"""

from __future__ import annotations

import ctypes
import numbers
import sys
from typing import Any, Callable, List, Optional, Union

from . import _frontend, abi
from .object import Object, ObjectConvertible, ObjectRValueRef, type_index_of
from .string import Bytes, String

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


class CallScope:
    """What must outlive one call: temporary objects and buffers, and post-call fixups."""

    __slots__ = ("owned", "keep", "after")

    def __init__(self) -> None:
        self.owned: List[int] = []  # references created for the call, dropped after it
        self.keep: List[object] = []  # Python objects whose memory the call borrows
        self.after: List[Callable[[], None]] = []

    def close(self) -> None:
        """Runs the fixups and drops the temporary references."""
        for action in self.after:
            action()
        for handle in self.owned:
            _frontend.decref(handle)
        self.owned.clear()
        self.keep.clear()
        self.after.clear()


# --------------------------------------------------------------- the rare kinds, in Python


def _set_object(out: abi.TVMFFIAny, handle: int) -> None:
    out.type_index = type_index_of(handle)
    out.v_ptr = handle


def _set_object_arg(out, value, scope):
    if not value._handle:
        raise ValueError(f"cannot pass an empty {type(value).__name__} (its handle was moved)")
    _set_object(out, value._handle)


def _set_made_object(out, obj, scope):
    # ``obj`` is a wrapper made just for this call: keep it until the call ends.
    scope.keep.append(obj)
    _set_object(out, obj._handle)


def _set_rvalue_ref(out, value, scope):
    source = value.obj
    slot = ctypes.c_void_p(source._handle)
    scope.keep.append(slot)

    def settle() -> None:
        if not slot.value:  # the callee took the reference
            source._handle = None

    scope.after.append(settle)
    out.type_index = TI.kTVMFFIObjectRValueRef
    out.v_ptr = ctypes.addressof(slot)


def _set_object_protocol(out, value, scope):
    obj = value.__tvm_ffi_object__()
    scope.keep.append(obj)
    _set_object_arg(out, obj, scope)


def _set_opaque_ptr_protocol(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value.__tvm_ffi_opaque_ptr__())


def _set_numpy_dtype(out, value, scope):
    from .dtype import numpy_dtype_triple

    # upstream's table only: numpy.dtype('bool'), complex, '>i4', ... raise ValueError
    code, bits, lanes = numpy_dtype_triple(value)
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def _set_dlpack_data_type(out, value, scope):
    code, bits, lanes = value.__dlpack_data_type__()
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def _set_dlpack_device(out, value, scope):
    device_type, device_id = value.__dlpack_device__()
    out.type_index = TI.kTVMFFIDevice
    out.v_device = abi.DLDevice(device_type, device_id)


def _set_int_protocol(out, value, scope):
    result = value.__tvm_ffi_int__()
    if not isinstance(result, int):
        raise TypeError(f"__tvm_ffi_int__ of {type(value).__name__} returned "
                        f"{type(result).__name__}, expected int")
    set_arg(out, int(result), scope)  # int(): a bool result still travels as an int


def _set_float_protocol(out, value, scope):
    set_arg(out, float(value.__tvm_ffi_float__()), scope)


def _set_value_protocol(out, value, scope):
    set_arg(out, value.__tvm_ffi_value__(), scope)


def _set_exception(out, value, scope):
    from .function import exception_to_error

    _set_made_object(out, exception_to_error(value), scope)


def _set_object_convertible(out, value, scope):
    obj = value.asobject()
    scope.keep.append(obj)
    _set_object_arg(out, obj, scope)


def _set_opaque(out, value, scope):
    from .pyobject import wrap_pyobject

    _set_made_object(out, wrap_pyobject(value), scope)


def _choose_setter(value: Any) -> Union[int, Callable]:
    """The reference's dispatch order: a kind the core encodes, or a Python setter.

    Called by the core once per Python type (the answer is cached by type).
    """
    from .device import Device
    from .dtype import dtype
    from .tensor import Shape

    cls = type(value)
    if value is None:
        return _frontend.KIND_NONE
    if isinstance(value, Object):
        return _frontend.KIND_OBJECT
    if isinstance(value, ObjectRValueRef):
        return _set_rvalue_ref
    if hasattr(cls, "__tvm_ffi_object__"):
        return _set_object_protocol
    if hasattr(cls, "__dlpack__"):
        return _frontend.KIND_DLPACK
    if isinstance(value, bool):
        return _frontend.KIND_BOOL
    if isinstance(value, numbers.Integral):
        return _frontend.KIND_INT
    if isinstance(value, numbers.Real):
        return _frontend.KIND_FLOAT
    if isinstance(value, dtype):
        return _frontend.KIND_DTYPE
    if isinstance(value, Device):
        return _frontend.KIND_DEVICE
    if isinstance(value, String):
        return _frontend.KIND_NATIVE_STR
    if isinstance(value, Bytes):
        return _frontend.KIND_NATIVE_BYTES
    if isinstance(value, Shape):
        return _frontend.KIND_NATIVE_SHAPE
    if isinstance(value, str):
        return _frontend.KIND_STR
    if isinstance(value, (bytes, bytearray)):
        return _frontend.KIND_BYTES
    if isinstance(value, (tuple, list)):
        return _frontend.KIND_SEQUENCE
    if isinstance(value, dict):
        return _frontend.KIND_DICT
    if isinstance(value, ctypes.c_void_p):
        return _frontend.KIND_VOID_P
    if hasattr(cls, "__tvm_ffi_opaque_ptr__"):
        return _set_opaque_ptr_protocol
    if callable(value):
        return _frontend.KIND_CALLABLE
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.dtype):
        return _set_numpy_dtype
    if hasattr(cls, "__dlpack_data_type__"):
        return _set_dlpack_data_type
    if hasattr(cls, "__dlpack_device__") and not hasattr(cls, "__dlpack__"):
        return _set_dlpack_device
    if hasattr(cls, "__tvm_ffi_int__"):
        return _set_int_protocol
    if hasattr(cls, "__tvm_ffi_float__"):
        return _set_float_protocol
    if hasattr(cls, "__tvm_ffi_value__"):
        return _set_value_protocol
    if isinstance(value, Exception):
        return _set_exception
    if isinstance(value, ObjectConvertible):
        return _set_object_convertible
    return _set_opaque


def _fallback_set(setter: Callable, address: int, value: Any, scope: CallScope) -> None:
    """Runs a Python setter on the TVMFFIAny the core is filling at ``address``."""
    setter(abi.TVMFFIAny.from_address(address), value, scope)


# --------------------------------------------------------------- the core's entry points


def set_arg(out: abi.TVMFFIAny, value: Any, scope: CallScope) -> None:
    """Writes ``value`` into ``out`` as a borrowed argument."""
    _frontend.set_arg(ctypes.addressof(out), value, scope)


def pack_args(args, scope: CallScope) -> "ctypes.Array[abi.TVMFFIAny]":
    """A TVMFFIAny array holding ``args`` as borrowed arguments."""
    packed = (abi.TVMFFIAny * len(args))()
    _frontend.pack_into(ctypes.addressof(packed), args, scope)
    return packed


def to_owned_any(value: Any, out: abi.TVMFFIAny) -> None:
    """Writes ``value`` into ``out`` as an owned value (a callback's result)."""
    _frontend.to_owned_any_at(value, ctypes.addressof(out))


def to_python(value: abi.TVMFFIAny) -> Any:
    """The Python value of an *owned* TVMFFIAny; takes over its reference."""
    return _frontend.to_python_at(ctypes.addressof(value))


def borrowed_to_python(value: abi.TVMFFIAny) -> Any:
    """The Python value of a *borrowed* TVMFFIAny (a callback argument)."""
    return _frontend.borrowed_to_python_at(ctypes.addressof(value))


def release_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned TVMFFIAny holds, if any."""
    if value.type_index >= _OBJECT_BEGIN:
        _frontend.decref(value.v_ptr)


def optional_handle(value: Optional[Object]) -> Optional[int]:
    """The handle of an optional object argument."""
    return None if value is None else value._handle
