"""Framework tensors through DLPack 1.3's C exchange API: the rules, readable.

A framework publishes a ``DLPackExchangeAPI`` (``dlpack/dlpack.h``) as the
class attribute ``__dlpack_c_exchange_api__`` of its tensor type: a PyCapsule
named ``"dlpack_exchange_api"`` holding the table's address (an ``int``
address is accepted too). torch does, from 2.13. The table's C functions turn
a framework tensor into an owning ``DLManagedTensorVersioned`` and back
without any Python-level ``__dlpack__`` call, allocate framework tensors, and
report the framework's current stream. A call uses it as upstream does:

* **arguments**: a value whose class publishes a table becomes a Tensor
  through ``managed_tensor_from_py_object_no_sync`` (checked before
  ``__cuda_stream__`` and ``__dlpack__``; ``TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API=1``
  turns the check off). The call remembers the table (the last such argument
  wins) and, for the first tensor not on the CPU, the device and the stream
  ``current_work_stream`` reports;
* **during the call**: that stream is the device's current stream
  (``TVMFFIEnvSetStream``) and the table's ``managed_tensor_allocator`` is
  the DLPack allocator (``TVMFFIEnvSetDLPackManagedTensorAllocator``), both
  restored afterwards, so ``TVMFFIEnvTensorAlloc`` in the kernel makes
  framework tensors on the framework's stream;
* **results**: a Tensor result comes back as the framework's tensor
  (``TVMFFITensorToDLPackVersioned`` then ``managed_tensor_to_py_object_no_sync``,
  sharing memory), our Tensor if that fails; an Array, List, Map or Dict
  result remembers the table, so that reading a Tensor out of it gives the
  framework's tensor too, and passing it to another call carries the table
  (and the device of its first non-CPU tensor) into that call;
* ``from_dlpack(x)`` tries the table of ``type(x)`` first and falls back to
  ``x.__dlpack__()`` when the import fails with ``BufferError``;
* a Python callback made by ``convert_func(f, tensor_cls=...)`` receives its
  Tensor arguments as ``tensor_cls``'s framework tensors.

This module is that logic over ctypes: the reference front end runs it for
every call, and the fast core (which does the same in C, ``exchange.c``) for
the rare argument kinds it leaves to Python. The table's functions take and
return ``PyObject*``, so they are called with the GIL held (``PYFUNCTYPE``).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Dict, Optional

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from . import upcalls
from .object import Object, wrap_owned

#: The class attribute a framework publishes its table under.
ATTRIBUTE = "__dlpack_c_exchange_api__"
#: The name of the capsule holding the table's address.
CAPSULE_NAME = b"dlpack_exchange_api"
#: With this set to "1", argument conversion ignores published tables (``__dlpack__`` is used).
SKIP_ENV = "TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API"

_KDL_CPU = int(abi.DLDeviceType.kDLCPU)

# The table's functions with the GIL kept across the call (they touch Python objects, which
# cross as PyObject* addresses from pycapi: on PyPy a ctypes py_object is none).
# (``from_py`` writes a ``DLManagedTensorVersioned*``, read here as an address)
_FromPy = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_ToPy = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_WorkStream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                ctypes.POINTER(ctypes.c_void_p))


def api_address(attribute: Any) -> int:
    """The table address a ``__dlpack_c_exchange_api__`` value holds (capsule or int).

    Anything else is upstream's ``ValueError("Expect a dlpack_exchange_api field")``.
    """
    if isinstance(attribute, int):
        return attribute
    if pycapi.capsule_is_valid(attribute, CAPSULE_NAME):
        return pycapi.capsule_get_pointer(attribute, CAPSULE_NAME) or 0
    raise ValueError("Expect a dlpack_exchange_api field")


def arguments_use_tables() -> bool:
    """Whether argument conversion looks for published tables (``SKIP_ENV`` is not "1")."""
    return os.environ.get(SKIP_ENV, "0") != "1"


def class_api_address(cls: type) -> Optional[int]:
    """The table ``cls`` publishes for its arguments, or None (raises for a malformed one)."""
    if not arguments_use_tables() or not hasattr(cls, ATTRIBUTE):
        return None
    return api_address(getattr(cls, ATTRIBUTE))


def tensor_class_api_address(tensor_cls: Any) -> int:
    """The table of ``convert_func``'s ``tensor_cls`` (``TypeError`` when it publishes none)."""
    if not hasattr(tensor_cls, ATTRIBUTE):
        raise TypeError(f"tensor_cls {tensor_cls!r} must expose __dlpack_c_exchange_api__")
    return api_address(getattr(tensor_cls, ATTRIBUTE))


