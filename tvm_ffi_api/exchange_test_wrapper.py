"""``DLTensorTestWrapper``: a Tensor dressed as a framework tensor, for tests (upstream's
``core.DLTensorTestWrapper``).

The wrapper's class publishes a DLPack C exchange table made here with ctypes
callbacks: exporting the wrapped Tensor (``TVMFFITensorToDLPackVersioned``),
importing a managed tensor back as a Tensor, and reporting the environment's
own current stream for a device that is not the CPU. So the exchange API's
whole path (``dlpack_exchange.py``) can be exercised without any framework.
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from .tensor import tensor_class

_KDL_CPU = int(abi.DLDeviceType.kDLCPU)


@abi.DLPackManagedTensorFromPyObjectNoSync
def _export(py_object, out):
    try:
        wrapper = pycapi.object_at(py_object)
        return LIB.TVMFFITensorToDLPackVersioned(wrapper.tensor._handle, out)
    except BaseException:  # noqa: BLE001 - a C callback reports failure by its status
        return -1


@abi.DLPackManagedTensorToPyObjectNoSync
def _import(managed, out):
    try:

        handle = ctypes.c_void_p()
        if LIB.TVMFFITensorFromDLPackVersioned(managed, 0, 0, ctypes.byref(handle)) != 0:
            return -1
        tensor = tensor_class()._adopt(handle.value)
        out[0] = pycapi.new_reference(tensor)  # the reference handed to the caller
        return 0
    except BaseException:  # noqa: BLE001
        return -1


@abi.DLPackCurrentWorkStream
def _current_stream(device_type, device_id, out):
    if device_type != _KDL_CPU:
        out[0] = LIB.TVMFFIEnvGetStream(device_type, device_id)
    return 0


_TABLE = abi.DLPackExchangeAPI()
_TABLE.header.version.major = abi.DLPACK_MAJOR_VERSION
_TABLE.header.version.minor = abi.DLPACK_MINOR_VERSION
_TABLE.managed_tensor_from_py_object_no_sync = _export
_TABLE.managed_tensor_to_py_object_no_sync = _import
_TABLE.current_work_stream = _current_stream


class DLTensorTestWrapper:
    """A Tensor wrapped in a class that publishes a DLPack C exchange table (for tests)."""

    __dlpack_c_exchange_api__ = pycapi.capsule_new(
        ctypes.addressof(_TABLE), pycapi.static_name(b"dlpack_exchange_api"), None)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def __tvm_ffi_env_stream__(self) -> int:
        """The environment's current stream for the wrapped tensor's device."""
        device_type, device_id = self.tensor.__dlpack_device__()
        return LIB.TVMFFIEnvGetStream(device_type, device_id) or 0

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)
