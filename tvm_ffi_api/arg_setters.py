"""Which encoding a Python argument gets, and the setters both front ends share.

:func:`argument_kind` is the dispatch order of the table in
:mod:`tvm_ffi_ref.convert` (first match wins), written once: the reference
maps each kind to a setter of ``convert.py``, the fast core to an encoder in
C. The kinds that are rare or need Python anyway (moved references, the
``__tvm_ffi_*__``, ``__cuda_stream__`` and DLPack dtype/device protocols,
opaque-pointer handlers, ``numpy.dtype`` and ``torch.dtype``, torch tensors of a
torch that publishes no DLPack exchange table, exceptions, ``ObjectConvertible``
and opaque objects) have one setter, here, in :data:`PYTHON_SETTERS`, used by
both; so does the reference's "object" kind, :func:`set_object_kind_arg`.
Framework tensors whose class publishes a DLPack exchange table are the
"dlpack_exchange" kind (``dlpack_exchange.py``).

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

from . import dlpack, dlpack_exchange, upcalls
from .c_integers import as_c_int, narrow
from .device import Device
from .error import exception_to_error
from .object import CObject, ObjectConvertible, ObjectRValueRef, type_index_of
from .pyobject import wrap_pyobject
from .string import Bytes, String

TI = abi.TVMFFITypeIndex
_KDL_CPU = int(abi.DLDeviceType.kDLCPU)
#: Where a Tensor object's ``DLTensor`` starts: right after the object header.
_TENSOR_DLTENSOR_AT = ctypes.sizeof(abi.TVMFFIObject)


class CallScope:
    """What must outlive one call, and what its arguments tell about the caller's framework.

    Besides temporaries and fixups, a scope records the framework context the
    arguments reveal (``dlpack_exchange.py``): the DLPack exchange table of the
    framework tensors among them (``exchange_api``, an address, 0 for none) and
    the device and stream of the first one not on the CPU (``device_type`` -1:
    none), which the call makes current.
    """

    __slots__ = ("owned", "keep", "after", "exchange_api", "device_type", "device_id", "stream")

    def __init__(self) -> None:
        self.owned: List[int] = []  # references created for the call, dropped after it
        self.keep: List[object] = []  # Python objects whose memory the call borrows
        self.after: List[Callable[[], None]] = []
        self.exchange_api = 0
        self.device_type, self.device_id, self.stream = -1, 0, 0

    def inherit(self, nested: "CallScope") -> None:
        """Takes up the framework context of a nested conversion (the elements of a list
        argument) where this scope has none yet."""
        if self.device_type == -1:
            self.device_type, self.device_id, self.stream = (
                nested.device_type, nested.device_id, nested.stream)
        if not self.exchange_api:
            self.exchange_api = nested.exchange_api

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
    cls = type(value)
    if value is None:
        return "none"
    if isinstance(value, CObject):
        return "object"
    if isinstance(value, ObjectRValueRef):
        return "rvalue_ref"
    if hasattr(cls, "__tvm_ffi_object__"):
        return "object_protocol"
    torch_tensor = dlpack_exchange.torch_tensor_class()
    if torch_tensor is not None and isinstance(value, torch_tensor):
        from ._optional_torch_c_dlpack import ensure_torch_exchange_api

        ensure_torch_exchange_api()  # an older torch may get a table from the add-on
    if dlpack_exchange.class_api_address(cls) is not None:  # (raises for a malformed table)
        return "dlpack_exchange"
    if hasattr(cls, "__cuda_stream__"):
        return "cuda_stream"
    driver = sys.modules.get("cuda.bindings.driver")
    if driver is not None and isinstance(value, driver.CUstream):
        return "cuda_driver_stream"
    if torch_tensor is not None and isinstance(value, torch_tensor):
        return "torch_fallback"
    if hasattr(cls, "__dlpack__"):
        return "dlpack"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    if isinstance(value, upcalls.DataType):
        return "data_type"
    if isinstance(value, upcalls.dtype):
        return "dtype"
    if isinstance(value, Device):
        return "device"
    if isinstance(value, String):
        return "native_str"
    if isinstance(value, Bytes):
        return "native_bytes"
    if isinstance(value, upcalls.Shape):
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


def set_object_kind_arg(out, value, scope):
    """An ``Object`` argument (the reference's "object" kind).

    A Tensor that only views a borrowed ``DLTensor`` passes it as
    ``kTVMFFIDLTensorPtr``; a container that remembers a framework's DLPack
    exchange table hands it (and its first non-CPU device) to the call.
    """
    view = getattr(value, "_view", None) if not value._handle else None
    if view:
        out.type_index = TI.kTVMFFIDLTensorPtr
        out.v_ptr = view
        return
    set_object_arg(out, value, scope)
    exchange_api = value._dlpack_exchange_api
    if exchange_api:
        dlpack_exchange.note_container(scope, exchange_api, value._handle)


def dlpack_argument(value: Any, scope: "CallScope") -> int:
    """The handle of the Tensor a DLPack producer argument becomes (``from_dlpack``'s import,
    no wrapper made), owned by ``scope``: released when the call ends."""
    handle = dlpack.import_tensor(value)
    scope.owned.append(handle)
    device = abi.DLTensor.from_address(handle + _TENSOR_DLTENSOR_AT).device
    note_producer_device(scope, value, device.device_type, device.device_id)
    return handle


def note_producer_device(scope: "CallScope", producer: Any, device_type: int,
                         device_id: int) -> None:
    """What the device of a DLPack producer argument tells the call. Upstream's rule for a
    producer not on the CPU, once the call already has a device: one that names its stream
    (``__tvm_ffi_env_stream__``) makes it the call's."""
    if (device_type != _KDL_CPU and scope.device_type != -1 and
            hasattr(producer, "__tvm_ffi_env_stream__")):
        scope.device_type, scope.device_id = device_type, device_id
        scope.stream = producer.__tvm_ffi_env_stream__()


def set_made_object(out, obj, scope):
    """Writes ``obj``, a wrapper made just for this call, whose reference the scope takes over
    (the wrapper is left empty): the object is released when the call ends, whenever the
    interpreter collects the wrapper."""
    handle, obj._handle = obj._handle, None
    scope.owned.append(handle)
    set_object(out, handle)


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


def _set_cuda_stream(out, value, scope):
    # the __cuda_stream__ protocol: (version, stream handle)
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value.__cuda_stream__()[1])