class ExchangeAPI:
    """One framework's table, its entries callable from Python."""

    def __init__(self, address: int) -> None:
        self.address = address
        table = abi.DLPackExchangeAPI.from_address(address)
        entry = lambda name: ctypes.cast(getattr(table, name), ctypes.c_void_p).value  # noqa: E731
        self.allocator = entry("managed_tensor_allocator") or 0
        from_py, to_py = entry("managed_tensor_from_py_object_no_sync"), entry(
            "managed_tensor_to_py_object_no_sync")
        stream = entry("current_work_stream")
        self.from_py = _FromPy(from_py) if from_py else None
        self.to_py = _ToPy(to_py) if to_py else None
        self.work_stream = _WorkStream(stream) if stream else None

    def managed_from(self, value: Any) -> int:
        """An owning ``DLManagedTensorVersioned*`` (address) sharing ``value``'s memory."""
        out = ctypes.c_void_p()
        if self.from_py is None or self._call_from_py(value, out) != 0:
            pycapi.err_occurred()  # the framework's own exception, when it set one
            raise BufferError("the framework could not export the tensor through its DLPack "
                              "exchange API")
        return out.value

    def _call_from_py(self, value: Any, out: Any) -> int:
        address = pycapi.new_reference(value)
        try:
            return self.from_py(address, ctypes.byref(out))
        finally:
            pycapi.py_decref(address)

    def framework_tensor(self, managed: int) -> Any:
        """The framework tensor taking over the managed tensor at ``managed`` (raises on failure)."""
        out = ctypes.c_void_p()
        if self.to_py(managed, ctypes.byref(out)) != 0 or not out.value:
            pycapi.err_occurred()
            raise BufferError("the framework could not import the tensor through its DLPack "
                              "exchange API")
        return pycapi.object_from_new_reference(out.value)

    def current_stream(self, device_type: int, device_id: int) -> Optional[int]:
        """The framework's current stream for the device (0 for none), None if it cannot say."""
        out = ctypes.c_void_p()
        if self.work_stream(device_type, device_id, ctypes.byref(out)) != 0:
            return None
        return out.value or 0


_TABLES: Dict[int, ExchangeAPI] = {}


def table(address: int) -> ExchangeAPI:
    """The table at ``address`` (read once; tables live as long as the process)."""
    api = _TABLES.get(address)
    if api is None:
        api = _TABLES[address] = ExchangeAPI(address)
    return api


# ------------------------------------------------------------------ a call's context


def note_tensor_device(scope, api: ExchangeAPI, device: abi.DLDevice) -> None:
    """Records ``device`` and the framework's stream for it, if it is the call's first non-CPU one."""
    if device.device_type == _KDL_CPU or scope.device_type != -1 or api.work_stream is None:
        return
    stream = api.current_stream(device.device_type, device.device_id)
    if stream is not None:
        scope.device_type, scope.device_id, scope.stream = (
            device.device_type, device.device_id, stream)


def note_container(scope, address: int, container_handle: int) -> None:
    """A container remembering a table is an argument: the call takes up the table and device."""
    if not scope.exchange_api:
        scope.exchange_api = address
    api = table(address)
    if scope.device_type != -1 or api.work_stream is None:
        return

    container = Object._adopt(container_handle)
    LIB.TVMFFIObjectIncRef(container_handle)  # the temporary wrapper owns a reference of its own
    device = upcalls.get_global_func("ffi.ContainerFindFirstNonCPUDevice")(container)
    if device is not None and device.dlpack_device_type() != _KDL_CPU:
        note_tensor_device(scope, api, abi.DLDevice(device.dlpack_device_type(), device.index))


def tensor_argument(address: int, value: Any, scope) -> int:
    """A Tensor handle (owned by ``scope``) made from a framework tensor through its table."""
    api = table(address)
    scope.exchange_api = address
    managed = api.managed_from(value)
    note_tensor_device(scope, api, abi.DLManagedTensorVersioned.from_address(managed).dl_tensor.device)
    try:
        handle = upcalls.import_managed_tensor(managed, True, 0, False)
    except Exception:  # noqa: BLE001 - upstream reports every failure as this BufferError
        release_managed(managed)
        raise BufferError("Failed to convert DLManagedTensorVersioned to ffi.Tensor") from None
    scope.owned.append(handle)
    return handle


