"""tvm_ffi_ref: the TVM FFI runtime and Python API in readable Python over ctypes.

``tvm_ffi_ref.abi`` mirrors the C headers; the rest of the package implements
the runtime behind ``libtvm_ffi.so`` and the Python API on top of it.
"""

from __future__ import annotations

import ctypes
from typing import Tuple

from tvm_ffi_common import __version__

from . import abi, runtime
from ._lib import LIB

#: How installing the reference runtime went: ``kTVMFFIRuntimeInstalled``, or
#: ``kTVMFFIRuntimeAlreadyInstalled`` when another runtime already serves the
#: process (this front end then shares it).
INSTALL_STATUS = abi.TVMFFIRuntimeInstallStatus(runtime.install())


def runtime_name():
    """The name of the runtime serving the C API in this process."""
    name = LIB.tvm_ffi_runtime_name()
    return None if name is None else name.decode()


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = abi.TVMFFIVersion()
    LIB.TVMFFIGetVersion(ctypes.byref(version))
    return (version.major, version.minor, version.patch)


__all__ = ["LIB", "abi", "abi_version", "runtime_name", "__version__"]