def _set_cuda_driver_stream(out, value, scope):
    # cuda-python's CUstream, which predates the protocol: int() is its handle
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value)


def _set_torch_fallback(out, value, scope):
    # A torch build publishing no exchange table: DLPack through Python, and results come
    # back through torch.from_dlpack (dlpack_exchange's fallback table).

    torch = sys.modules["torch"]
    is_cuda = value.is_cuda
    tensor = upcalls.from_dlpack(torch.utils.dlpack.to_dlpack(value))
    device = tensor.device
    set_made_object(out, tensor, scope)
    scope.exchange_api = dlpack_exchange.TORCH_FALLBACK_ADDRESS
    if is_cuda and scope.device_type == -1:
        scope.device_type, scope.device_id = device.dlpack_device_type(), device.index
        scope.stream = torch._C._cuda_getCurrentRawStream(device.index)


def _set_torch_dtype(out, value, scope):
    triple = upcalls.torch_dtype_table().get(value)
    if triple is None:
        raise ValueError("Unsupported torch dtype: ", value)
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(*triple)


def _set_opaque_ptr_protocol(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(value.__tvm_ffi_opaque_ptr__())


#: Setup-time handlers turning instances of an exact third-party class into an
#: opaque pointer: ``OPAQUE_PTR_HANDLERS[cls] = lambda value: address`` (upstream's
#: ``core._OPAQUE_PTR_HANDLERS``). Consulted once per class, when its values
#: are first passed.
OPAQUE_PTR_HANDLERS: Dict[type, Callable[[Any], int]] = {}


def _set_opaque_ptr_handler(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = int(OPAQUE_PTR_HANDLERS[type(value)](value))


def _set_numpy_dtype(out, value, scope):
    # upstream's table only: numpy.dtype('bool'), complex, '>i4', ... raise ValueError
    code, bits, lanes = upcalls.numpy_dtype_triple(value)
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = abi.DLDataType(code, bits, lanes)


def dl_data_type(code: Any, bits: Any, lanes: Any) -> abi.DLDataType:
    """A ``DLDataType`` of a Python triple, each field range-checked (``OverflowError``).

    Lanes may be negative (a scalable vector's ``-factor``, as dtypes read them)
    and are then stored as their 16-bit two's complement.
    """
    lanes = narrow(lanes, "int16_t") if as_c_int(lanes) < 0 else narrow(lanes, "uint16_t")
    return abi.DLDataType(narrow(code, "uint8_t"), narrow(bits, "uint8_t"), lanes & 0xFFFF)


def dl_device(device_type: Any, device_id: Any) -> abi.DLDevice:
    """A ``DLDevice`` of a Python pair, both fields range-checked as int32 (``OverflowError``)."""
    return abi.DLDevice(narrow(device_type, "int32_t"), narrow(device_id, "int32_t"))


def _set_data_type(out, value, scope):
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = dl_data_type(value.type_code, value.bits, value.lanes)


def _set_dlpack_data_type(out, value, scope):
    code, bits, lanes = value.__dlpack_data_type__()
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = dl_data_type(code, bits, lanes)


def _set_dlpack_device(out, value, scope):
    device_type, device_id = value.__dlpack_device__()
    out.type_index = TI.kTVMFFIDevice
    out.v_device = dl_device(device_type, device_id)


def _set_int_protocol(out, value, scope):
    result = value.__tvm_ffi_int__()
    if not isinstance(result, int):
        raise TypeError(f"__tvm_ffi_int__ of {type(value).__name__} returned "
                        f"{type(result).__name__}, expected int")
    upcalls.set_arg(out, int(result), scope)  # int(): a bool result still travels as an int


def _set_float_protocol(out, value, scope):
    upcalls.set_arg(out, float(value.__tvm_ffi_float__()), scope)


def _set_value_protocol(out, value, scope):
    upcalls.set_arg(out, value.__tvm_ffi_value__(), scope)


def _set_exception(out, value, scope):

    error = exception_to_error(value)
    if error is getattr(value, "__tvm_ffi_error__", None):  # the Error it came from: borrowed
        scope.keep.append(error)
        set_object_arg(out, error, scope)
    else:
        set_made_object(out, error, scope)


def _set_object_convertible(out, value, scope):
    obj = value.asobject()
    scope.keep.append(obj)
    set_object_arg(out, obj, scope)


def _set_opaque(out, value, scope):

    set_made_object(out, wrap_pyobject(value), scope)


#: The setter of each kind that both front ends encode in Python.
PYTHON_SETTERS: Dict[str, Callable] = {
    "rvalue_ref": _set_rvalue_ref,
    "cuda_stream": _set_cuda_stream,
    "cuda_driver_stream": _set_cuda_driver_stream,
    "torch_fallback": _set_torch_fallback,
    "torch_dtype": _set_torch_dtype,
    "object_protocol": _set_object_protocol,
    "opaque_ptr_protocol": _set_opaque_ptr_protocol,
    "opaque_ptr_handler": _set_opaque_ptr_handler,
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