def release_managed(managed: int) -> None:
    """Calls a managed tensor's deleter (we own it and keep nothing of it)."""
    tensor = abi.DLManagedTensorVersioned.from_address(managed)
    if tensor.deleter:
        tensor.deleter(ctypes.pointer(tensor))


def framework_tensor_of(address: int, handle: int) -> Any:
    """The framework tensor sharing the Tensor at ``handle`` (borrowed), or None to keep ours.

    None when the table cannot make tensors or exporting fails; a failure of
    the framework's import itself releases what was exported and raises.
    """
    api = table(address)
    if api.to_py is None:
        return None
    out = ctypes.POINTER(abi.DLManagedTensorVersioned)()
    if LIB.TVMFFITensorToDLPackVersioned(handle, ctypes.byref(out)) != 0:
        upcalls.take_last_error()
        return None
    managed = ctypes.cast(out, ctypes.c_void_p).value
    try:
        return api.framework_tensor(managed)
    except BaseException:
        release_managed(managed)
        raise


class CallEnvironment:
    """A call's stream and tensor allocator, set for the call and restored after it."""

    def __init__(self, scope) -> None:
        self.scope = scope
        self.allocator = table(scope.exchange_api).allocator if scope.exchange_api else 0
        self.previous_stream = None
        self.previous_allocator = None

    def enter(self) -> None:
        """Makes the call's stream current and its table's allocator the DLPack allocator."""
        scope = self.scope
        if scope.device_type != -1:
            previous = ctypes.c_void_p()
            if LIB.TVMFFIEnvSetStream(scope.device_type, scope.device_id, scope.stream or None,
                                      ctypes.byref(previous)):
                _raise_last()
            self.previous_stream = previous.value or 0
        if self.allocator:
            previous = ctypes.c_void_p()
            if LIB.TVMFFIEnvSetDLPackManagedTensorAllocator(self.allocator, 0,
                                                            ctypes.byref(previous)):
                _raise_last()
            self.previous_allocator = previous.value or 0

    def leave(self) -> None:
        """Restores what :meth:`enter` replaced (upstream's texts when that fails)."""
        scope = self.scope
        if self.previous_stream is not None and self.previous_stream != (scope.stream or 0):
            if LIB.TVMFFIEnvSetStream(scope.device_type, scope.device_id,
                                      self.previous_stream or None, None):
                _drop_last()
                raise RuntimeError("Failed to recover stream")
        if self.previous_allocator is not None and self.previous_allocator != self.allocator:
            if LIB.TVMFFIEnvSetDLPackManagedTensorAllocator(self.previous_allocator or None, 0,
                                                            None):
                _drop_last()
                raise RuntimeError("Failed to recover DLPack managed tensor allocator")


def _raise_last() -> None:
    upcalls.raise_last_error()


def _drop_last() -> None:
    upcalls.take_last_error()


# ------------------------------------------------------------------ torch without a table


def torch_tensor_class() -> Optional[type]:
    """``torch.Tensor`` if torch is imported (a torch tensor exists only then), else None."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None) if torch is not None else None


@abi.DLPackManagedTensorToPyObjectNoSync
def _torch_tensor_through_capsule(managed, out):
    # The table upstream uses for torch builds that publish none: import the managed
    # tensor as our Tensor, then torch.from_dlpack of it.
    try:
        handle = upcalls.import_managed_tensor(ctypes.cast(managed, ctypes.c_void_p).value,
                                               True, 0, False)
        ours = wrap_owned(handle, abi.TVMFFITypeIndex.kTVMFFITensor)
        tensor = sys.modules["torch"].from_dlpack(ours)
        out[0] = pycapi.new_reference(tensor)  # the reference handed to the caller
        return 0
    except BaseException:  # noqa: BLE001 - a C callback must not raise; the caller keeps ours
        return -1


_TORCH_FALLBACK = abi.DLPackExchangeAPI()
_TORCH_FALLBACK.header.version.major = abi.DLPACK_MAJOR_VERSION
_TORCH_FALLBACK.header.version.minor = abi.DLPACK_MINOR_VERSION
_TORCH_FALLBACK.managed_tensor_to_py_object_no_sync = _torch_tensor_through_capsule

#: The address of that table (a torch tensor passed without a table of torch's own uses it).
TORCH_FALLBACK_ADDRESS = ctypes.addressof(_TORCH_FALLBACK)
