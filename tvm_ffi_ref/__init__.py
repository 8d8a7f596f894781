"""tvm_ffi_ref: the TVM FFI runtime and Python API in readable Python over ctypes.

``import tvm_ffi_ref as tvm_ffi`` gives the API of upstream's ``tvm_ffi``:
load kernel libraries, call their functions with Python values, pass
callbacks, containers and NumPy arrays (zero copy), and get exceptions back.

Layers, bottom up: :mod:`tvm_ffi_ref.abi` mirrors the C headers;
:mod:`tvm_ffi_ref.runtime` implements the C API in Python and is installed
behind ``libtvm_ffi.so`` on import (unless another runtime already serves the
process, which this front end then shares); the remaining modules are the
Python API, which talks to whichever runtime is installed through the C ABI
alone.
"""

from __future__ import annotations

import ctypes
from typing import Optional, Tuple

from tvm_ffi_common import __version__

from . import abi, runtime
from ._lib import LIB

#: How installing the reference runtime went: ``kTVMFFIRuntimeInstalled``, or
#: ``kTVMFFIRuntimeAlreadyInstalled`` when another runtime already serves the
#: process (this front end then shares it).
INSTALL_STATUS = abi.TVMFFIRuntimeInstallStatus(runtime.install())

# Kernels reach Python's signal handling through the environment API, so that
# Ctrl-C during a long kernel call becomes KeyboardInterrupt, as upstream does.
for _name in ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release"):
    LIB.TVMFFIEnvRegisterCAPI(_name.encode(),
                              ctypes.cast(getattr(ctypes.pythonapi, _name), ctypes.c_void_p))
runtime.interrupts.install_sigint_handler()

from . import dtype as _dtype_module  # noqa: E402 - the API needs the runtime installed
from .container import Array, Dict, List, Map  # noqa: E402
from . import convert as _encoding  # noqa: E402,F401 - loaded before the next line binds
# the package name ``convert`` to the function (loading the module later would rebind it)
from .api_convert import convert  # noqa: E402
from .device import Device, DLDeviceType, device  # noqa: E402
from .dtype import dtype  # noqa: E402
from .error import register_error  # noqa: E402
from .function import (  # noqa: E402
    Error,
    Function,
    get_global_func,
    get_global_func_metadata,
    list_global_func_names,
    register_global_func,
    remove_global_func,
)
from .module import Module, load_module, system_lib  # noqa: E402
from .object import Object, ObjectConvertible, ObjectRValueRef  # noqa: E402
from .pyobject import OpaquePyObject  # noqa: E402
from .registry import register_object  # noqa: E402
from .stream import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream  # noqa: E402
from .string import Bytes, String  # noqa: E402
from .tensor import Shape, Tensor, from_dlpack  # noqa: E402

def __getattr__(name: str):
    # The dtype constants (``tvm_ffi_ref.float32``, ...) are made on first use.
    if name in _dtype_module.DTYPE_NAMES:
        value = globals()[name] = dtype(name)
        return value
    raise AttributeError(f"module 'tvm_ffi_ref' has no attribute '{name}'")


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = abi.TVMFFIVersion()
    LIB.TVMFFIGetVersion(ctypes.byref(version))
    return (version.major, version.minor, version.patch)


def runtime_name() -> Optional[str]:
    """The name of the runtime serving the C API in this process."""
    name = LIB.tvm_ffi_runtime_name()
    return None if name is None else name.decode()


__all__ = [
    "LIB", "abi", "abi_version", "runtime_name", "__version__",
    "Array", "Bytes", "DLDeviceType", "Device", "Dict", "Error", "Function", "List", "Map",
    "Module", "Object", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "Shape",
    "StreamContext", "String", "Tensor",
    "convert", "device", "dtype", "from_dlpack", "get_global_func", "get_global_func_metadata",
    "get_raw_stream", "list_global_func_names", "load_module", "register_error",
    "register_global_func", "register_object", "remove_global_func", "system_lib",
    "use_raw_stream", "use_torch_stream",
] + list(_dtype_module.DTYPE_NAMES)
