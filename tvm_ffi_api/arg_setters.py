"""Which encoding a Python argument gets, and the setters both front ends share.

:func:`argument_kind` is the dispatch order of the table in
:mod:`tvm_ffi_ref.convert` (first match wins), written once: the reference
maps each kind to a setter of ``convert.py``, the fast core to an encoder in
C. The kinds that are rare or need Python anyway (moved references, the
``__tvm_ffi_*__``, ``__cuda_stream__`` and DLPack dtype/device protocols, opaque-pointer
handlers, ``torch.dtype`` and ``numpy.dtype``,
exceptions, ``ObjectConvertible`` and opaque objects) have one setter, here,
in :data:`PYTHON_SETTERS`, used by both; so does the reference's "object"
kind, :func:`set_object_arg`.

A setter is ``setter(out, value, scope)``: it writes ``value`` into the
``TVMFFIAny`` ``out`` as a borrowed argument and records in ``scope`` (a
:class:`CallScope`) whatever must outlive the call.
"""

from __future__ import annotations

import ctypes
import numbers
import sys
from typing import Any, Callable, Dict, List

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .object import Object, ObjectConvertible, ObjectRValueRef, type_index_of
from .string import Bytes, String

TI = abi.TVMFFITypeIndex


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
            LIB.TVMFFIObjectDecRef(handle)
        self.owned.clear()
        self.keep.clear()
        self.after.clear()


def argument_kind(value: Any) -> str:
    """The name of the encoding ``value`` gets as an argument (upstream's order)."""
    from .device import Device
    from .dtype import DataType, dtype
    from .tensor import Shape

    cls = type(value)
    if value is None:
        return "none"
    if isinstance(value, Object):
        return "object"
    if isinstance(value, ObjectRValueRef):
        return "rvalue_ref"
    if hasattr(cls, "__tvm_ffi_object__"):
        return "object_protocol"
    if hasattr(cls, "__cuda_stream__"):
        return "cuda_stream"
    if hasattr(cls, "__dlpack__"):
        return "dlpack"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    if isinstance(value, DataType):
        return "data_type"
    if isinstance(value, dtype):
        return "dtype"
    if isinstance(value, Device):
        return "device"
    if isinstance(value, String):
        return "native_str"
    if isinstance(value, Bytes):
        return "native_bytes"
    if isinstance(value, Shape):
        return "native_shape"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, (tuple, list)):
        return "sequence"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, ctypes.c_void_p):
        return "void_p"
    if hasattr(cls, "__tvm_ffi_opaque_ptr__"):
        return "opaque_ptr_protocol"
    if cls in OPAQUE_PTR_HANDLERS:
        return "opaque_ptr_handler"
    if callable(value):
        return "callable"
    torch = sys.modules.get("torch")  # a torch.dtype exists only once torch is imported
    if torch is not None and isinstance(value, torch.dtype):
        return "torch_dtype"
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.dtype):
        return "numpy_dtype"
    if hasattr(cls, "__dlpack_data_type__"):
        return "dlpack_data_type"
    if hasattr(cls, "__dlpack_device__") and not hasattr(cls, "__dlpack__"):
        return "dlpack_device"
    if hasattr(cls, "__tvm_ffi_int__"):
        return "int_protocol"
    if hasattr(cls, "__tvm_ffi_float__"):
        return "float_protocol"
    if hasattr(cls, "__tvm_ffi_value__"):
        return "value_protocol"
    if isinstance(value, Exception):
        return "exception"
    if isinstance(value, ObjectConvertible):
        return "object_convertible"
    return "opaque"


# ------------------------------------------------------------------ objects


def set_object(out: abi.TVMFFIAny, handle: int) -> None:
    """Writes the object at ``handle`` (borrowed) into ``out``."""
    out.type_index = type_index_of(handle)
    out.v_ptr = handle


def set_object_arg(out, value, scope):
    """Writes the object a wrapper holds (an emptied wrapper is refused)."""
    if not value._handle:
        raise ValueError(f"cannot pass an empty {type(value).__name__} (its handle was moved)")
    set_object(out, value._handle)


def set_made_object(out, obj, scope):
    """Writes ``obj``, a wrapper made just for this call, and keeps it until the call ends."""
    scope.keep.append(obj)
    set_object(out, obj._handle)


# -------------------------------------------------------------- the rare kinds


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
    set_object_arg(out, obj, scope)


def _set_opaque_ptr_protocol(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value.__tvm_ffi_opaque_ptr__())


def _set_cuda_stream(out, value, scope):
    # __cuda_stream__() -> (kind, address): the stream crosses as an opaque pointer
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value.__cuda_stream__()[1])


#: Setup-time handlers turning instances of an exact third-party class into an
#: opaque pointer: ``OPAQUE_PTR_HANDLERS[cls] = lambda value: address`` (upstream's
#: ``core._OPAQUE_PTR_HANDLERS``). Consulted once per class, when its values
#: are first passed.
OPAQUE_PTR_HANDLERS: Dict[type, Callable[[Any], int]] = {}


def _set_opaque_ptr_handler(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(OPAQUE_PTR_HANDLERS[type(value)](value))


def _set_torch_dtype(out, value, scope):
    from .dtype import torch_dtype_triple

    code, bits, lanes = torch_dtype_triple(value)
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def _set_numpy_dtype(out, value, scope):
    from .dtype import numpy_dtype_triple

    # upstream's table only: numpy.dtype('bool'), complex, '>i4', ... raise ValueError
    code, bits, lanes = numpy_dtype_triple(value)
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def _set_data_type(out, value, scope):
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(value.type_code, value.bits, value.lanes)


def _set_dlpack_data_type(out, value, scope):
    code, bits, lanes = value.__dlpack_data_type__()
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def _set_dlpack_device(out, value, scope):
    device_type, device_id = value.__dlpack_device__()
    out.type_index = TI.kTVMFFIDevice
    out.v_device = abi.DLDevice(device_type, device_id)


def _set_int_protocol(out, value, scope):
    from .convert import set_arg

    result = value.__tvm_ffi_int__()
    if not isinstance(result, int):
        raise TypeError(f"__tvm_ffi_int__ of {type(value).__name__} returned "
                        f"{type(result).__name__}, expected int")
    set_arg(out, int(result), scope)  # int(): a bool result still travels as an int


def _set_float_protocol(out, value, scope):
    from .convert import set_arg

    set_arg(out, float(value.__tvm_ffi_float__()), scope)


def _set_value_protocol(out, value, scope):
    from .convert import set_arg

    set_arg(out, value.__tvm_ffi_value__(), scope)


def _set_exception(out, value, scope):
    from .error import exception_to_error

    set_made_object(out, exception_to_error(value), scope)


def _set_object_convertible(out, value, scope):
    obj = value.asobject()
    scope.keep.append(obj)
    set_object_arg(out, obj, scope)


def _set_opaque(out, value, scope):
    from .pyobject import wrap_pyobject

    set_made_object(out, wrap_pyobject(value), scope)


#: The setter of each kind that both front ends encode in Python.
PYTHON_SETTERS: Dict[str, Callable] = {
    "rvalue_ref": _set_rvalue_ref,
    "object_protocol": _set_object_protocol,
    "opaque_ptr_protocol": _set_opaque_ptr_protocol,
    "cuda_stream": _set_cuda_stream,
    "opaque_ptr_handler": _set_opaque_ptr_handler,
    "torch_dtype": _set_torch_dtype,
    "numpy_dtype": _set_numpy_dtype,
    "data_type": _set_data_type,
    "dlpack_data_type": _set_dlpack_data_type,
    "dlpack_device": _set_dlpack_device,
    "int_protocol": _set_int_protocol,
    "float_protocol": _set_float_protocol,
    "value_protocol": _set_value_protocol,
    "exception": _set_exception,
    "object_convertible": _set_object_convertible,
    "opaque": _set_opaque,
}
